import Foundation

/// A key file a process makes for itself (development only: `CHECKPOINT_KEY_GENERATE`,
/// `DATA_KEY_GENERATE`): written whole to a temporary file (mode 0600) and synced, then linked
/// into place, which fails if the name exists. So two processes starting at once never make two
/// different keys, a reader never sees a half-written file, and a failed write leaves nothing.
public enum SecretFile {
    /// What ``create(at:contents:)`` did.
    public enum Outcome: Sendable, Equatable {
        /// The file was made with `contents`.
        case created
        /// Another process made it first: read theirs.
        case exists
    }

    /// Writes `contents` to a new file at `path` (its folder made when missing); throws a message
    /// naming the path and the system's reason.
    public static func create(at path: String, contents: [UInt8]) throws(SecretFileError) -> Outcome {
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw SecretFileError(path: directory, reason: "the data directory cannot be created: \(error.localizedDescription)")
        }
        let temporary = "\(path).new-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard descriptor >= 0 else { throw SecretFileError(path: temporary, reason: String(cString: strerror(errno))) }
        defer { unlink(temporary) }  // after the link the key lives on under `path`
        let written = contents.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        let synced = written == contents.count && fsync(descriptor) == 0
        let reason = String(cString: strerror(errno))
        close(descriptor)
        guard synced else { throw SecretFileError(path: path, reason: "could not write the new key: \(reason)") }
        if link(temporary, path) != 0 {
            if errno == EEXIST { return .exists }
            throw SecretFileError(path: path, reason: String(cString: strerror(errno)))
        }
        return .created
    }
}

/// A key file that could not be made.
public struct SecretFileError: Error, Sendable {
    /// The file or folder concerned.
    public var path: String
    /// Why.
    public var reason: String
}
