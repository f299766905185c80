import Foundation
import Synchronization

/// Where a process finds the keys that wrap delivery data keys (``DataKeyWrapping``: the
/// deployment's ``DataKeyring`` file, or anything else given, such as a KMS client), loaded once.
///
/// With `DATA_KEY_FILE` set, that file must exist and hold at least one key. Only when generation
/// is explicitly allowed (`DATA_KEY_GENERATE=true`, development; `make run` sets it) is
/// `<DATA_DIR>/data-keys` used and, on first use, generated (mode 0600, created exclusively so
/// two processes never make two keyrings). Neither: there are no keys, and ``keys()`` says how
/// to configure them — `serve` refuses to start, and nothing personal is stored in clear instead.
public final class DataKeyProvider: Sendable {
    /// Where the keys come from.
    public enum Source: Sendable {
        /// A configured file that must exist.
        case file(String)
        /// A file in the data directory, generated when missing (explicitly allowed only).
        case generatedIn(directory: String)
        /// Keys given directly (tests, or a KMS client).
        case fixed(any DataKeyWrapping)
        /// Nothing configured: ``keys()`` fails with ``SealingError/notConfigured``.
        case unconfigured
    }

    /// The file name used in the data directory.
    public static let generatedFileName = "data-keys"

    public let source: Source
    private let loaded: Mutex<(any DataKeyWrapping)?>

    /// A provider reading (or generating) the keys as `source` says.
    public init(_ source: Source) {
        self.source = source
        if case .fixed(let keys) = source { loaded = Mutex(keys) } else { loaded = Mutex(nil) }
    }

    /// A provider for keys already in hand.
    public convenience init(keys: any DataKeyWrapping) {
        self.init(.fixed(keys))
    }

    /// Where the keys are read from (or generated into), for logs.
    public var location: String {
        switch source {
        case .file(let path): path
        case .generatedIn(let directory): URL(fileURLWithPath: directory).appendingPathComponent(Self.generatedFileName).path
        case .fixed: "(given)"
        case .unconfigured: "(none)"
        }
    }

    /// The keys; the first call reads or generates them.
    public func keys() throws(SealingError) -> any DataKeyWrapping {
        try loaded.withLock { (cached) throws(SealingError) -> any DataKeyWrapping in
            if let cached { return cached }
            let keys = try load()
            cached = keys
            return keys
        }
    }

    private func load() throws(SealingError) -> any DataKeyWrapping {
        switch source {
        case .fixed(let keys): return keys
        case .unconfigured: throw .notConfigured
        case .file(let path): return try Self.read(path)
        case .generatedIn:
            let path = location
            if FileManager.default.fileExists(atPath: path) { return try Self.read(path) }
            // A random id: a development file made again (a new DATA_DIR) must not pass for the old one.
            let suffix = Array(try DataKey.random().bytes.prefix(4)).hexString
            let keyring = try DataKeyring.generate(id: "development-\(suffix)")
            let text = Array(("# generated for development by countersign (DATA_KEY_GENERATE=true); never use in production\n"
                              + keyring.fileText).utf8)
            do {
                // Another process may have made it first: then theirs is used.
                return try SecretFile.create(at: path, contents: text) == .created ? keyring : try Self.read(path)
            } catch let error as SecretFileError {
                throw .invalidKeyFile(path: error.path, reason: error.reason)
            } catch let error as SealingError {
                throw error
            } catch {
                throw .invalidKeyFile(path: path, reason: "\(error)")
            }
        }
    }

    static func read(_ path: String) throws(SealingError) -> DataKeyring {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw .invalidKeyFile(path: path, reason: "the file does not exist or cannot be read")
        }
        return try DataKeyring(fileText: String(decoding: data, as: UTF8.self), path: path)
    }
}
