import Cryptography
import Foundation

/// The checkpoint keys a verifier trusts (`countersign verify`): the signer of a bundle or of a stored
/// checkpoint must be one of them. Several for rotation: a key signs until it is replaced, and what it
/// signed keeps verifying while it stays in the set.
///
/// Sources, all added together: `--public-key` (repeatable: 64 hex digits or a public key PEM file),
/// `--trusted-keys FILE` (one key per line — 64 hex digits, or the path of a PEM file — or PEM
/// blocks; `#` starts a comment) and ``environmentVariable`` (comma-separated hex).
public struct TrustedKeys: Sendable, Equatable {
    /// Comma-separated hex keys trusted in addition to the options.
    public static let environmentVariable = "COUNTERSIGN_TRUSTED_KEYS"

    /// The keys, in the order given, without repeats.
    public private(set) var keys: [Ed25519PublicKey] = []

    /// No key: nothing is pinned.
    public init() {}

    /// True when no key is pinned.
    public var isEmpty: Bool { keys.isEmpty }

    /// The key ids, for messages.
    public var keyIDs: [String] { keys.map(\.keyID) }

    /// True when `raw` (32 bytes) is one of the keys.
    public func contains(raw: [UInt8]) -> Bool { keys.contains { $0.rawRepresentation == raw } }

    /// Adds `key` unless it is there already.
    public mutating func add(_ key: Ed25519PublicKey) {
        if !contains(raw: key.rawRepresentation) { keys.append(key) }
    }

    /// Adds one key given as 64 hex digits or as the path of a public key PEM file; `origin` names
    /// where it came from in the error.
    public mutating func add(_ text: String, origin: String) throws(TrustedKeyError) {
        let text = text.trimmingCharacters(in: .whitespaces)
        if let raw = Hex.decode(text), raw.count == 32 {
            do {
                add(try Ed25519PublicKey(rawRepresentation: raw))
                return
            } catch {
                throw TrustedKeyError("\(origin): \(text) is not an Ed25519 public key (\(error.message))")
            }
        }
        guard let pem = FileManager.default.contents(atPath: text) else {
            throw TrustedKeyError("\(origin): neither 64 hex digits nor a readable PEM file: \(text)")
        }
        try addPEM(String(decoding: pem, as: UTF8.self), origin: "\(origin): \(text)")
    }

    /// Adds the keys of a `--trusted-keys` file: per line 64 hex digits or a PEM file's path,
    /// or `-----BEGIN PUBLIC KEY-----` blocks; blank lines and `#` comments are skipped.
    public mutating func addFile(_ path: String) throws(TrustedKeyError) {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw TrustedKeyError("--trusted-keys: cannot read \(path)")
        }
        var block: [Substring]?
        for (number, rawLine) in String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.prefix { $0 != "#" }.trimmingCharacters(in: .whitespaces)
            if line.isEmpty { continue }
            if line.hasPrefix("-----BEGIN ") { block = [] }
            if block != nil {
                block?.append(Substring(line))
                if line.hasPrefix("-----END ") {
                    try addPEM((block ?? []).joined(separator: "\n") + "\n", origin: "\(path) line \(number + 1)")
                    block = nil
                }
                continue
            }
            try add(line, origin: "\(path) line \(number + 1)")
        }
        if block != nil { throw TrustedKeyError("\(path): a PEM block has no END line") }
    }

    /// Adds the keys of ``environmentVariable``'s value (comma-separated hex).
    public mutating func addEnvironment(_ value: String) throws(TrustedKeyError) {
        for item in value.split(separator: ",") where !item.trimmingCharacters(in: .whitespaces).isEmpty {
            try add(String(item), origin: Self.environmentVariable)
        }
    }

    mutating func addPEM(_ pem: String, origin: String) throws(TrustedKeyError) {
        do {
            add(try Ed25519PublicKey(pemRepresentation: pem))
        } catch {
            throw TrustedKeyError("\(origin): not an Ed25519 public key PEM (\(error.message))")
        }
    }
}

/// A trusted key that could not be read.
public struct TrustedKeyError: Error, CustomStringConvertible, Sendable {
    public var description: String

    public init(_ description: String) {
        self.description = description
    }
}
