import Cryptography
import Foundation

/// One numbered SQL file from `migrations/` (`0001_init.sql`, `0002_proofs.sql`, ...).
public struct Migration: Sendable, Equatable {
    /// The number before the first underscore; migrations apply in ascending order.
    public var version: Int
    /// The file name without `.sql`.
    public var name: String
    /// The SQL text, applied as one script inside its own transaction.
    public var sql: String
    /// Lower-case hex SHA-256 of the file's bytes; an applied migration must never change.
    public var checksum: String

    /// Creates a migration from its file name and contents.
    public init(version: Int, name: String, sql: String) {
        self.version = version
        self.name = name
        self.sql = sql
        self.checksum = SHA256.hex(Array(sql.utf8))
    }

    /// Reads every `NNNN_name.sql` in `directory`, ordered by version; rejects duplicates and strays.
    public static func load(from directory: URL) throws -> [Migration] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        } catch {
            throw MigrationError.directoryUnreadable(directory.path, String(describing: error))
        }
        var migrations: [Migration] = []
        for file in names where file.hasSuffix(".sql") {
            let stem = String(file.dropLast(4))
            guard let underscore = stem.firstIndex(of: "_"), let version = Int(stem[..<underscore]), version > 0 else {
                throw MigrationError.badFileName(file)
            }
            let sql = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
            migrations.append(Migration(version: version, name: stem, sql: sql))
        }
        migrations.sort { $0.version < $1.version }
        for (previous, next) in zip(migrations, migrations.dropFirst()) where previous.version == next.version {
            throw MigrationError.duplicateVersion(next.version, previous.name, next.name)
        }
        return migrations
    }

    /// The migrations folder: `$MIGRATIONS_DIR`, else `./migrations`, else `<executable>/../share/countersign/migrations`.
    public static func defaultDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        if let configured = environment["MIGRATIONS_DIR"], !configured.isEmpty {
            return URL(fileURLWithPath: configured)
        }
        let local = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent("migrations")
        if FileManager.default.fileExists(atPath: local.path) { return local }
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        return executable.deletingLastPathComponent().appendingPathComponent("../share/countersign/migrations").standardizedFileURL
    }
}
