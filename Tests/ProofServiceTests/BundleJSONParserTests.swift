import Foundation
import ProofStore
@testable import ProofService
import Testing

/// The verifier's own JSON reader (docs/decisions/0028-export-and-verify-throughput.md): it must
/// read what our writers write exactly as `JSONSerialization` does, and refuse — never crash on —
/// anything that is not strict JSON.
@Suite("Bundle JSON parser")
struct BundleJSONParserTests {
    /// `value` as Foundation reads the same text, for comparison.
    static func foundation(_ text: String) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
    }

    /// Whether our value and Foundation's agree (numbers by value).
    static func same(_ ours: BundleJSONValue, _ theirs: Any) -> Bool {
        switch ours {
        case .object(let members):
            guard let object = theirs as? [String: Any], object.count == members.count else { return false }
            return members.allSatisfy { name, value in object[name].map { same(value, $0) } ?? false }
        case .array(let elements):
            guard let array = theirs as? [Any], array.count == elements.count else { return false }
            return zip(elements, array).allSatisfy { same($0, $1) }
        case .string(let text): return (theirs as? String) == text
        case .number(let text): return (theirs as? NSNumber)?.doubleValue == Double(text)
        case .bool(let flag): return (theirs as? Bool) == flag
        case .null: return theirs is NSNull
        }
    }

    @Test("reads valid JSON as Foundation does", arguments: [
        #"{"a":1,"b":[true,false,null],"c":{"d":"e"}}"#,
        #"  {"x" : -0.5e-3 , "y": 12.0, "z": 1e-05, "w": 0}  "#,
        #"["\u00e9\ud83d\ude00\n\t\"\\\/", "plain é 😀", ""]"#,
        #"{"render_options":{},"flags":[],"n":null}"#,
        #"{"deep":[[[[{"k":[1,2,3]}]]]]}"#,
        "-12345678901234",
        #"{"details_text":"{\"ink_sha256\":\"8676a31c\",\"name\":\"Zoë 😀 \\u0041\"}","x":"\n\tend"}"#,
    ])
    func readsValid(_ text: String) throws {
        let value = try BundleJSONParser.parse(Array(text.utf8))
        #expect(Self.same(value, try Self.foundation(text)))
    }

    @Test("refuses what is not strict JSON, naming where", arguments: [
        "", " ", "{", "}", "[1,]", "{\"a\":1,}", "{\"a\" 1}", "{a:1}", "{\"a\":1}x", "[1 2]", "01", "1.", ".5", "-", "1e", "+1",
        "tru", "nul", "\"unterminated", "\"bad \\x escape\"", "\"\\u12\"", "\"\\ud800\"", "\"\\udc00 low alone\"",
        "\"raw\ncontrol\"", "{\"a\":1,\"a\":2}", "{\"a\":1,\"b\":2,\"a\":3}", "{\"b\":1,\"a\":2,\"b\":3}",
        "{\"a\":1,\"b\":2,\"c\":3,\"b\":4}", "NaN", "Infinity", "[\"\\", "{\"a\":[1,{\"b\":",
        // After an escape, runs of bytes are copied at once: a control character or the end must still be found.
        "\"escaped\\n then a raw\ncontrol\"", "\"escaped\\\" then \u{01}\"", "\"escaped\\t and never closed",
    ])
    func refusesMalformed(_ text: String) {
        #expect(throws: BundleJSONError.self) { try BundleJSONParser.parse(Array(text.utf8)) }
    }

    @Test("refuses invalid UTF-8 and nesting past the limit")
    func refusesBytes() {
        #expect(throws: BundleJSONError.self) { try BundleJSONParser.parse([0x22, 0xC3, 0x28, 0x22]) }
        #expect(throws: BundleJSONError.self) { try BundleJSONParser.parse([0x22, 0xFF, 0x22]) }
        #expect(throws: BundleJSONError.self) { try BundleJSONParser.parse([0x22, 0x5C, 0x6E, 0x61, 0xFF, 0x62, 0x22]) }
        let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        #expect(throws: BundleJSONError.self) { try BundleJSONParser.parse(Array(deep.utf8)) }
    }

    /// Strings are scanned eight bytes at a time: whatever must stop the scan (a quote, an escape,
    /// a control character, a non-ASCII byte) is found at every offset of a word.
    @Test("a string's stop bytes are found at every offset")
    func stopsAtEveryOffset() throws {
        for at in 0..<24 {
            func text(_ inserted: String) -> [UInt8] {
                var plain = Array(String(repeating: "0123456789abcdef~", count: 2).utf8)
                plain.replaceSubrange(at..<at + 1, with: Array(inserted.utf8))
                return Array("\"".utf8) + plain + Array("\"".utf8)
            }
            #expect(try BundleJSONParser.parse(text("é")) == .string(String(decoding: Array(text("é").dropFirst().dropLast()), as: UTF8.self)))
            for (escape, meaning) in [(#"\n"#, "\n"), (#"\""#, "\"")] {
                guard case .string(let value) = try BundleJSONParser.parse(text(escape)) else { Issue.record("not a string"); continue }
                #expect(value.count == 34 && value.contains(meaning))
            }
            #expect(throws: BundleJSONError.self) { try BundleJSONParser.parse(text("\u{01}")) }
            #expect(throws: BundleJSONError.self) { try BundleJSONParser.parse(text("\"")) }
            #expect(throws: BundleJSONError.self) { try BundleJSONParser.parse(text("\u{FF}") .map { $0 == 0xC3 ? 0xFF : $0 }) }
        }
    }

    /// Short decimals are read without text (an exact division): they must give what `Double(text)` gives.
    @Test("numbers read as Double(text) reads them")
    func doubles() throws {
        var generator = SystemRandomNumberGenerator()
        var texts = ["0", "-0", "0.1", "52.5201", "13.016249754817833", "999999999999999", "9999999999999999", "1e3", "-1.5E-7",
                     "0.0000000000000000000001", "0.00000000000000000000001", "123456789012345.6", "2.0", "200.0"]
        for _ in 0..<20_000 {
            let whole = String(UInt64.random(in: 0...999_999_999, using: &generator))
            let fraction = String(UInt64.random(in: 0...999_999_999_999, using: &generator))
            let digits = Int.random(in: 1...fraction.count, using: &generator)
            texts.append((Bool.random(using: &generator) ? "-" : "") + whole + "." + String(repeating: "0", count: Int.random(in: 0...12, using: &generator))
                         + fraction.prefix(digits))
        }
        for text in texts {
            let read = try BundleJSONParser.read(Array(text.utf8)) { (json) throws(BundleJSONError) in try json.readDouble("n") }
            let expected = try #require(Double(text))
            #expect(read.bitPattern == expected.bitPattern, "\(text)")
        }
    }

    @Test("typed access refuses mistyped members")
    func typedAccess() throws {
        let value = try BundleJSONParser.parse(Array(#"{"i":1.5,"e":1e3,"s":"x","n":null,"big":99999999999,"o":{}}"#.utf8))
        #expect(throws: BundleJSONError.self) { try value.int64("i") }
        #expect(throws: BundleJSONError.self) { try value.int64("e") }
        #expect(throws: BundleJSONError.self) { try value.int64("s") }
        #expect(throws: BundleJSONError.self) { try value.int32("big") }
        #expect(throws: BundleJSONError.self) { try value.string("missing") }
        #expect(throws: BundleJSONError.self) { try value.optionalString("o") }
        #expect(try value.optionalString("n") == nil)
        #expect(try value.optionalDouble("i") == 1.5)
        #expect(try value.double("e") == 1000)
    }

    /// Every writer path of ``CanonicalJSONWriter`` reads back to the same values.
    @Test("round trip of the canonical writer")
    func roundTrip() throws {
        var json = CanonicalJSONWriter()
        json.beginObject()
        json.key("s"); json.string("quote \" backslash \\ newline \n tab \t control \u{01} é 😀 /")
        json.key("n"); json.number(52.52)
        json.key("tiny"); json.number(1e-05)
        json.key("i"); json.int(Int64.min)
        json.key("b"); json.bool(true)
        json.key("null"); json.string(nil)
        json.key("a"); json.beginArray(); json.int(1); json.string("x"); json.endArray()
        json.endObject()
        let value = try BundleJSONParser.parse(json.bytes)
        #expect(try value.string("s") == "quote \" backslash \\ newline \n tab \t control \u{01} é 😀 /")
        #expect(try value.double("n") == 52.52)
        #expect(try value.double("tiny") == 1e-05)
        #expect(try value.int64("i") == Int64.min)
        #expect(value.member("b") == .bool(true))
        #expect(value.member("null") == .null)
        #expect(value.member("a") == .array([.number("1"), .string("x")]))
    }

    /// An audit segment line reads back to the event it was written from.
    @Test("audit event lines round trip")
    func eventLines() throws {
        let details = #"{"ink_sha256":"\#(String(repeating: "ab", count: 32))","proof_id":"0b7c5a4e-1111-4222-8333-944455556666"}"#
        for event in [
            AuditEvent(seq: 42, occurredAtMicros: 1_700_000_000_123_456, actorKeyID: UUID(), actorRole: "courier", action: "proof_recorded",
                       subject: "delivery:A-1", requestID: "req \"1\"", clientAddress: "10.0.0.1", userAgent: "ua/1 é",
                       detailsJSON: details, prevHash: [UInt8](repeating: 7, count: 32), hash: [UInt8](repeating: 9, count: 32), chain: 5,
                       encoding: .v2),
            AuditEvent(seq: 1, occurredAtMicros: 0, actorKeyID: nil, actorRole: nil, action: "key_created", subject: "key:x",
                       requestID: nil, clientAddress: nil, userAgent: nil, detailsJSON: "{}", prevHash: AuditEvent.genesisHash,
                       hash: [UInt8](repeating: 1, count: 32), chain: 0, encoding: .v2),
        ] {
            var line = BundleEventLine.encode(event)
            #expect(line.removeLast() == 0x0A)
            #expect(try BundleEventLine.parse(line).event == event)
        }
        let line = BundleEventLine.encode(AuditEvent(seq: 3, occurredAtMicros: 5, actorKeyID: nil, actorRole: nil, action: "proof_recorded",
                                                     subject: "delivery:B", requestID: nil, clientAddress: nil, userAgent: nil,
                                                     detailsJSON: details, prevHash: AuditEvent.genesisHash, hash: AuditEvent.genesisHash,
                                                     chain: 1, encoding: .v2)).dropLast()
        let parsed = try #require(try BundleEventLine.parse(line).event)
        let recorded = try #require(RecordedEventDigests.of(parsed))
        #expect(recorded.0 == UUID(uuidString: "0b7c5a4e-1111-4222-8333-944455556666"))
        #expect(recorded.1.ink == Digest32(hex: String(repeating: "ab", count: 32)))
        #expect(recorded.1.points == nil)
    }

    /// Hostile lines: each mutation of a valid line either reads or fails cleanly.
    @Test("mutated lines and documents never crash the readers")
    func mutations() throws {
        let event = AuditEvent(seq: 9, occurredAtMicros: 77, actorKeyID: nil, actorRole: "admin", action: "proof_recorded", subject: "delivery:Z",
                               requestID: "r", clientAddress: nil, userAgent: nil,
                               detailsJSON: #"{"proof_id":"0b7c5a4e-1111-4222-8333-944455556666"}"#, prevHash: AuditEvent.genesisHash,
                               hash: AuditEvent.genesisHash, chain: 2, encoding: .v2)
        let line = Array(BundleEventLine.encode(event).dropLast())
        var generator = SystemRandomNumberGenerator()
        let interesting: [UInt8] = [0x00, 0x0A, 0x22, 0x5C, 0x7B, 0x7D, 0x5B, 0x5D, 0x2C, 0x3A, 0x30, 0x2D, 0x65, 0x80, 0xC3, 0xFF]
        for _ in 0..<3000 {
            var mutated = line
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                let at = Int.random(in: 0..<mutated.count, using: &generator)
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: mutated[at] = interesting.randomElement(using: &generator)!
                case 1: mutated.remove(at: at)
                default: mutated.insert(interesting.randomElement(using: &generator)!, at: at)
                }
            }
            _ = try? BundleEventLine.parse(mutated).event.flatMap(RecordedEventDigests.of)
            _ = try? BundleProofReading.parse(mutated)
            _ = BundleProofCheck.Metadata.read(mutated)
        }
    }
}
