@testable import Cryptography
import Testing

/// The strict Ed25519 rules (security issue 41): what libcrypto alone accepts and Countersign refuses.
@Suite("Ed25519 strict keys and signatures")
struct Ed25519StrictTests {
    static func bytes(_ hex: String) -> [UInt8] { Hex.decode(hex)! }

    /// The 8 points of small order, canonically encoded: computed for this test (Python, RFC 8032's
    /// point arithmetic) as the points P on the curve with [8]P = identity, and the same list as in
    /// "Taming the many EdDSAs" (Chalkias, Garillot, Nikolaenko 2020). The identity is issue 41's
    /// `AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=`, the first of order 8 its
    /// `JuiVj8KyJ7BFw/SJ8u+Y8NXfrAXTxjM5sTgCiG1T/AU=`.
    static let smallOrder: [String] = [
        "0100000000000000000000000000000000000000000000000000000000000000",  // order 1: the identity (0, 1)
        "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",  // order 2: (0, -1)
        "0000000000000000000000000000000000000000000000000000000000000000",  // order 4: (sqrt(-1), 0), all zero
        "0000000000000000000000000000000000000000000000000000000000000080",  // order 4: (-sqrt(-1), 0)
        "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",  // order 8
        "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85",  // order 8
        "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",  // order 8
        "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa",  // order 8
    ]

    /// The other encodings of small-order points: x = 0 with the sign bit set, and y + p for y = 0 and 1.
    static let nonCanonicalSmallOrder: [String] = [
        "0100000000000000000000000000000000000000000000000000000000000080",  // the identity, sign bit set
        "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",  // (0, -1), sign bit set
        "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",  // y = p, that is 0
        "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",  // y = p, sign bit set
        "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",  // y = p + 1, that is 1
        "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",  // y = p + 1, sign bit set
    ]

    /// The refusal for `hex` as a public key, or nil when it is accepted.
    static func refusal(_ hex: String) -> String? {
        do {
            _ = try Ed25519PublicKey(rawRepresentation: bytes(hex))
            return nil
        } catch {
            #expect(error.operation == "Ed25519 public key")
            return error.message
        }
    }

    @Test("each of the 8 points of small order is refused as a public key, though libcrypto imports it", arguments: smallOrder)
    func smallOrderKeys(_ hex: String) throws {
        _ = try Ed25519PublicKey.evpKey(Self.bytes(hex))
        #expect(Self.refusal(hex)?.contains("small order") == true, "\(Self.refusal(hex) ?? "accepted")")
    }

    @Test("the non-canonical encodings of small-order points are refused as public keys", arguments: nonCanonicalSmallOrder)
    func nonCanonicalKeys(_ hex: String) {
        #expect(Self.refusal(hex)?.contains("not canonical") == true, "\(Self.refusal(hex) ?? "accepted")")
    }

    @Test("y at or above p is refused even where y - p would be a good point, and y off the curve is refused")
    func canonicalAndOnCurve() throws {
        // y = p + 3 and y = 2^255 - 1 = p + 18: 3 and 18 are y of points on the curve (of large order).
        for hex in ["f0ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
                    "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"] {
            _ = try Ed25519PublicKey.evpKey(Self.bytes(hex))
            #expect(Self.refusal(hex)?.contains("y is not below p") == true, "\(Self.refusal(hex) ?? "accepted")")
        }
        #expect(Self.refusal("0300000000000000000000000000000000000000000000000000000000000000") == nil)
        #expect(Self.refusal("1200000000000000000000000000000000000000000000000000000000000000") == nil)
        // y = 2 and y = 7: (y² − 1)/(d·y² + 1) is not a square mod p.
        for hex in ["0200000000000000000000000000000000000000000000000000000000000000",
                    "0700000000000000000000000000000000000000000000000000000000000080"] {
            _ = try Ed25519PublicKey.evpKey(Self.bytes(hex))
            #expect(Self.refusal(hex)?.contains("not on the curve") == true, "\(Self.refusal(hex) ?? "accepted")")
        }
    }

    @Test("the identity key's constant signature (R = identity, S = 0) verifies in libcrypto for any message, and is refused here")
    func identityForgery() {
        let identity = Self.bytes(Self.smallOrder[0])
        let forged = identity + [UInt8](repeating: 0, count: 32)
        for message in [[UInt8](), Array("seq 42 head abc".utf8), [UInt8](repeating: 0x5A, count: 1000)] {
            #expect(Ed25519PublicKey.libcryptoVerifies(publicKey: identity, signature: forged, for: message))
        }
        #expect(Self.refusal(Self.smallOrder[0]) != nil)
        #expect(!Ed25519PublicKey.isStrictlyFormed(signature: forged))
    }

