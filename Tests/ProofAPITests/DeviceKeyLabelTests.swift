import Foundation
import HummingbirdTesting
import Testing
import TestSupport

/// Issue 41, finding 7: a device key's label follows the text rules of every other free-text
/// field, counted in code points as the database counts them.
@Suite("Device key labels", .needsDatabase)
struct DeviceKeyLabelTests {
    @Test("a label with a bidi override, a C1 control or more than 200 code points is 422 invalid_label, never a 500")
    func labelsFollowTheTextRules() async throws {
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                let combining = "e" + String(repeating: "\u{301}", count: 1_900)  // one grapheme, 1,901 code points
                for label in ["van \u{202E}21", "van\u{85}12", "\u{9B}x", combining, String(repeating: "é", count: 201)] {
                    let (_, refused) = try await DeviceKeyTests.register(client, harness, label: label)
                    #expect(refused.status == .unprocessableContent, "\(label.unicodeScalars.count) code points")
                    #expect(refused.problemCode == "validation_failed" || refused.problemCode == "invalid_label", "\(refused.problemCode ?? "")")
                    let fields = ((refused.json["errors"] as? [[String: Any]]) ?? []).compactMap { $0["code"] as? String }
                    #expect(fields == ["invalid_label"], "\(fields)")
                }
                let (_, accepted) = try await DeviceKeyTests.register(client, harness, label: String(repeating: "é", count: 200))
                #expect(accepted.status == .created)
                let stored = try await harness.database.query("SELECT count(*)::int8 AS n FROM device_keys").decode(Int64.self, row: 0, column: "n")
                #expect(stored == 1, "only the valid label was stored")
            }
        }
    }
}
