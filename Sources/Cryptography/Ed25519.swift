import CLibCrypto

/// An error from OpenSSL's libcrypto, with the operation that failed and OpenSSL's own message.
public struct CryptographyError: Error, CustomStringConvertible, Sendable, Equatable {
    /// What we asked libcrypto to do.
    public var operation: String
    /// OpenSSL's error string (the newest entry of its error queue), or a description of ours.
    public var message: String

    /// Creates an error.
    public init(operation: String, message: String) {
        self.operation = operation
        self.message = message
    }

    /// An error for `operation` with the message at the head of libcrypto's error queue (which it clears).
    static func fromLibcrypto(_ operation: String) -> CryptographyError {
        var newest: UInt = 0
        while case let code = ERR_get_error(), code != 0 { newest = code }
        guard newest != 0 else { return CryptographyError(operation: operation, message: "libcrypto reported no detail") }
        var buffer = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(newest, &buffer, buffer.count)
        return CryptographyError(operation: operation, message: String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) },
                                                                        as: UTF8.self))
    }

    public var description: String { "\(operation): \(message)" }
}

/// One owned `EVP_PKEY`, freed exactly once.
final class OwnedKey {
    let pointer: OpaquePointer

    init(_ pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit {
        EVP_PKEY_free(pointer)
    }

    /// A raw key of `length` bytes read back with `getter` (public or private half).
    func raw(_ operation: String, length: Int,
             _ getter: (OpaquePointer, UnsafeMutablePointer<UInt8>, UnsafeMutablePointer<Int>) -> Int32) throws(CryptographyError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: length)
        var count = length
        guard getter(pointer, &bytes, &count) == 1, count == length else { throw .fromLibcrypto(operation) }
        return bytes
    }

    /// The key as PEM, written by `writer` into a memory BIO.
    func pem(_ operation: String, _ writer: (OpaquePointer, OpaquePointer) -> Int32) throws(CryptographyError) -> String {
        guard let bio = BIO_new(BIO_s_mem()) else { throw .fromLibcrypto(operation) }
        defer { BIO_free(bio) }
        guard writer(bio, pointer) == 1 else { throw .fromLibcrypto(operation) }
        let pending = Int(BIO_ctrl_pending(bio))
        var bytes = [UInt8](repeating: 0, count: pending)
        guard BIO_read(bio, &bytes, Int32(pending)) == Int32(pending) else { throw .fromLibcrypto(operation) }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Reads a PEM document with `reader` from a memory BIO.
    static func fromPEM(_ pem: String, _ operation: String,
                        _ reader: (OpaquePointer) -> OpaquePointer?) throws(CryptographyError) -> OwnedKey {
        let bytes = Array(pem.utf8)
        let key: OpaquePointer? = bytes.withUnsafeBytes { buffer -> OpaquePointer? in
            guard let bio = BIO_new_mem_buf(buffer.baseAddress, Int32(buffer.count)) else { return nil }
            defer { BIO_free(bio) }
            return reader(bio)
        }
        guard let key else { throw .fromLibcrypto(operation) }
        let owned = OwnedKey(key)
        guard EVP_PKEY_get_base_id(key) == EVP_PKEY_ED25519 else {
            throw CryptographyError(operation: operation, message: "the PEM key is not an Ed25519 key")
        }
        return owned
    }
}

/// An Ed25519 signing key (RFC 8032) held as its 32-byte seed; signing goes through libcrypto's EVP.
public struct Ed25519PrivateKey: Sendable {
    /// The 32-byte seed (what RFC 8032 calls the private key).
    public let rawRepresentation: [UInt8]
    /// The matching public key.
    public let publicKey: Ed25519PublicKey

    /// A key from its 32-byte seed.
    public init(rawRepresentation seed: [UInt8]) throws(CryptographyError) {
        guard seed.count == 32 else {
            throw CryptographyError(operation: "Ed25519 private key", message: "a seed is 32 bytes, not \(seed.count)")
        }
        let key = try Self.evpKey(seed)
        self.rawRepresentation = seed
        self.publicKey = try Ed25519PublicKey(rawRepresentation: key.raw("Ed25519 public key", length: 32, EVP_PKEY_get_raw_public_key))
    }

    /// A key from a PKCS#8 PEM document (`-----BEGIN PRIVATE KEY-----`, as `openssl genpkey -algorithm ed25519` writes).
    public init(pemRepresentation pem: String) throws(CryptographyError) {
        let key = try OwnedKey.fromPEM(pem, "reading an Ed25519 private key PEM") { PEM_read_bio_PrivateKey($0, nil, nil, nil) }
        try self.init(rawRepresentation: key.raw("Ed25519 private key", length: 32, EVP_PKEY_get_raw_private_key))
    }

    /// A new random key (from libcrypto's CSPRNG).
    public static func generate() throws(CryptographyError) -> Ed25519PrivateKey {
        var seed = [UInt8](repeating: 0, count: 32)
        guard RAND_bytes(&seed, 32) == 1 else { throw .fromLibcrypto("generating an Ed25519 key") }
        return try Ed25519PrivateKey(rawRepresentation: seed)
    }

    /// The key as a PKCS#8 PEM document.
    public func pemRepresentation() throws(CryptographyError) -> String {
        try Self.evpKey(rawRepresentation).pem("writing an Ed25519 private key PEM") {
            PEM_write_bio_PrivateKey($0, $1, nil, nil, 0, nil, nil)
        }
    }

