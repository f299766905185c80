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

/// The hand-written reader of details must read what Foundation's decoder reads, refuse what it
/// refuses, and also refuse a member name given twice and a trailing comma (which Foundation takes).
@Suite("Audit details JSON, reading")
struct AuditDetailsJSONReadingTests {
    static func foundation(_ text: String) -> [String: String]? {
        try? JSONDecoder().decode([String: String].self, from: Data(text.utf8))
    }

    @Test("written details, escapes, surrogate pairs and spacing read back as Foundation reads them")
    func readsWhatFoundationReads() throws {
        let ascii = String(decoding: (0..<0x80).map { UInt8($0) }, as: UTF8.self)
        let written: [[String: String]] = [
            [:], ["k": ascii, "é/€": "😀\u{2028}\u{7f}", "": ""],
            ["proof_id": "0b6f", "png_sha256": String(repeating: "ab", count: 32)],
        ]
        let texts = written.map(AuditDetailsJSON.encode) + [
            #" { "a" : "\u00e9\ud83d\ude00\/\b\f\n\r\t\"\\" , "b":"" } "#,
            #"{"\u0000":"x\u001F"}"#,
            "{\"a\":\"\u{10FFFF}\"}",
        ]
        for text in texts {
            let foundation = try #require(Self.foundation(text), "\(text)")
            #expect(AuditDetailsJSON.decode(text) == foundation, "\(text)")
        }
    }

    @Test("not an object of strings is refused, as Foundation refuses it; a repeated name too")
    func refuses() {
        let refusedByBoth = [
            "", "[]", "\"a\"", "{", "{\"a\"}", "{\"a\":1}", "{\"a\":null}", "{\"a\":{\"b\":\"c\"}}",
            "{\"a\":\"b\"} x", "{'a':'b'}", "{\"a\":\"\u{01}\"}", #"{"a":"\x"}"#, #"{"a":"\u12"}"#, #"{"a":"\ud800"}"#,
            #"{"a":"\udc00"}"#, #"{"a":"\ud800\u0041"}"#, "{\"a\":\"b\"", "{\"a\" \"b\"}",
        ]
        for text in refusedByBoth {
            #expect(Self.foundation(text) == nil, "Foundation took \(text)")
            #expect(AuditDetailsJSON.decode(text) == nil, "\(text)")
        }
        // Stricter than Foundation, which takes both: a repeated name, and a trailing comma (not RFC 8259).
        #expect(AuditDetailsJSON.decode(#"{"png_sha256":"aa","png_sha256":"bb"}"#) == nil)
        #expect(AuditDetailsJSON.decode(#"{"a":"b",}"#) == nil)
        #expect(AuditEvent(seq: 1, occurredAtMicros: 0, actorKeyID: nil, actorRole: nil, action: "proof_recorded", subject: "delivery:R",
                           requestID: nil, clientAddress: nil, userAgent: nil, detailsJSON: #"{"a":"1","a":"2"}"#,
                           prevHash: [], hash: []).details.isEmpty)
    }

    @Test("thousands of mutated details texts: whatever is read is what Foundation reads, whatever Foundation refuses is refused")
    func mutations() {
        var generator = SystemRandomNumberGenerator()
        let base = Array(AuditDetailsJSON.encode(["proof_id": "0b6f-é", "note": "a\"b\\c\nd😀", "x": ""]).utf8)
        let alphabet = Array(#"{}[]:,"\/ubfnrt0123456789aAdDeE éx"#.utf8) + [0x00, 0x1F, 0x7F]
        var read = 0
        for _ in 0..<5_000 {
            var bytes = base
            for _ in 0..<Int.random(in: 1...3, using: &generator) {
                let at = Int.random(in: 0..<bytes.count, using: &generator)
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: bytes[at] = alphabet.randomElement(using: &generator)!
                case 1: bytes.insert(alphabet.randomElement(using: &generator)!, at: at)
                default: if bytes.count > 1 { bytes.remove(at: at) }
                }
            }
            let text = String(decoding: bytes, as: UTF8.self)
            let ours = AuditDetailsJSON.decode(text), theirs = Self.foundation(text)
            if let ours { read += 1; #expect(ours == theirs, "\(text)") }
            if theirs == nil { #expect(ours == nil, "\(text)") }
        }
        #expect(read > 100, "mutations that stay valid are read (\(read) of 5,000)")
    }

    @Test("a string of 100,000 escapes reads whole")
    func manyEscapes() {
        let text = "{\"a\":\"" + String(repeating: #"\n"#, count: 100_000) + "\"}"
        #expect(AuditDetailsJSON.decode(text)?["a"]?.utf8.count == 100_000)
    }
}
