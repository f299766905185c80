import Foundation
import ProofStore
@testable import ProofService
import SignatureRender
import Testing

/// The byte-level readers and writers the export and the verifier use instead of Foundation's
/// (digests as hex, UUIDs as text, JSON strings, checksum lines): each must give exactly what the
/// slower general code gives, and refuse what it refuses.
@Suite("Bundle text helpers")
struct BundleTextTests {
    static let ids = [UUID(), UUID(), UUID(uuidString: "00000000-0000-0000-0000-000000000000")!,
                      UUID(uuidString: "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF")!, UUID(uuidString: "0A1B2C3D-4E5F-6071-8293-A4B5C6D7E8F9")!]

    @Test("UUID text is read as UUID(uuidString:) reads it, in either case")
    func uuidText() {
        for id in Self.ids {
            #expect(id.lowercasedText == id.uuidString.lowercased())
            #expect(UUID(text: id.uuidString) == id)
            #expect(UUID(text: id.lowercasedText) == id)
        }
        let refused = ["", "0a1b2c3d4e5f60718293a4b5c6d7e8f9", "0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f", "0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f90",
                       "0a1b2c3d_4e5f-6071-8293-a4b5c6d7e8f9", "0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8fg",
                       "0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f\u{e9}", "{0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9}", "0a1b2c3-d4e5f-6071-8293-a4b5c6d7e8f9"]
        for text in refused {
            #expect(UUID(text: text) == nil, "\(text)")
            #expect(UUID(uuidString: text) == nil, "Foundation accepts \(text)")
        }
        // Stricter than Foundation, whose `sscanf` lets a digit pair start with a space.
        #expect(UUID(text: " a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9") == nil)
    }

    @Test("a digest reads back from its hex in either case, and anything else is refused")
    func digestHex() {
        for seed in 0..<50 {
            let bytes = (0..<32).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ seed &* 101) }
            let digest = Digest32(bytes)
            #expect(digest.description == bytes.hexString)
            #expect(Digest32(hex: digest.description) == digest)
            #expect(Digest32(hex: digest.description.uppercased()) == digest)
            #expect(Digest32(hexDigits: Array(digest.description.utf8)[...]) == digest)
            #expect(digest.bytes == bytes)
        }
        let good = String(repeating: "ab", count: 32)
        for bad in ["", String(good.dropLast()), good + "0", String(good.dropLast()) + "g", String(good.dropLast()) + " ",
                    "\u{e9}" + String(good.dropFirst(2))] {
            #expect(Digest32(hex: bad) == nil, "\(bad)")
        }
    }

    @Test("JSON strings are copied whole when nothing needs escaping, escaped as before otherwise")
    func jsonStrings() throws {
        for text in ["plain", "", "caf\u{e9} \u{1F69A} /slash", "quote \" backslash \\ tab \t nl \n cr \r", "bell \u{07} del \u{7F}", "\u{0}"] {
            var writer = CanonicalJSONWriter()
            writer.string(text)
            let parsed = try BundleJSONParser.parse(writer.bytes)
            #expect(parsed == .string(text), "\(text)")
            #expect(try JSONSerialization.jsonObject(with: Data(writer.bytes), options: [.fragmentsAllowed]) as? String == text)
        }
        var writer = CanonicalJSONWriter()
        writer.string("a\"b\u{1}")
        #expect(String(decoding: writer.bytes, as: UTF8.self) == #""a\"b\u0001""#)
    }

    @Test("a checksums file is taken as exact only when it lists the files read, in order, with their digests")
    func exactChecksumLines() {
        let files: [(name: String, sha256: Digest32)] = (0..<3).map { ("deliveries/D-\($0)/ink", Digest32.of([UInt8($0)])) }
        func lines(_ files: [(name: String, sha256: Digest32)]) -> [UInt8] {
            Array(files.map { "\($0.sha256)  \($0.name)\n" }.joined().utf8)
        }
        #expect(BundleProofScan.listsExactly(lines(files), files))
        #expect(BundleProofScan.listsExactly([], []))
        #expect(!BundleProofScan.listsExactly(lines(files), Array(files.dropLast())))
        #expect(!BundleProofScan.listsExactly(lines(Array(files.dropLast())), files))
        #expect(!BundleProofScan.listsExactly(lines(files.reversed()), files))
        var changed = files
        changed[1].sha256 = Digest32.of([9])
        #expect(!BundleProofScan.listsExactly(lines(changed), files))
        changed = files
        changed[2].name += "x"
        #expect(!BundleProofScan.listsExactly(lines(changed), files))
        #expect(!BundleProofScan.listsExactly(Array(lines(files).dropLast()), files))
        #expect(!BundleProofScan.listsExactly(lines(files) + [0x0A], files))
        #expect(!BundleProofScan.listsExactly(Array(String(decoding: lines(files), as: UTF8.self).replacingOccurrences(of: "  ", with: " *").utf8), files))
    }

    /// A reference's folder name: `:` (not allowed in Windows file names) escaped, anything else as is.
    @Test("a reference's path component escapes only the colon", arguments: [
        ("D-1", "D-1"), ("A:B:C", "A%3AB%3AC"), (":", "%3A"), ("x.y_z-0", "x.y_z-0"), ("", ""),
    ])
    func pathComponent(_ reference: String, _ expected: String) {
        #expect(ExportManifest.pathComponent(reference) == expected)
        #expect(ExportManifest.pathComponent(reference) == reference.replacingOccurrences(of: ":", with: "%3A"))
    }
}
