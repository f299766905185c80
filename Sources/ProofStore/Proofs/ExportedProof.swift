import Foundation

/// Everything an export carries for one proof: its delivery, its metadata and its stored bytes.
public struct ExportedProof: Sendable {
    /// The proof's metadata (as `GET …/proof` shows it).
    public var metadata: ProofMetadata
    /// The delivery's recipient name.
    public var recipientName: String
    /// The delivery's address.
    public var address: String
    /// The delivery's destination, when it has one.
    public var destination: GeoPoint?
    /// The original request body, byte for byte as received (gzip-compressed when it arrived so).
    public var body: [UInt8]
    /// The canonical `countersign.ink/v1` bytes the PNG was rendered from.
    public var ink: [UInt8]
    /// The stored PNG.
    public var png: [UInt8]
    /// `captured_at` and `received_at` as stored, in microseconds since the Unix epoch (the proof
    /// facts hash these; ``metadata`` carries them as `Date`, which is not exact).
    public var capturedAtMicros: Int64
    public var receivedAtMicros: Int64
    /// The proof's `proof_recorded` audit event, as the export's snapshot sees it (nil: none, which
    /// only tampering makes; the exporter then refuses to sign).
    public var event: AuditEvent?
    /// The device key and signature stored with the proof (migration 0017), and the key's public
    /// key, when the upload was signed.
    public var deviceSignature: DeviceSignature? = nil
    public var devicePublicKey: [UInt8]? = nil
    /// How `body`, `ink` and `png` are held: ``ProofSealer/clear`` (as read from a proof stored in
    /// clear, or once ``opened(by:)``) or ``ProofSealer/sealed``, with the delivery's `dataKey`.
    public var sealing = ProofSealer.clear
    public var dataKey: ProofSealer.WrappedKey? = nil
    /// The delivery's commitment salt, once ``opened(by:)`` found its data key (a bundle states it,
    /// so that its verifier can check the event's `metadata_commitment`).
    public var commitmentSalt: CommitmentSalt? = nil

    /// This proof with `body`, `ink` and `png` in clear: opened with its delivery's data key when
    /// they are sealed (CPU work: the exporter does it on its pool, not while reading).
    public func opened(by sealer: ProofSealer) throws(SealingError) -> ExportedProof {
        guard sealing != ProofSealer.clear else { return self }
        var clear = self
        let (id, reference) = (metadata.id, metadata.deliveryReference)
        clear.body = try sealer.open(body, .body, sealing: sealing, proof: id, reference: reference, key: dataKey)
        clear.ink = try sealer.open(ink, .ink, sealing: sealing, proof: id, reference: reference, key: dataKey)
        clear.png = try sealer.open(png, .png, sealing: sealing, proof: id, reference: reference, key: dataKey)
        clear.sealing = ProofSealer.clear
        clear.commitmentSalt = try dataKey.map { key throws(SealingError) in try sealer.commitmentSalt(key, reference: reference) }
        clear.dataKey = nil
        return clear
    }
}
