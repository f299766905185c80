import CLibCrypto

/// The strict rules for Ed25519 inputs, checked before libcrypto sees them (security issue 41).
///
/// OpenSSL's raw import (`EVP_PKEY_new_raw_public_key`) takes any 32 bytes, and its verification is
/// the cofactorless equation [S]B = R + [k]A. A public key A of small order satisfies it with a
/// constant signature whatever the message: the identity key with R = identity and S = 0 "signs"
/// everything. So a point encoding (a public key A, or a signature's R) must be
///
/// - canonical: y < p = 2^255 − 19, and the sign bit clear when x = 0 (RFC 8032 §5.1.3 would decode
///   both, giving one point, and so one device, a second key);
/// - on the curve edwards25519: some x solves −x² + y² = 1 + d·x²·y² for its y;
/// - not of small order: not one of the 8 points P with [8]P = identity (the torsion points of
///   "Taming the many EdDSAs", Chalkias, Garillot and Nikolaenko 2020);
///
/// and a signature's S must be below L, the order of the base point B (RFC 8032 §5.1.7).
///
/// Mixed-order keys (a point of prime order plus one of the 8) are not refused: telling them apart
/// takes a scalar multiplication by L, and they forge nothing here. Every Countersign verifier
/// (this module, the bundle and database verifiers on top of it, the Python reference verifier) is
/// cofactorless, so a signature must meet [S]B = R + [k]A exactly, which for A = P + T still needs
/// the discrete log of P, the private key; the torsion part T only makes some of the holder's own
/// signatures fail.
enum Ed25519PointCheck {
    /// L = 2^252 + 27742317777372353535851937790883648493, the order of the base point, little-endian.
    static let groupOrder: [UInt8] = [
        0xED, 0xD3, 0xF5, 0x5C, 0x1A, 0x63, 0x12, 0x58, 0xD6, 0x9C, 0xF7, 0xA2, 0xDE, 0xF9, 0xDE, 0x14,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10,
    ]

    /// True when `scalar` (32 bytes, little-endian: a signature's S) is below L.
    static func isCanonicalScalar(_ scalar: some Collection<UInt8>) -> Bool {
        guard scalar.count == 32 else { return false }
        for (byte, limit) in zip(scalar.reversed(), groupOrder.reversed()) where byte != limit {
            return byte < limit
        }
        return false  // S = L
    }

    /// Throws, naming `operation` and saying which rule failed, unless `encoding` is the canonical
    /// 32-byte encoding of a point on edwards25519 that is not of small order. With `onCurve` false
    /// (a signature's R) the curve equation is not tested, which takes an exponentiation: libcrypto
    /// compares R byte for byte with the encoding of [S]B − [k]A it computes, a point on the curve,
    /// so an R off it never verifies.
    static func check(_ encoding: [UInt8], _ operation: String, onCurve: Bool = true) throws(CryptographyError) {
        func refuse(_ message: String) -> CryptographyError { CryptographyError(operation: operation, message: message) }
        guard encoding.count == 32 else { throw refuse("a point is 32 bytes, not \(encoding.count)") }
        let field = try Field(operation)
        var yBytes = encoding
        let signBit = yBytes[31] & 0x80 != 0
        yBytes[31] &= 0x7F
        let y = try field.number(littleEndian: yBytes)
        guard BN_cmp(y, field.p) < 0 else { throw refuse("the encoding is not canonical: y is not below p = 2^255 - 19") }

        let y2 = try field.multiply(y, y)
        let u = try field.subtract(y2, field.one)                           // y² − 1
        if onCurve {
            let v = try field.add(try field.multiply(field.d, y2), field.one)   // d·y² + 1, never 0: −1/d is not a square
            // x² = u / v has a solution exactly when u·v is a square or 0 (Euler's criterion).
            let euler = try field.power(try field.multiply(u, v), field.halfOfPMinusOne)
            guard field.isZero(euler) || BN_is_one(euler) == 1 else {
                throw refuse("the point is not on the curve edwards25519: no x solves -x^2 + y^2 = 1 + d x^2 y^2 for its y")
            }
        }
        // x = 0 exactly when u = 0, that is y = ±1; its sign bit must then be clear.
        if signBit && field.isZero(u) { throw refuse("the encoding is not canonical: x is 0 but the sign bit is set") }

        // The 8 points of small order: y = 1 (the identity), y = −1 (order 2), y = 0 (the two of order 4),
        // and the four of order 8, whose doubles have y = 0: x² = −y² in the curve equation, so d·y⁴ + 2·y² − 1 = 0.
        let y4 = try field.multiply(y2, y2)
        let octic = try field.subtract(try field.add(try field.multiply(field.d, y4), try field.add(y2, y2)), field.one)
        if field.isZero(y) || field.isZero(u) || field.isZero(octic) {
            throw refuse("the point has small order (it is one of the 8 points P with [8]P = identity), so it proves no signer")
        }
    }

