import Cryptography
import Testing

@Suite("Ed25519 through libcrypto")
struct Ed25519Tests {
    static func bytes(_ hex: String) -> [UInt8] { Hex.decode(hex)! }

    @Test("RFC 8032 section 7.1: the seed gives the public key, signing gives the signature, and it verifies",
          arguments: RFC8032Vector.all)
    func rfc8032(_ vector: RFC8032Vector) throws {
        let key = try Ed25519PrivateKey(rawRepresentation: Self.bytes(vector.seed))
        let message = Self.bytes(vector.message)
        #expect(vector.name != "TEST 1024" || message.count == 1023)
        #expect(Hex.encode(key.publicKey.rawRepresentation) == vector.publicKey)
        #expect(Hex.encode(try key.signature(for: message)) == vector.signature)
        let published = try Ed25519PublicKey(rawRepresentation: Self.bytes(vector.publicKey))
        #expect(published.isValidSignature(Self.bytes(vector.signature), for: message))
        #expect(!published.isValidSignature(Self.bytes(vector.signature), for: message + [0]))
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
