import Cryptography
import Foundation
import ProofStore

/// `manifest.json` of an export bundle: what the bundle holds and a signed checkpoint of every audit
/// chain's head, read right after the export's snapshot opened (so it covers every event that
/// snapshot saw). `manifest.sig` is the Ed25519 signature of its exact bytes.
struct ExportManifest: Codable, Equatable {
    /// The manifest format tag: v2 carries a version 2 checkpoint (every chain's head).
    static let formatTag = "countersign.export/v2"
    /// Tags this version still verifies: v1 bundles carry a version 1 checkpoint (one chain).
    static let knownFormats: Set<String> = ["countersign.export/v1", formatTag]

    struct File: Codable, Equatable {
        var path: String
        var bytes: Int
        var sha256: String
    }

    struct Period: Codable, Equatable {
        var since: String?
        var until: String?
    }

    var format = ExportManifest.formatTag
    var createdAt: String
    var period: Period
    var proofCount: Int
    var checkpoint: CheckpointResource
    var files: [File]

    enum CodingKeys: String, CodingKey {
        case format, period, checkpoint, files
        case createdAt = "created_at", proofCount = "proof_count"
    }

    init(createdAt: Date, since: Date?, until: Date?, proofCount: Int, checkpoint: AuditCheckpoint, files: [File]) {
        self.createdAt = RFC3339Timestamp.format(createdAt)
        self.period = Period(since: since.map(RFC3339Timestamp.format), until: until.map(RFC3339Timestamp.format))
        self.proofCount = proofCount
        self.checkpoint = CheckpointResource(checkpoint)
        self.files = files
    }

    /// The manifest's bytes (sorted keys, so the same content gives the same bytes).
    func encoded() throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes, .prettyPrinted]
        return Array(try encoder.encode(self))
    }

    /// A delivery reference as one path component: references are `A-Z a-z 0-9 . _ : -` starting
    /// with a letter or digit, so only `:` (not allowed in Windows file names) needs escaping, as `%3A`.
    static func pathComponent(_ reference: String) -> String {
        reference.replacingOccurrences(of: ":", with: "%3A")
    }
}
