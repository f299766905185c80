import Cryptography
import Testing

@Suite("HMAC-SHA256 and AES-256-GCM through libcrypto")
struct HMACSHA256Tests {
    @Test("RFC 4231 test cases 1, 2 and 6 (a key longer than the block)")
    func rfc4231() throws {
        let one = try HMACSHA256.authenticationCode(for: Array("Hi There".utf8), key: [UInt8](repeating: 0x0B, count: 20))
        #expect(Hex.encode(one) == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
        let two = try HMACSHA256.authenticationCode(for: Array("what do ya want for nothing?".utf8), key: Array("Jefe".utf8))
        #expect(Hex.encode(two) == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        let six = try HMACSHA256.authenticationCode(for: Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
                                                    key: [UInt8](repeating: 0xAA, count: 131))
        #expect(Hex.encode(six) == "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
        #expect(try HMACSHA256.isValid(two, for: Array("what do ya want for nothing?".utf8), key: Array("Jefe".utf8)))
        #expect(try !HMACSHA256.isValid(one, for: Array("what do ya want for nothing?".utf8), key: Array("Jefe".utf8)))
    }

    @Test("a sealed box opens with its key and associated data only, and any altered byte is refused")
    func sealAndOpen() throws {
        let key = try AESGCM.randomBytes(32), secret = Array("whsec key bytes".utf8), binding = Array("endpoint-1".utf8)
        let box = try AESGCM.seal(secret, key: key, associatedData: binding)
        #expect(box.count == 12 + secret.count + 16)
        #expect(try AESGCM.open(box, key: key, associatedData: binding) == secret)
        #expect(try AESGCM.seal(secret, key: key, associatedData: binding) != box)  // a fresh nonce every time
        #expect(throws: CryptographyError.self) { try AESGCM.open(box, key: key, associatedData: Array("endpoint-2".utf8)) }
        #expect(throws: CryptographyError.self) { try AESGCM.open(box, key: try AESGCM.randomBytes(32), associatedData: binding) }
        for index in [0, 12, box.count - 1] {
            var altered = box
            altered[index] ^= 1
            #expect(throws: CryptographyError.self) { try AESGCM.open(altered, key: key, associatedData: binding) }
        }
        #expect(throws: CryptographyError.self) { try AESGCM.open(Array(box.prefix(20)), key: key) }
        #expect(throws: CryptographyError.self) { try AESGCM.seal(secret, key: [1, 2, 3]) }
    }
}
