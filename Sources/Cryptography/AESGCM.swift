import CLibCrypto

/// AES-256-GCM through libcrypto, for small secrets kept at rest (webhook signing secrets).
/// A sealed box is `nonce (12) ‖ ciphertext ‖ tag (16)`; `associatedData` binds it to its owner
/// (a box copied to another row fails to open).
public enum AESGCM {
    /// Key length in bytes (AES-256).
    public static let keyByteCount = 32
    static let nonceByteCount = 12
    static let tagByteCount = 16

    /// Encrypts `plaintext` under `key` with a fresh random nonce.
    public static func seal(_ plaintext: [UInt8], key: [UInt8], associatedData: [UInt8] = []) throws(CryptographyError) -> [UInt8] {
        let operation = "sealing with AES-256-GCM"
        guard key.count == keyByteCount else { throw CryptographyError(operation: operation, message: "the key must be 32 bytes") }
        var nonce = [UInt8](repeating: 0, count: nonceByteCount)
        guard RAND_bytes(&nonce, Int32(nonceByteCount)) == 1 else { throw .fromLibcrypto(operation) }
        let cipher = try CipherContext(operation)
        guard EVP_EncryptInit_ex(cipher.pointer, fetchedAES256GCM ?? EVP_aes_256_gcm(), nil, key, nonce) == 1 else {
            throw .fromLibcrypto(operation)
        }
        var length: Int32 = 0
        if !associatedData.isEmpty {
            guard EVP_EncryptUpdate(cipher.pointer, nil, &length, associatedData, Int32(associatedData.count)) == 1 else {
                throw .fromLibcrypto(operation)
            }
        }
        var ciphertext = [UInt8](repeating: 0, count: plaintext.count + 16)
        guard EVP_EncryptUpdate(cipher.pointer, &ciphertext, &length, plaintext, Int32(plaintext.count)) == 1 else {
            throw .fromLibcrypto(operation)
        }
        var total = Int(length)
        let finished = ciphertext.withUnsafeMutableBufferPointer { EVP_EncryptFinal_ex(cipher.pointer, $0.baseAddress! + total, &length) }
        guard finished == 1 else { throw .fromLibcrypto(operation) }
        total += Int(length)
        var tag = [UInt8](repeating: 0, count: tagByteCount)
        guard EVP_CIPHER_CTX_ctrl(cipher.pointer, countersign_gcm_get_tag, Int32(tagByteCount), &tag) == 1 else {
            throw .fromLibcrypto(operation)
        }
        return nonce + ciphertext.prefix(total) + tag
    }

    /// Decrypts a box made by ``seal(_:key:associatedData:)``; throws when it was altered, or sealed
    /// under another key or associated data.
    public static func open(_ box: [UInt8], key: [UInt8], associatedData: [UInt8] = []) throws(CryptographyError) -> [UInt8] {
        let operation = "opening with AES-256-GCM"
        guard key.count == keyByteCount else { throw CryptographyError(operation: operation, message: "the key must be 32 bytes") }
        guard box.count >= nonceByteCount + tagByteCount else { throw CryptographyError(operation: operation, message: "the box is too short") }
        let nonce = Array(box.prefix(nonceByteCount))
        var tag = Array(box.suffix(tagByteCount))
        let ciphertext = Array(box.dropFirst(nonceByteCount).dropLast(tagByteCount))
        let cipher = try CipherContext(operation)
        guard EVP_DecryptInit_ex(cipher.pointer, fetchedAES256GCM ?? EVP_aes_256_gcm(), nil, key, nonce) == 1 else {
            throw .fromLibcrypto(operation)
        }
        var length: Int32 = 0
        if !associatedData.isEmpty {
            guard EVP_DecryptUpdate(cipher.pointer, nil, &length, associatedData, Int32(associatedData.count)) == 1 else {
                throw .fromLibcrypto(operation)
            }
        }
        var plaintext = [UInt8](repeating: 0, count: ciphertext.count + 16)
        guard EVP_DecryptUpdate(cipher.pointer, &plaintext, &length, ciphertext, Int32(ciphertext.count)) == 1 else {
            throw .fromLibcrypto(operation)
        }
        var total = Int(length)
        guard EVP_CIPHER_CTX_ctrl(cipher.pointer, countersign_gcm_set_tag, Int32(tagByteCount), &tag) == 1 else {
            throw .fromLibcrypto(operation)
        }
        let verified = plaintext.withUnsafeMutableBufferPointer { EVP_DecryptFinal_ex(cipher.pointer, $0.baseAddress! + total, &length) }
        guard verified == 1 else {
            while ERR_get_error() != 0 {}
            throw CryptographyError(operation: operation, message: "the box does not authenticate (altered, or another key)")
        }
        total += Int(length)
        return Array(plaintext.prefix(total))
    }

    /// `count` random bytes from libcrypto's CSPRNG.
    public static func randomBytes(_ count: Int) throws(CryptographyError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        guard RAND_bytes(&bytes, Int32(count)) == 1 else { throw .fromLibcrypto("drawing random bytes") }
        return bytes
    }
}

/// AES-256-GCM fetched from the default provider once, for the life of the process (never freed,
/// as `fetchedSHA256`): with `EVP_aes_256_gcm()` every init fetches the cipher again, a provider
/// look-up under a lock, and an upload seals four times (its data key and three columns). An
/// `EVP_CIPHER` is immutable once fetched and safe to share between threads.
nonisolated(unsafe) private let fetchedAES256GCM: OpaquePointer? = EVP_CIPHER_fetch(nil, "AES-256-GCM", nil)

/// One owned `EVP_CIPHER_CTX`, freed exactly once.
private final class CipherContext {
    let pointer: OpaquePointer

    init(_ operation: String) throws(CryptographyError) {
        guard let pointer = EVP_CIPHER_CTX_new() else { throw .fromLibcrypto(operation) }
        self.pointer = pointer
    }

    deinit {
        EVP_CIPHER_CTX_free(pointer)
    }
}