    /// Arithmetic mod p with libcrypto's BIGNUM for one check, and the constants it needs.
    struct Field {
        let operation: String
        let frame: Frame
        /// p = 2^255 − 19, d = −121665/121666 mod p (RFC 8032 §5.1), (p − 1)/2 and 1.
        let p, d, halfOfPMinusOne, one: OpaquePointer

        init(_ operation: String) throws(CryptographyError) {
            guard let frame = Frame() else { throw .fromLibcrypto(operation) }
            func make(_ body: (OpaquePointer) -> Int32) throws(CryptographyError) -> OpaquePointer {
                guard let number = BN_CTX_get(frame.context), body(number) == 1 else { throw .fromLibcrypto(operation) }
                return number
            }
            let one = try make { BN_set_word($0, 1) }
            let nineteen = try make { BN_set_word($0, 19) }
            let twoTo255 = try make { BN_lshift($0, one, 255) }
            let p = try make { BN_sub($0, twoTo255, nineteen) }
            let pMinusOne = try make { BN_sub($0, p, one) }
            let half = try make { BN_rshift1($0, pMinusOne) }
            let d = try make { number in
                var target: OpaquePointer? = number
                return BN_dec2bn(&target, "37095705934669439343138083508754565189542113879843219016388785533085940283555") > 0 ? 1 : 0
            }
            (self.operation, self.frame, self.p, self.d, self.halfOfPMinusOne, self.one) = (operation, frame, p, d, half, one)
        }

        /// A new number of the frame, set by `body` (libcrypto's 1 for success).
        func result(_ body: (OpaquePointer, OpaquePointer) -> Int32) throws(CryptographyError) -> OpaquePointer {
            guard let number = BN_CTX_get(frame.context), body(number, frame.context) == 1 else { throw .fromLibcrypto(operation) }
            return number
        }

        /// The number whose little-endian bytes are `bytes`.
        func number(littleEndian bytes: [UInt8]) throws(CryptographyError) -> OpaquePointer {
            try result { number, _ in BN_lebin2bn(bytes, Int32(bytes.count), number) == nil ? 0 : 1 }
        }

        func isZero(_ a: OpaquePointer) -> Bool { BN_is_zero(a) == 1 }

        func add(_ a: OpaquePointer, _ b: OpaquePointer) throws(CryptographyError) -> OpaquePointer {
            try result { BN_mod_add($0, a, b, p, $1) }
        }

        func subtract(_ a: OpaquePointer, _ b: OpaquePointer) throws(CryptographyError) -> OpaquePointer {
            try result { BN_mod_sub($0, a, b, p, $1) }
        }

        func multiply(_ a: OpaquePointer, _ b: OpaquePointer) throws(CryptographyError) -> OpaquePointer {
            try result { BN_mod_mul($0, a, b, p, $1) }
        }

        func power(_ base: OpaquePointer, _ exponent: OpaquePointer) throws(CryptographyError) -> OpaquePointer {
            try result { BN_mod_exp($0, base, exponent, p, $1) }
        }
    }

    /// One `BN_CTX` with one open frame: every number of a ``Field`` is a temporary of it, so all of
    /// them are freed here, once, with the context (`BN_CTX_end`, `BN_CTX_free`).
    final class Frame {
        let context: OpaquePointer

        init?() {
            guard let context = BN_CTX_new() else { return nil }
            BN_CTX_start(context)
            self.context = context
        }

        deinit {
            BN_CTX_end(context)
            BN_CTX_free(context)
        }
    }
}
