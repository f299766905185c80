import Foundation

/// What one witness answered when a checkpoint was published to it (`audit_checkpoint_witnesses`,
/// migration 0013). A report for operators: verification trusts the witnesses' own copies.
public struct WitnessReceipt: Sendable, Equatable {
    /// The kinds of witness.
    public enum Kind: String, Sendable, CaseIterable {
        /// A file in the append-only witness directory (`CHECKPOINT_WITNESS_DIR`).
        case directory
        /// An HTTP receiver (`CHECKPOINT_WITNESS_URLS`).
        case http
        /// An RFC 3161 timestamp authority (`CHECKPOINT_TSA_URL`).
        case tsa
    }

    /// Which kind of witness.
    public var kind: Kind
    /// Which one: the file name, the receiver's or the TSA's URL.
    public var witness: String
    /// Whether it now holds the checkpoint.
    public var succeeded: Bool
    /// Why not (or what it said), when there is something to say.
    public var detail: String?
    /// When the outcome was recorded, in microseconds since the Unix epoch (0 before it is stored).
    public var recordedAtMicros: Int64

    /// Creates a receipt.
    public init(kind: Kind, witness: String, succeeded: Bool, detail: String? = nil, recordedAtMicros: Int64 = 0) {
        self.kind = kind
        self.witness = witness
        self.succeeded = succeeded
        self.detail = detail
        self.recordedAtMicros = recordedAtMicros
    }

    /// Longest `witness` and `detail` the table keeps; longer text is cut (it is a report, not evidence).
    public static let maxTextLength = 2048
}
