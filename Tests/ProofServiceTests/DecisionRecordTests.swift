import Foundation
import Testing

/// docs/decisions: every record opens with a one-sentence `Status:` line (issue 42); what changed
/// since goes in its body or in git, not in the status.
@Suite("Decision records")
struct DecisionRecordTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs/decisions")

    @Test("every decision record has a Status line of one sentence, at most 300 characters")
    func statusLines() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: Self.folder.path).filter { $0.first?.isNumber == true }.sorted()
        #expect(names.count >= 40)
        for name in names {
            let text = try String(contentsOf: Self.folder.appendingPathComponent(name), encoding: .utf8)
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            guard let start = lines.firstIndex(where: { $0.hasPrefix("Status: ") }) else {
                Issue.record("\(name) has no Status line")
                continue
            }
            let status = lines[start...].prefix { !$0.isEmpty }.joined(separator: " ")
            #expect(status.count <= 300, "\(name): \(status.count) characters")
            // One sentence: no full stop followed by a new sentence (". " and a capital letter).
            let sentences = status.matches(of: /\. [A-Z]/).count
            #expect(sentences == 0, "\(name): \(sentences + 1) sentences in its status")
        }
    }
}
