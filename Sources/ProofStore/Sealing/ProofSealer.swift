import Foundation
import Postgres

/// Seals a new proof's biometric bytes — the original body, the canonical ink, the PNG — under a
/// fresh data key for its delivery, and opens what reads find (docs/audit.md, "Sealed proofs").
/// Digests (`body_sha256`, `png_sha256`, the audit event's) stay those of the clear bytes.
public struct ProofSealer: Sendable {
    /// `proofs.sealing` of a proof stored in clear (before migration 0025).
    public static let clear = 0
    /// `proofs.sealing` of a proof sealed as this type does.
    public static let sealed = 1
    /// `proofs.sealing` of a proof whose delivery was erased (migration 0026): body, ink and PNG
    /// are empty, and the data key that sealed them is destroyed.
    public static let erased = 2

    /// Bytes a sealed column holds beyond the clear ones: the nonce (12) and the tag (16).
    public static let overhead = 28

    /// SQL for the clear size of the column `column` of a proof `p`, sealed or not.
    public static func clearSize(_ column: String) -> String {
        "(octet_length(\(column)) - CASE WHEN p.sealing = \(sealed) THEN \(overhead) ELSE 0 END)"
    }

    /// A proof's three columns sealed, with its delivery's wrapped data key.
    struct SealedProof: Sendable {
        var key: WrappedKey
        /// Whether ``key`` was made for this proof (a delivery stored before data keys were made
        /// with the delivery): the proof's statement inserts it, else it must find it stored.
        var isNewKey: Bool
        /// The delivery's, for the event's commitments.
        var salt: CommitmentSalt
        var body: [UInt8]
        var ink: [UInt8]
        var png: [UInt8]
    }

    /// A delivery's wrapped data key as stored (`delivery_data_keys`).
    public struct WrappedKey: Sendable, Equatable {
        public var keyID: String
        public var wrapped: [UInt8]

        public init(keyID: String, wrapped: [UInt8]) {
            self.keyID = keyID
            self.wrapped = wrapped
        }
    }

    public let keys: DataKeyProvider

    public init(keys: DataKeyProvider) {
        self.keys = keys
    }

    /// A new data key for delivery `reference`, wrapped, and its commitment salt.
    public func newKey(for reference: String) throws(SealingError) -> (key: WrappedKey, salt: CommitmentSalt) {
        let (key, wrapped) = try freshKey(for: reference)
        return (wrapped, try CommitmentSalt(key))
    }

    /// A random data key and its wrapping for delivery `reference`.
    private func freshKey(for reference: String) throws(SealingError) -> (DataKey, WrappedKey) {
        let key = try DataKey.random()
        let (keyID, wrapped) = try keys.keys().wrap(key, for: reference)
        return (key, WrappedKey(keyID: keyID, wrapped: wrapped))
    }

    /// `proof`'s columns sealed under its delivery's data key `existing`, or, for a delivery that
    /// has none, under a new one wrapped for delivery `reference`.
    func seal(_ proof: NewProof, reference: String, existing: WrappedKey?) throws(SealingError) -> SealedProof {
        let (key, wrapped) = if let existing { (try dataKey(existing, reference: reference), existing) } else { try freshKey(for: reference) }
        return SealedProof(key: wrapped, isNewKey: existing == nil, salt: try CommitmentSalt(key),
                           body: try key.seal(proof.body.bytes, .body, proof: proof.id),
                           ink: try key.seal(proof.rendering.ink, .ink, proof: proof.id),
                           png: try key.seal(proof.rendering.png, .png, proof: proof.id))
    }

    /// The commitment salt of the delivery `reference`, whose data key is `key`.
    public func commitmentSalt(_ key: WrappedKey, reference: String) throws(SealingError) -> CommitmentSalt {
        try CommitmentSalt(try dataKey(key, reference: reference))
    }

    /// The commitment salt of the delivery `reference` whose `delivery_data_keys` columns
    /// `kek_id` and `wrapped_key` are in `row` (nil when it has no key).
    func commitmentSalt(_ row: PostgresRow, reference: String) throws -> CommitmentSalt? {
        guard let key = ProofRepository.key(try row.decode("kek_id"), try row.decode("wrapped_key")) else { return nil }
        return try commitmentSalt(key, reference: reference)
    }

    /// The stored bytes of `field` of proof `proofID` (delivery `reference`) in clear: as they are
    /// when `sealing` is ``clear``, else opened with the delivery's `key`.
    public func open(_ stored: [UInt8], _ field: SealedField, sealing: Int, proof proofID: UUID, reference: String,
                     key: WrappedKey?) throws(SealingError) -> [UInt8] {
        switch sealing {
        case Self.clear: return stored
        case Self.sealed:
            guard let key else { throw .unreadable("proof \(proofID.uuidString.lowercased()) is sealed, but its delivery has no data key") }
            return try dataKey(key, reference: reference).open(stored, field, proof: proofID)
        case Self.erased: throw .erased(reference: reference)
        default: throw .unreadable("proof \(proofID.uuidString.lowercased()) has an unknown sealing \(sealing)")
        }
    }

    /// Unwraps the newest data key stored (delivery ids are time-ordered: the primary key finds it),
    /// so a key file that does not open this database's keys is refused before serving; none
    /// stored yet passes.
    public func checkNewestStoredKey(in database: PostgresClient) async throws {
        let result = try await database.query("""
            SELECT d.reference, k.kek_id, k.wrapped_key FROM delivery_data_keys k JOIN deliveries d ON d.id = k.delivery_id
            ORDER BY k.delivery_id DESC LIMIT 1
            """)
        guard let row = result.first else { return }
        let (reference, keyID, wrapped) = try row.decode((String, String, [UInt8]).self)
        do {
            _ = try dataKey(WrappedKey(keyID: keyID, wrapped: wrapped), reference: reference)
        } catch {
            throw SealingError.invalidKeyFile(path: keys.location, reason: "it does not open the data keys stored in the database "
                                              + "(the newest, of delivery \(reference), wrapped by key \(keyID): \(error))")
        }
    }

    /// The delivery's data key, unwrapped.
    public func dataKey(_ key: WrappedKey, reference: String) throws(SealingError) -> DataKey {
        try keys.keys().unwrap(key.wrapped, keyID: key.keyID, for: reference)
    }
}
