import Cryptography
import Foundation
import ProofStore

/// `manifest.json` of an export bundle: what the bundle holds and a signed checkpoint of every audit
/// chain's head, read right after the export's snapshot opened (so it covers every event that
/// snapshot saw). `manifest.sig` is the Ed25519 signature of its exact bytes.
public struct ExportManifest: Codable, Equatable {
    /// The manifest format tag: v3 lists checksum files (``checksums``) instead of every file, and
    /// its bundle carries the audit chain segments and each proof's canonical ink (docs/audit.md).
    public static let formatTag = "countersign.export/v3"
    /// v2: every file in ``files``, a version 2 checkpoint (every chain's head); v1: a version 1
    /// checkpoint (one chain). Both still verify, as they did.
    public static let legacyFormats: Set<String> = ["countersign.export/v1", "countersign.export/v2"]
    /// Tags this version verifies.
    public static let knownFormats: Set<String> = legacyFormats.union([formatTag])

    public struct File: Codable, Equatable {
        public var path: String
        public var bytes: Int
        public var sha256: String
    }

    public struct Period: Codable, Equatable {
        public var since: String?
        public var until: String?
    }

    public var format = ExportManifest.formatTag
    public var createdAt: String
    public var period: Period
    public var proofCount: Int
    public var checkpoint: CheckpointResource
    /// v1 and v2: every file of the bundle but the manifest, its signature and the public key.
    public var files: [File]?
    /// v3: the `checksums/*.sha256` files, in order, which list every other file.
    public var checksums: [File]?
    /// v3: the files each proof's folder holds (``ExportContents/proofFiles``), so a reader knows
    /// whether the raw dynamics are in the bundle; absent in bundles written before it: every file.
    public var proofFiles: [String]?

    enum CodingKeys: String, CodingKey {
        case format, period, checkpoint, files, checksums
        case createdAt = "created_at", proofCount = "proof_count", proofFiles = "proof_files"
    }

    /// A version 3 manifest.
    public init(createdAt: Date, since: Date?, until: Date?, proofCount: Int, checkpoint: AuditCheckpoint, checksums: [File],
                contents: ExportContents = .everything) {
        self.createdAt = RFC3339Timestamp.format(createdAt)
        self.period = Period(since: since.map(RFC3339Timestamp.format), until: until.map(RFC3339Timestamp.format))
        self.proofCount = proofCount
        self.checkpoint = CheckpointResource(checkpoint)
        self.checksums = checksums
        self.proofFiles = contents.proofFiles
    }

    /// The manifest's bytes (sorted keys, so the same content gives the same bytes).
    public func encoded() throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes, .prettyPrinted]
        return Array(try encoder.encode(self))
    }

    /// A delivery reference as one path component: references are `A-Z a-z 0-9 . _ : -` starting
    /// with a letter or digit, so only `:` (not allowed in Windows file names) needs escaping, as `%3A`.
    public static func pathComponent(_ reference: String) -> String {
        // Most references have no `:`; Foundation's replace copied each one through NSString,
        // on the verifier's serial thread, for every proof.
        guard reference.utf8.contains(UInt8(ascii: ":")) else { return reference }
        return String(decoding: reference.utf8.flatMap { $0 == UInt8(ascii: ":") ? Array("%3A".utf8) : [$0] }, as: UTF8.self)
    }
}
