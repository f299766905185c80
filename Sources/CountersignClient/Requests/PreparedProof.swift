import Foundation

/// A proof upload frozen byte for byte: the reference, the (gzip-compressed) body and its
/// Idempotency-Key. A retry, also after the app was killed and started again, sends exactly this,
/// so the server recognises it as the same request and stores the proof once.
public struct PreparedProof: Sendable, Equatable, Codable {
    public var reference: String
    /// 1–255 visible ASCII characters, scoped on the server to the API key; a UUID by default.
    public var idempotencyKey: String
    /// The body as it goes on the wire.
    public var body: Data
    /// `gzip`, or `nil` for plain JSON.
    public var contentEncoding: String?
    /// The device key that signed ``body`` for ``reference`` (`Countersign-Device-Key`), when signed.
    public var deviceKeyID: String?
    /// The device's Ed25519 signature, base64 (`Countersign-Device-Signature`). Frozen with the body,
    /// so a retry (also from the offline queue, after a restart) sends the same signature.
    public var deviceSignature: String?

    public init(reference: String, idempotencyKey: String, body: Data, contentEncoding: String?) {
        self.reference = reference
        self.idempotencyKey = idempotencyKey
        self.body = body
        self.contentEncoding = contentEncoding
    }

    /// Builds the body of `submission` once (gzip unless `compress` is false) with a fresh key.
    public init(_ submission: ProofSubmission, idempotencyKey: String = UUID().uuidString.lowercased(),
                compress: Bool = true) throws(CountersignClientError) {
        let json: [UInt8]
        do { json = try submission.jsonBody() } catch { throw .encoding(String(describing: error)) }
        self.init(reference: submission.reference, idempotencyKey: idempotencyKey,
                  body: Data(compress ? try Gzip.compress(json) : json),
                  contentEncoding: compress ? "gzip" : nil)
    }

    /// This upload signed by `device` (a registered key): the signature covers the exact body
    /// bytes and the delivery reference, so neither can change afterwards.
    public func signed(by device: DeviceSigningKey) throws(CountersignClientError) -> PreparedProof {
        var signed = self
        (signed.deviceKeyID, signed.deviceSignature) = try device.uploadHeaders(reference: reference, body: body)
        return signed
    }

    // Queue files written before device keys lack the two device members: they decode as unsigned.
    enum CodingKeys: String, CodingKey {
        case reference, body
        case idempotencyKey = "idempotency_key"
        case contentEncoding = "content_encoding"
        case deviceKeyID = "device_key_id"
        case deviceSignature = "device_signature"
    }
}