    /// The 64-byte Ed25519 signature of `message` (deterministic: the same key and message give the same bytes).
    public func signature(for message: some Collection<UInt8>) throws(CryptographyError) -> [UInt8] {
        let key = try Self.evpKey(rawRepresentation)
        guard let context = EVP_MD_CTX_new() else { throw .fromLibcrypto("Ed25519 sign") }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestSignInit(context, nil, nil, nil, key.pointer) == 1 else { throw .fromLibcrypto("Ed25519 sign") }
        let bytes = Array(message)
        var signature = [UInt8](repeating: 0, count: 64)
        var length = 64
        guard EVP_DigestSign(context, &signature, &length, bytes, bytes.count) == 1, length == 64 else {
            throw .fromLibcrypto("Ed25519 sign")
        }
        return signature
    }

    static func evpKey(_ seed: [UInt8]) throws(CryptographyError) -> OwnedKey {
        guard let key = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nil, seed, seed.count) else {
            throw .fromLibcrypto("Ed25519 private key")
        }
        return OwnedKey(key)
    }
}

/// An Ed25519 public key (32 bytes): always a canonical encoding of a point on the curve that is
/// not of small order (``Ed25519PointCheck``), so no constant signature verifies under it.
public struct Ed25519PublicKey: Sendable, Equatable {
    /// The 32 raw bytes.
    public let rawRepresentation: [UInt8]

    /// A key from its 32 raw bytes. Throws, saying which rule failed, for bytes that are not a
    /// canonical encoding (y ≥ p, or x = 0 with the sign bit set), not on the curve, or one of the 8
    /// points of small order: libcrypto's raw import checks none of these.
    public init(rawRepresentation bytes: [UInt8]) throws(CryptographyError) {
        guard bytes.count == 32 else {
            throw CryptographyError(operation: "Ed25519 public key", message: "a public key is 32 bytes, not \(bytes.count)")
        }
        try Ed25519CheckedKeys.check(bytes, "Ed25519 public key")
        _ = try Self.evpKey(bytes)
        self.rawRepresentation = bytes
    }

    /// A key from a SubjectPublicKeyInfo PEM document (`-----BEGIN PUBLIC KEY-----`).
    public init(pemRepresentation pem: String) throws(CryptographyError) {
        let key = try OwnedKey.fromPEM(pem, "reading an Ed25519 public key PEM") { PEM_read_bio_PUBKEY($0, nil, nil, nil) }
        try self.init(rawRepresentation: key.raw("Ed25519 public key", length: 32, EVP_PKEY_get_raw_public_key))
    }

    /// The key as a SubjectPublicKeyInfo PEM document (what `openssl pkeyutl -verify -pubin` reads).
    public func pemRepresentation() throws(CryptographyError) -> String {
        try Self.evpKey(rawRepresentation).pem("writing an Ed25519 public key PEM") { PEM_write_bio_PUBKEY($0, $1) }
    }

    /// The key's short, stable name: `ed25519:` and the first 16 hex digits of the SHA-256 of the 32
    /// raw bytes (docs/audit.md, "The key"). What checkpoints, bundles, logs and refusals name.
    public var keyID: String { Self.keyID(rawRepresentation: rawRepresentation) }

    /// ``keyID`` of 32 raw public key bytes (as checkpoints store them; not checked to be a valid key).
    public static func keyID(rawRepresentation bytes: [UInt8]) -> String {
        "ed25519:" + SHA256.hex(bytes).prefix(16)
    }

    /// True when `signature` is this key's Ed25519 signature of `message`. Strict before libcrypto
    /// verifies: S must be below L, and R a canonical encoding of no point of small order
    /// (``Ed25519PointCheck``); the key itself was checked when it was made.
    public func isValidSignature(_ signature: [UInt8], for message: some Collection<UInt8>) -> Bool {
        Self.isStrictlyFormed(signature: signature) && Self.libcryptoVerifies(publicKey: rawRepresentation, signature: signature, for: message)
    }

    /// True when `signature` is 64 bytes whose S is below L and whose R is a canonical encoding of
    /// no point of small order (on the curve or not: libcrypto refuses an R off it).
    static func isStrictlyFormed(signature: [UInt8]) -> Bool {
        guard signature.count == 64, Ed25519PointCheck.isCanonicalScalar(signature[32...]) else { return false }
        return (try? Ed25519PointCheck.check(Array(signature[..<32]), "Ed25519 signature R", onCurve: false)) != nil
    }

    /// libcrypto's verdict alone: its cofactorless check with none of the rules above on `publicKey`
    /// or R (the tests show with it what the rules refuse that libcrypto would accept).
    static func libcryptoVerifies(publicKey: [UInt8], signature: [UInt8], for message: some Collection<UInt8>) -> Bool {
        guard signature.count == 64, let key = try? evpKey(publicKey), let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, nil, nil, key.pointer) == 1 else {
            ERR_clear_error()
            return false
        }
        let bytes = Array(message)
        let valid = EVP_DigestVerify(context, signature, signature.count, bytes, bytes.count) == 1
        ERR_clear_error()
        return valid
    }

    static func evpKey(_ bytes: [UInt8]) throws(CryptographyError) -> OwnedKey {
        guard let key = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nil, bytes, bytes.count) else {
            throw .fromLibcrypto("Ed25519 public key")
        }
        return OwnedKey(key)
    }
}
