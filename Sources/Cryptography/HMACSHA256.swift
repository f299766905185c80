import CLibCrypto

/// HMAC-SHA256 (RFC 2104) through libcrypto's `EVP_DigestSign` with an `EVP_PKEY_HMAC` key — the
/// non-deprecated path in OpenSSL 3 that needs no `OSSL_PARAM` plumbing. Webhook signatures
/// (Standard Webhooks `v1`) are made with it.
public enum HMACSHA256 {
    /// Tag length in bytes.
    public static let byteCount = 32

    /// The tag of `message` under `key`. A key of any length is accepted (RFC 2104 hashes long keys).
    public static func authenticationCode(for message: some Collection<UInt8>, key: [UInt8]) throws(CryptographyError) -> [UInt8] {
        let operation = "computing an HMAC-SHA256"
        // An empty key is legal HMAC, but EVP_PKEY_new_raw_private_key refuses a NULL pointer: pad to one zero byte,
        // which RFC 2104 zero-pads to the same block.
        let keyBytes = key.isEmpty ? [0] : key
        guard let rawKey = keyBytes.withUnsafeBufferPointer({ EVP_PKEY_new_raw_private_key(EVP_PKEY_HMAC, nil, $0.baseAddress, $0.count) })
        else { throw .fromLibcrypto(operation) }
        let owned = OwnedKey(rawKey)
        guard let context = EVP_MD_CTX_new() else { throw .fromLibcrypto(operation) }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, owned.pointer) == 1 else { throw .fromLibcrypto(operation) }
        let message = Array(message)
        var tag = [UInt8](repeating: 0, count: byteCount)
        var length = byteCount
        let signed = message.withUnsafeBufferPointer { input in
            tag.withUnsafeMutableBufferPointer { output in
                EVP_DigestSign(context, output.baseAddress, &length, input.baseAddress, input.count)
            }
        }
        guard signed == 1, length == byteCount else { throw .fromLibcrypto(operation) }
        return tag
    }

    /// Whether `tag` is the tag of `message` under `key`, compared in constant time.
    public static func isValid(_ tag: [UInt8], for message: some Collection<UInt8>, key: [UInt8]) throws(CryptographyError) -> Bool {
        let expected = try authenticationCode(for: message, key: key)
        return ConstantTime.equal(expected, tag)
    }
}

/// Comparisons whose time does not depend on where the inputs differ.
public enum ConstantTime {
    /// Whether `a` and `b` are equal; lengths are not secret.
    public static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }
}
