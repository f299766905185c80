import Foundation

/// A proof ready to store: every part computed by the API (parsed, rendered, hashed).
public struct NewProof: Sendable {
    public var id: UUID
    /// What the device reported.
    public var capture: ProofCapture
    /// The request body as received.
    public var body: ReceivedBody
    /// The ink and the PNG drawn from it.
    public var rendering: ProofRendering
    /// Distance, geofence and flags.
    public var assessment: ProofAssessment
    /// The API key that uploaded it.
    public var uploadedBy: UUID
    /// The `Idempotency-Key` the upload came with, if any.
    public var idempotencyKey: String?
    /// The verified device signature the upload came with, if any (migration 0017).
    public var deviceSignature: DeviceSignature?

    /// Creates a proof to store.
    public init(id: UUID, capture: ProofCapture, body: ReceivedBody, rendering: ProofRendering, assessment: ProofAssessment,
                uploadedBy: UUID, idempotencyKey: String?, deviceSignature: DeviceSignature? = nil) {
        self.id = id
        self.capture = capture
        self.body = body
        self.rendering = rendering
        self.assessment = assessment
        self.uploadedBy = uploadedBy
        self.idempotencyKey = idempotencyKey
        self.deviceSignature = deviceSignature
    }
}
