import Foundation
@testable import ProofStore
import Testing

/// The key-encryption keys of `DATA_KEY_FILE` and the per-delivery data keys they wrap: the file's
/// form, rotation by key id, and boxes that open only where they were sealed.
@Suite("Data keys")
struct DataKeyringTests {
    static let keyA = Data(repeating: 0xA1, count: 32).base64EncodedString()
    static let keyB = Data(repeating: 0xB2, count: 32).base64EncodedString()

    @Test("a key file: comments and blank lines skipped, the last key active; each malformed file is refused naming its line")
    func fileForm() throws {
        let keyring = try DataKeyring(fileText: "# keys\n\nold \(Self.keyA)  # retired\r\nnew\t\(Self.keyB)\n", path: "keys")
        #expect(keyring.activeKeyID == "new" && keyring.keyIDs == ["new", "old"])
        #expect(!keyring.description.contains(Self.keyA) && !keyring.description.contains(Self.keyB), "no key material in descriptions")
        let refused: [(String, String)] = [
            ("", "holds no key"), ("# only a comment\n", "holds no key"),
            ("k1\n", "line 1 is not"), ("k1 \(Self.keyA) extra\n", "line 1 is not"),
            ("\nk1 c2hvcnQ=\n", "line 2: the key is not 32 bytes"), ("k1 not-base64!\n", "line 1: the key is not 32 bytes"),
            ("k1 \(Self.keyA)\nk1 \(Self.keyB)\n", "appears twice"), ("bad/id \(Self.keyA)\n", "is not 1 to 32 of"),
            ("\(String(repeating: "x", count: 33)) \(Self.keyA)\n", "is not 1 to 32 of"),
        ]
        for (text, reason) in refused {
            #expect {
                try DataKeyring(fileText: text, path: "/etc/keys")
            } throws: { error in
                guard case .invalidKeyFile(let path, let said) = error as? SealingError else { return false }
                return path == "/etc/keys" && said.contains(reason)
            }
        }
    }

    @Test("rotation: the newest key wraps, every key unwraps what it wrapped; a key the file lacks is named")
    func rotation() throws {
        let before = try DataKeyring(fileText: "k1 \(Self.keyA)\n", path: "keys")
        let after = try DataKeyring(fileText: "k1 \(Self.keyA)\nk2 \(Self.keyB)\n", path: "keys")
        let dataKey = try DataKey.random()
        let old = try before.wrap(dataKey, for: "REF-1")
        let new = try after.wrap(dataKey, for: "REF-2")
        #expect(old.keyID == "k1" && new.keyID == "k2" && old.wrapped.count == 60)
        #expect(try after.unwrap(old.wrapped, keyID: "k1", for: "REF-1").bytes == dataKey.bytes)
        #expect(try after.unwrap(new.wrapped, keyID: "k2", for: "REF-2").bytes == dataKey.bytes)
        #expect(throws: SealingError.unknownKey("k2")) { try before.unwrap(new.wrapped, keyID: "k2", for: "REF-2") }
    }

    @Test("a wrapped key opens only for its delivery and key; a sealed field only for its proof and column")
    func bindings() throws {
        let keyring = try DataKeyring(fileText: "k1 \(Self.keyA)\n", path: "keys")
        let dataKey = try DataKey.random()
        let (keyID, wrapped) = try keyring.wrap(dataKey, for: "REF-1")
        #expect(throws: SealingError.self) { try keyring.unwrap(wrapped, keyID: keyID, for: "REF-2") }
        var flipped = wrapped
        flipped[20] ^= 1
        #expect(throws: SealingError.self) { try keyring.unwrap(flipped, keyID: keyID, for: "REF-1") }
        let proof = UUID(), other = UUID()
        let box = try dataKey.seal(Array("the point stream".utf8), .body, proof: proof)
        #expect(box.count == 16 + ProofSealer.overhead)
        #expect(try dataKey.open(box, .body, proof: proof) == Array("the point stream".utf8))
        #expect(throws: SealingError.self) { try dataKey.open(box, .ink, proof: proof) }
        #expect(throws: SealingError.self) { try dataKey.open(box, .body, proof: other) }
        #expect(throws: SealingError.self) { try DataKey.random().open(box, .body, proof: proof) }
        #expect(try dataKey.seal(Array("x".utf8), .png, proof: proof) != (try dataKey.seal(Array("x".utf8), .png, proof: proof)), "a fresh nonce each time")
        #expect("\(dataKey)" == "DataKey(redacted)")
    }

    @Test("DATA_KEY_GENERATE's file: made once (0600), read back the same; no source configured says how to configure one")
    func providers() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("datakeys-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let first = try DataKeyProvider(.generatedIn(directory: folder.path)).keys() as? DataKeyring
        let again = try DataKeyProvider(.generatedIn(directory: folder.path)).keys() as? DataKeyring
        #expect(first != nil && first?.fileText == again?.fileText)
        let path = folder.appendingPathComponent(DataKeyProvider.generatedFileName).path
        let mode = (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? 0
        #expect(mode == 0o600)
        #expect(throws: SealingError.notConfigured) { try DataKeyProvider(.unconfigured).keys() }
        #expect("\(SealingError.notConfigured)".contains("DATA_KEY_FILE") && "\(SealingError.notConfigured)".contains("DATA_KEY_GENERATE=true"))
        #expect {
            try DataKeyProvider(.file(folder.appendingPathComponent("missing").path)).keys()
        } throws: { error in
            if case .invalidKeyFile(_, let reason) = error as? SealingError { return reason.contains("does not exist") }
            return false
        }
    }
}
