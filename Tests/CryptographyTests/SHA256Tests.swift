import Cryptography
import Testing

@Suite("SHA-256 through libcrypto")
struct SHA256Tests {
    @Test func knownAnswers() {
        // FIPS 180-2 test vectors.
        #expect(SHA256.hex([UInt8]()) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256.hex(Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SHA256.hex(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    }

    @Test func incrementalEqualsOneShotWhateverTheChunking() {
        let message = (0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        for chunk in [1, 7, 64, 1000, 10_000] {
            var hasher = SHA256Hasher()
            var start = 0
            while start < message.count {
                let end = min(start + chunk, message.count)
                hasher.update(message[start..<end])
                start = end
            }
            #expect(hasher.finalize() == SHA256.hash(message))
        }
        #expect(SHA256.hash(message).count == 32)
    }

    @Test func nonContiguousCollectionsHashTheSame() {
        let bytes: [UInt8] = Array("proof of delivery".utf8)
        #expect(SHA256.hash(bytes.reversed().reversed()) == SHA256.hash(bytes))
    }
}
