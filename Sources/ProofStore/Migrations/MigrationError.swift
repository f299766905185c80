/// Why migrating failed.
public enum MigrationError: Error, Sendable, Equatable, CustomStringConvertible {
    case directoryUnreadable(String, String)
    case badFileName(String)
    case duplicateVersion(Int, String, String)
    /// An applied migration's file changed since it was applied.
    case checksumMismatch(version: Int, name: String, applied: String, found: String)
    /// The database has a migration this build does not know (a newer release migrated it).
    case unknownAppliedVersion(Int, String)
    /// A migration's SQL failed; nothing of it was applied.
    case failed(version: Int, name: String, message: String)

    public var description: String {
        switch self {
        case .directoryUnreadable(let path, let reason): return "cannot read migrations directory \(path): \(reason)"
        case .badFileName(let file): return "migration file \(file) must be named NNNN_name.sql"
        case .duplicateVersion(let version, let a, let b): return "migrations \(a) and \(b) share version \(version)"
        case .checksumMismatch(let version, let name, let applied, let found):
            return "migration \(name) (version \(version)) changed after it was applied: checksum \(found), applied \(applied)"
        case .unknownAppliedVersion(let version, let name):
            return "the database has migration \(name) (version \(version)) that this build does not ship; refusing to run an older build against a newer schema"
        case .failed(let version, let name, let message): return "migration \(name) (version \(version)) failed: \(message)"
        }
    }
}
