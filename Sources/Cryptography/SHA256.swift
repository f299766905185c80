import CLibCrypto

/// SHA-256 through OpenSSL's libcrypto (already loaded by libpq, so no extra runtime library,
/// and no BoringSSL to compile: a cold release build of the service fits the six minutes
/// `make run` allows on two cores).
public enum SHA256 {
    /// Digest length in bytes.
    public static let byteCount = 32

    /// The digest of `bytes`.
    public static func hash(_ bytes: some Collection<UInt8>) -> [UInt8] {
        var hasher = SHA256Hasher()
        hasher.update(bytes)
        return hasher.finalize()
    }

    /// The digest of `bytes` as 64 lower-case hex characters.
    public static func hex(_ bytes: some Collection<UInt8>) -> String {
        Hex.encode(hash(bytes))
    }
}

/// SHA-256 fetched from the default provider once, for the life of the process (never freed, as
/// the provider's own tables are not): with `EVP_sha256()` every init fetches it again, a lookup
/// under a lock that showed in profiles of the bundle verifier, which hashes several small inputs
/// per proof from two threads. An `EVP_MD` is immutable once fetched and safe to share.
nonisolated(unsafe) private let fetchedSHA256: OpaquePointer? = EVP_MD_fetch(nil, "SHA256", nil)

/// An incremental SHA-256 (for hashing streams in constant memory). Owns its `EVP_MD_CTX`.
public struct SHA256Hasher: ~Copyable {
    private let context: OpaquePointer

    /// Starts a new digest.
    public init() {
        guard let context = EVP_MD_CTX_new(), EVP_DigestInit_ex(context, fetchedSHA256 ?? EVP_sha256(), nil) == 1 else {
            // Only allocation failure can get here; there is no way to continue without memory.
            fatalError("libcrypto could not initialise SHA-256")
        }
        self.context = context
    }

    deinit {
        EVP_MD_CTX_free(context)
    }

    /// Adds `bytes` to the digest.
    public mutating func update(_ bytes: some Collection<UInt8>) {
        let hashedInPlace: Bool? = bytes.withContiguousStorageIfAvailable { buffer in
            EVP_DigestUpdate(context, buffer.baseAddress, buffer.count) == 1
        }
        if hashedInPlace == nil {
            let copy = Array(bytes)
            copy.withUnsafeBufferPointer { _ = EVP_DigestUpdate(context, $0.baseAddress, $0.count) }
        }
    }

    /// The digest of everything added.
    public consuming func finalize() -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: SHA256.byteCount)
        var length: UInt32 = 0
        _ = digest.withUnsafeMutableBufferPointer { EVP_DigestFinal_ex(context, $0.baseAddress, &length) }
        return digest
    }
}

/// Lower-case hexadecimal encoding.
public enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    /// `bytes` as lower-case hex.
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        // Called from other modules unspecialised (an export writes several digests per proof), so
        // the loop runs over a buffer rather than through the generic collection.
        if let text = bytes.withContiguousStorageIfAvailable({ encode(buffer: $0) }) { return text }
        return Array(bytes).withUnsafeBufferPointer { encode(buffer: $0) }
    }

    private static func encode(buffer bytes: UnsafeBufferPointer<UInt8>) -> String {
        String(unsafeUninitializedCapacity: bytes.count * 2) { characters in
            digits.withUnsafeBufferPointer { digits in
                for (index, byte) in bytes.enumerated() {
                    characters[2 * index] = digits[Int(byte >> 4)]
                    characters[2 * index + 1] = digits[Int(byte & 0x0F)]
                }
            }
            return bytes.count * 2
        }
    }

    /// The value of one hex digit (either case); nil for any other byte.
    public static func value(ofDigit c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: c - 0x30
        case 0x61...0x66: c - 0x61 + 10
        case 0x41...0x46: c - 0x41 + 10
        default: nil
        }
    }

    /// The bytes of an even-length hex string (either case); nil for anything else.
    public static func decode(_ text: String) -> [UInt8]? {
        let characters = Array(text.utf8)
        guard characters.count % 2 == 0 else { return nil }
        var bytes = [UInt8]()
        bytes.reserveCapacity(characters.count / 2)
        var index = 0
        while index < characters.count {
            guard let high = value(ofDigit: characters[index]), let low = value(ofDigit: characters[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }
}
