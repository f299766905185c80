import Foundation

/// A failed delivery attempt about to be stored (already validated and assessed by the service).
public struct NewAttempt: Sendable {
    /// Chosen by the service, so the audit event can name the row before it exists.
    public var id: UUID
    public var reason: AttemptReason
    /// The courier's free-text note, if any.
    public var note: String?
    /// The device's time of the attempt, as sent and as understood.
    public var capturedAt: CaptureTime
    /// Server time of the request (millisecond precision, so it reads back unchanged).
    public var receivedAt: Date
    /// Where the device was, if it said.
    public var location: CaptureLocation?
    /// Distance to the destination and the flags, judged as for a proof.
    public var assessment: ProofAssessment
    /// The API key that recorded it.
    public var recordedBy: UUID
    /// The request's Idempotency-Key, if it had one.
    public var idempotencyKey: String?

    /// Creates an attempt.
    public init(id: UUID, reason: AttemptReason, note: String?, capturedAt: CaptureTime, receivedAt: Date, location: CaptureLocation?,
                assessment: ProofAssessment, recordedBy: UUID, idempotencyKey: String?) {
        self.id = id
        self.reason = reason
        self.note = note
        self.capturedAt = capturedAt
        self.receivedAt = receivedAt
        self.location = location
        self.assessment = assessment
        self.recordedBy = recordedBy
        self.idempotencyKey = idempotencyKey
    }
}
