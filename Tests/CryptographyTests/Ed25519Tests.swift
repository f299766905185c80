import Cryptography
import Testing

@Suite("Ed25519 through libcrypto")
struct Ed25519Tests {
    static func bytes(_ hex: String) -> [UInt8] { Hex.decode(hex)! }

    // RFC 8032 section 7.1, TEST 1 (empty message) and TEST 2 (one byte).
    @Test("RFC 8032 test vectors: public key and signatures")
    func rfc8032() throws {
        let key = try Ed25519PrivateKey(rawRepresentation: Self.bytes("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60"))
        #expect(Hex.encode(key.publicKey.rawRepresentation) == "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a")
        let empty = try key.signature(for: [UInt8]())
        #expect(Hex.encode(empty) == "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b")
        #expect(key.publicKey.isValidSignature(empty, for: [UInt8]()))

        let second = try Ed25519PrivateKey(rawRepresentation: Self.bytes("4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb"))
        let signature = try second.signature(for: [0x72])
        #expect(Hex.encode(signature) == "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00")
        #expect(second.publicKey.isValidSignature(signature, for: [0x72]))
    }

    @Test("the key id is ed25519: and the first 16 hex digits of SHA-256 of the raw public key")
    func keyID() throws {
        let key = try Ed25519PublicKey(rawRepresentation: Self.bytes("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"))
        // python3 -c "import hashlib; print(hashlib.sha256(bytes.fromhex('d75a…511a')).hexdigest()[:16])"
        #expect(key.keyID == "ed25519:21fe31dfa154a261")
        #expect(Ed25519PublicKey.keyID(rawRepresentation: key.rawRepresentation) == key.keyID)
    }

    @Test("a changed message, a changed signature or another key does not verify")
    func rejects() throws {
        let key = try Ed25519PrivateKey.generate()
        let message = Array("seq 42 head abc".utf8)
        var signature = try key.signature(for: message)
        #expect(key.publicKey.isValidSignature(signature, for: message))
        #expect(!key.publicKey.isValidSignature(signature, for: Array("seq 43 head abc".utf8)))
        #expect(!(try Ed25519PrivateKey.generate()).publicKey.isValidSignature(signature, for: message))
        signature[10] ^= 0x01
        #expect(!key.publicKey.isValidSignature(signature, for: message))
        #expect(!key.publicKey.isValidSignature([1, 2, 3], for: message))
    }

    @Test("PEM: RFC 8410's example key reads, and both halves round-trip")
    func pem() throws {
        let rfc8410 = "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEINTuctv5E1hK1bbY8fdp+K06/nwoy/HU++CXqI9EdVhC\n-----END PRIVATE KEY-----\n"
        let key = try Ed25519PrivateKey(pemRepresentation: rfc8410)
        #expect(Hex.encode(key.publicKey.rawRepresentation) == "19bf44096984cdfe8541bac167dc3b96c85086aa30b6b6cb0c5c38ad703166e1")
        #expect(try key.pemRepresentation() == rfc8410)
        let publicPEM = try key.publicKey.pemRepresentation()
        #expect(publicPEM.hasPrefix("-----BEGIN PUBLIC KEY-----\n"))
        #expect(try Ed25519PublicKey(pemRepresentation: publicPEM) == key.publicKey)
    }

    @Test("malformed keys are typed errors with libcrypto's message")
    func errors() {
        #expect(throws: CryptographyError.self) { try Ed25519PrivateKey(rawRepresentation: [1, 2, 3]) }
        #expect(throws: CryptographyError.self) { try Ed25519PublicKey(rawRepresentation: [UInt8](repeating: 0, count: 31)) }
        do {
            _ = try Ed25519PrivateKey(pemRepresentation: "-----BEGIN PRIVATE KEY-----\nnot base64\n-----END PRIVATE KEY-----\n")
            Issue.record("a broken PEM was accepted")
        } catch {
            #expect(!error.message.isEmpty)
            #expect(error.operation.contains("PEM"))
        }
    }
}
