import Foundation
import Testing
@testable import ProofStore

/// Audit details are written by hand for speed; the text must stay what Foundation's encoder
/// wrote for the same details (the chains hold both kinds of event, and readers decode either).
@Suite("Audit details JSON")
struct AuditDetailsJSONTests {
    static func foundation(_ details: [String: String]) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(details), as: UTF8.self)
    }

    @Test("every ASCII character, UTF-8 and the key order give the encoder's text")
    func sameTextAsTheEncoder() throws {
        let ascii = String(decoding: (0..<0x80).map { UInt8($0) }, as: UTF8.self)
        let cases: [[String: String]] = [
            [:],
            ["proof_id": "0b6f…", "points_sha256": "ab", "png_sha256": "cd"],
            ["k": ascii, "é/€": "😀\u{2028}\u{7f}", "": ""],
            ["b": "1", "a_2": "x", "a10": "y", "A": "z", "a_b": "", "a9": "", "_": "", "Z": "\"\\/"],
        ]
        for details in cases {
            #expect(AuditDetailsJSON.encode(details) == (try Self.foundation(details)))
            let decoded = try JSONDecoder().decode([String: String].self, from: Data(AuditDetailsJSON.encode(details).utf8))
            #expect(decoded == details)
        }
    }
}
