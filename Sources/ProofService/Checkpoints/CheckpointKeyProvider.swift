import Cryptography
import Foundation
import ProofStore
import Synchronization

/// The Ed25519 key that signs audit checkpoints and export manifests, loaded once.
///
/// With `CHECKPOINT_KEY_FILE` set, that PKCS#8 PEM file must exist (`openssl genpkey -algorithm
/// ed25519 -out FILE` makes one). Only when generation is explicitly allowed
/// (`CHECKPOINT_KEY_GENERATE=true`, development) is `<DATA_DIR>/checkpoint-ed25519.pem` used and, on
/// first use, generated (mode 0600, created exclusively so two processes never make two keys).
/// Neither: there is no key, and ``key()`` says how to configure one. `export` never generates
/// (``init(signingOffline:)``). Every replica of a deployment must be given the same key file.
public final class CheckpointKeyProvider: Sendable {
    /// Where the key comes from.
    public enum Source: Sendable, Equatable {
        /// A configured file that must exist.
        case file(String)
        /// A file in the data directory, generated when missing (explicitly allowed only).
        case generatedIn(directory: String)
        /// A key given directly (tests).
        case fixed
        /// Nothing configured: ``key()`` fails with ``CheckpointKeyError/notConfigured(generationAllowed:)``.
        case unconfigured(generationAllowed: Bool)
    }

    /// The file name used in the data directory.
    public static let generatedFileName = "checkpoint-ed25519.pem"

    let source: Source
    private let loaded: Mutex<Ed25519PrivateKey?>

    /// A provider reading (or generating) the key as `source` says.
    public init(_ source: Source) {
        self.source = source
        self.loaded = Mutex(nil)
    }

    /// A provider for a key already in hand.
    public init(key: Ed25519PrivateKey) {
        self.source = .fixed
        self.loaded = Mutex(key)
    }

    /// The provider `configuration` describes for `serve`: the key file, else a key generated in the
    /// data directory if ``ServiceConfiguration/generateCheckpointKey`` allows it, else none.
    public convenience init(configuration: ServiceConfiguration) {
        if let file = configuration.checkpointKeyFile {
            self.init(.file(file))
        } else if configuration.generateCheckpointKey {
            self.init(.generatedIn(directory: configuration.dataDirectory))
        } else {
            self.init(.unconfigured(generationAllowed: true))
        }
    }

    /// The provider for a command that signs offline (`export`): `CHECKPOINT_KEY_FILE` only, never a
    /// generated key, whatever `CHECKPOINT_KEY_GENERATE` says.
    public convenience init(signingOffline configuration: ServiceConfiguration) {
        self.init(configuration.checkpointKeyFile.map(Source.file) ?? .unconfigured(generationAllowed: false))
    }

    /// Where the key is read from (or generated into), for logs.
    public var location: String {
        switch source {
        case .file(let path): path
        case .generatedIn(let directory): URL(fileURLWithPath: directory).appendingPathComponent(Self.generatedFileName).path
        case .fixed: "(given)"
        case .unconfigured: "(none)"
        }
    }

    /// The key; the first call reads or generates it. Errors name the file and the reason.
    public func key() throws -> Ed25519PrivateKey {
        try loaded.withLock { cached in
            if let cached { return cached }
            let key = try load()
            cached = key
            return key
        }
    }

    private func load() throws -> Ed25519PrivateKey {
        switch source {
        case .fixed:
            throw CheckpointKeyError(path: "", reason: "no key was given")
        case .unconfigured(let generationAllowed):
            throw CheckpointKeyError.notConfigured(generationAllowed: generationAllowed)
        case .file(let path):
            return try Self.read(path)
        case .generatedIn(let directory):
            let path = URL(fileURLWithPath: directory).appendingPathComponent(Self.generatedFileName).path
            if FileManager.default.fileExists(atPath: path) { return try Self.read(path) }
            let key = try Ed25519PrivateKey.generate()
            do {
                // Another process may have made it first: then theirs is used.
                return try SecretFile.create(at: path, contents: Array(try key.pemRepresentation().utf8)) == .created ? key : try Self.read(path)
            } catch let error as SecretFileError {
                throw CheckpointKeyError(path: error.path, reason: error.reason)
            }
        }
    }

    static func read(_ path: String) throws -> Ed25519PrivateKey {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CheckpointKeyError(path: path, reason: "the file does not exist or cannot be read")
        }
        do {
            return try Ed25519PrivateKey(pemRepresentation: String(decoding: data, as: UTF8.self))
        } catch {
            throw CheckpointKeyError(path: path, reason: "not an Ed25519 PKCS#8 PEM key (\(error.message))")
        }
    }
}

/// The checkpoint key could not be loaded or made.
public struct CheckpointKeyError: Error, CustomStringConvertible, Sendable {
    /// The file concerned.
    public var path: String
    /// Why.
    public var reason: String

    public var description: String { path.isEmpty ? "checkpoint key: \(reason)" : "checkpoint key \(path): \(reason)" }

    /// No key file and no permission to generate one: one line naming the options.
    public static func notConfigured(generationAllowed: Bool) -> CheckpointKeyError {
        let make = "openssl genpkey -algorithm ed25519 -out checkpoint.pem"
        return CheckpointKeyError(path: "", reason: generationAllowed
            ? "none configured: set CHECKPOINT_KEY_FILE to a PKCS#8 PEM Ed25519 key (\(make)), "
                + "or, for development only, CHECKPOINT_KEY_GENERATE=true (or --generate-checkpoint-key) to generate one in DATA_DIR"
            : "none configured: set CHECKPOINT_KEY_FILE to the service's PKCS#8 PEM Ed25519 key (never generated here; "
                + "the development key of `make run` is .data/\(CheckpointKeyProvider.generatedFileName))")
    }
}
