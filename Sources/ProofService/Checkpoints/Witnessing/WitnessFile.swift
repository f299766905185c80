import Foundation
import ProofStore

/// A checkpoint as a witness keeps it: the exact JSON bytes (``CheckpointResource``, sorted keys)
/// under a name that sorts by signing time:
/// `checkpoint-<signed_at_us, 20 digits>-<first 16 hex digits of the signature>.json`.
/// An RFC 3161 token for those bytes sits beside it as the same name with `.tsr`.
public struct WitnessFile: Sendable, Equatable {
    /// The file name (no directory).
    public var name: String
    /// The exact bytes written (and, for a TSA, timestamped).
    public var bytes: [UInt8]
    /// The checkpoint the bytes describe.
    public var checkpoint: AuditCheckpoint

    /// The witness file of `checkpoint`.
    public init(_ checkpoint: AuditCheckpoint) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        self.bytes = Array(try encoder.encode(CheckpointResource(checkpoint)))
        self.checkpoint = checkpoint
        self.name = Self.name(for: checkpoint)
    }

    /// Parses a file read back from a witness; the name must be the one its content implies, so
    /// a renamed or edited file is reported rather than silently reordered.
    public init(name: String, bytes: [UInt8]) throws(WitnessError) {
        guard let resource = try? JSONDecoder().decode(CheckpointResource.self, from: Data(bytes)) else {
            throw .malformed(file: name, reason: "not checkpoint JSON")
        }
        guard resource.keyIDMatches, let checkpoint = resource.checkpoint else {
            throw .malformed(file: name, reason: "not a well-formed checkpoint")
        }
        guard Self.name(for: checkpoint) == name else {
            throw .malformed(file: name, reason: "named \(name) but holds \(Self.name(for: checkpoint))")
        }
        self.name = name
        self.bytes = bytes
        self.checkpoint = checkpoint
    }

    /// The name of the file holding `checkpoint`.
    public static func name(for checkpoint: AuditCheckpoint) -> String {
        let micros = String(max(0, checkpoint.signedAtMicros))
        let padded = String(repeating: "0", count: max(0, 20 - micros.count)) + micros
        return "checkpoint-\(padded)-\(checkpoint.signature.prefix(8).hexString).json"
    }

    /// The name of the timestamp token beside the file `name`.
    public static func tokenName(for name: String) -> String {
        (name.hasSuffix(".json") ? String(name.dropLast(5)) : name) + ".tsr"
    }

    /// True for names a witness directory keeps checkpoints under.
    public static func isCheckpointName(_ name: String) -> Bool {
        name.hasPrefix("checkpoint-") && name.hasSuffix(".json")
    }
}
