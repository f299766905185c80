/// A sealed column of a proof. Its name is part of the box's associated data, with the proof's
/// id, so a box copied to another column or another proof's row does not open.
public enum SealedField: String, Sendable, CaseIterable {
    /// `proofs.body`: the upload body byte for byte (the point stream, signer, location, device).
    case body
    /// `proofs.ink`: the canonical ink (x, y, t, pressure per point).
    case ink
    /// `proofs.png`: the signature image.
    case png
}