    @Test("a signature whose R is of small order or not canonical is refused before libcrypto", arguments: smallOrder + nonCanonicalSmallOrder)
    func smallOrderR(_ hex: String) throws {
        let vector = RFC8032Vector.all[0]
        let honest = Self.bytes(vector.signature)
        #expect(Ed25519PublicKey.isStrictlyFormed(signature: honest))
        #expect(!Ed25519PublicKey.isStrictlyFormed(signature: Self.bytes(hex) + honest[32...]))
        #expect(!Ed25519PublicKey.isStrictlyFormed(signature: Self.bytes(hex) + [UInt8](repeating: 0, count: 32)))
    }

    @Test("an R off the curve is left to libcrypto, which refuses it: it compares R with the point it computes")
    func offCurveR() throws {
        let vector = RFC8032Vector.all[0]
        let key = try Ed25519PublicKey(rawRepresentation: Self.bytes(vector.publicKey))
        let offCurve = Self.bytes("0200000000000000000000000000000000000000000000000000000000000000") + Self.bytes(vector.signature)[32...]
        #expect(Ed25519PublicKey.isStrictlyFormed(signature: offCurve))
        #expect(!key.isValidSignature(offCurve, for: [UInt8]()))
    }

    @Test("d, written in decimal as RFC 8032 gives it, is -121665/121666 mod p")
    func curveConstant() throws {
        let field = try Ed25519PointCheck.Field("test")
        let product = try field.multiply(field.d, try field.number(littleEndian: [0x42, 0xDB, 0x01]))  // 121666
        #expect(field.isZero(try field.add(product, try field.number(littleEndian: [0x41, 0xDB, 0x01]))))  // + 121665
        #expect(!field.isZero(product))
    }

    @Test("S + L, the same signature modulo L, is refused; L - 1 is the largest S allowed")
    func nonCanonicalS() throws {
        let vector = RFC8032Vector.all[1]
        let key = try Ed25519PublicKey(rawRepresentation: Self.bytes(vector.publicKey))
        let message = Self.bytes(vector.message)
        let honest = Self.bytes(vector.signature)
        #expect(key.isValidSignature(honest, for: message))
        let stretched = Array(honest[..<32]) + Self.addingGroupOrder(to: Array(honest[32...]))
        #expect(stretched != honest)
        #expect(!Ed25519PointCheck.isCanonicalScalar(stretched[32...]))
        #expect(!key.isValidSignature(stretched, for: message))

        let order = Ed25519PointCheck.groupOrder
        // L = 2^252 + 27742317777372353535851937790883648493 (RFC 8032 §5.1), here as the bytes of L - 1 and L.
        #expect(Hex.encode(order) == "edd3f55c1a631258d69cf7a2def9de1400000000000000000000000000000010")
        #expect(Ed25519PointCheck.isCanonicalScalar([order[0] - 1] + order[1...]))
        #expect(!Ed25519PointCheck.isCanonicalScalar(order))
        #expect(Ed25519PointCheck.isCanonicalScalar([UInt8](repeating: 0, count: 32)))
        #expect(!Ed25519PointCheck.isCanonicalScalar([UInt8](repeating: 0xFF, count: 32)))
        #expect(!Ed25519PointCheck.isCanonicalScalar([UInt8](repeating: 0, count: 31)))
    }

    @Test("honest keys are accepted and verify: 200 fresh ones, and the RFC 8032 keys")
    func honestKeys() throws {
        for _ in 0..<200 {
            let key = try Ed25519PrivateKey.generate()
            let copy = try Ed25519PublicKey(rawRepresentation: key.publicKey.rawRepresentation)
            let message = Array("delivery D-1 body".utf8)
            let signature = try key.signature(for: message)
            #expect(copy.isValidSignature(signature, for: message))
            #expect(!copy.isValidSignature(signature, for: message + [0]))
        }
        for vector in RFC8032Vector.all { #expect(Self.refusal(vector.publicKey) == nil, "\(vector.name)") }
    }

    @Test("a key checked once is remembered only when it passed: a refused key is refused every time")
    func checkedKeysRememberOnlyPasses() throws {
        for _ in 0..<3 {
            for hex in Self.smallOrder + Self.nonCanonicalSmallOrder { #expect(Self.refusal(hex) != nil, "\(hex)") }
        }
        let key = try Ed25519PrivateKey.generate().publicKey.rawRepresentation
        for _ in 0..<3 { #expect(try Ed25519PublicKey(rawRepresentation: key).rawRepresentation == key) }
    }

    /// `scalar` + L, little-endian, in 32 bytes (for an S below L this fits: S + L < 2^254).
    static func addingGroupOrder(to scalar: [UInt8]) -> [UInt8] {
        var sum = [UInt8](repeating: 0, count: 32)
        var carry: UInt16 = 0
        for index in 0..<32 {
            let total = UInt16(scalar[index]) + UInt16(Ed25519PointCheck.groupOrder[index]) + carry
            sum[index] = UInt8(total & 0xFF)
            carry = total >> 8
        }
        return sum
    }
}
