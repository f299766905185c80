import Foundation
import SignatureKit

/// What a courier app sends for `POST /v1/deliveries/{reference}/proof`: who signed, when and
/// where, on which device, and the ink.
public struct ProofSubmission: Sendable, Equatable {
    /// Where the device was when the recipient signed.
    public struct Location: Sendable, Equatable, Encodable {
        public var lat: Double
        public var lon: Double
        /// The fix's accuracy radius in metres, when the platform gives one.
        public var accuracyMeters: Double?

        public init(lat: Double, lon: Double, accuracyMeters: Double? = nil) {
            self.lat = lat
            self.lon = lon
            self.accuracyMeters = accuracyMeters
        }

        enum CodingKeys: String, CodingKey {
            case lat, lon
            case accuracyMeters = "accuracy_m"
        }
    }

    /// Facts about the capturing device (each 0–200 characters, no control characters).
    public struct Device: Sendable, Equatable, Encodable {
        public var id: String?
        public var model: String?
        public var os: String?
        public var app: String?

        public init(id: String? = nil, model: String? = nil, os: String? = nil, app: String? = nil) {
            self.id = id
            self.model = model
            self.os = os
            self.app = app
        }
    }

    /// The delivery this proof is for.
    public var reference: String
    /// The recipient's name as they gave it.
    public var signerName: String
    /// The device's clock at capture, with its UTC offset (RFC 3339), e.g. `2025-03-01T14:05:09.250+01:00`.
    public var capturedAt: String
    public var location: Location?
    public var device: Device?
    /// The signature (``InkRecorder/finish()`` or ``CapturedInk/init(importing:format:limits:)``).
    public var ink: CapturedInk

    public init(reference: String, signerName: String, capturedAt: String, location: Location? = nil,
                device: Device? = nil, ink: CapturedInk) {
        self.reference = reference
        self.signerName = signerName
        self.capturedAt = capturedAt
        self.location = location
        self.device = device
        self.ink = ink
    }

    /// `date` as RFC 3339 with milliseconds and the offset of `timeZone` at that moment (the
    /// server keeps the offset: it tells an auditor the courier's local time).
    public static func timestamp(_ date: Date, timeZone: TimeZone = .current) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        formatter.timeZone = timeZone
        return formatter.string(from: date)
    }

    /// The JSON body: the envelope through `JSONEncoder`, then the canonical ink bytes as the
    /// `ink` member, unchanged (re-encoding numbers could change what was signed).
    public func jsonBody() throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var envelope = Array(try encoder.encode(Envelope(submission: self)))
        // The envelope always has members (signer, captured_at), so it ends `…}` after one.
        guard envelope.last == UInt8(ascii: "}") else { throw CountersignClientError.encoding("the proof envelope is not a JSON object") }
        envelope.removeLast()
        envelope += Array(#","ink":"#.utf8) + ink.json + [UInt8(ascii: "}")]
        return envelope
    }

    private struct Envelope: Encodable {
        struct Signer: Encodable { var name: String }
        var signer: Signer
        var capturedAt: String
        var location: Location?
        var device: Device?

        init(submission: ProofSubmission) {
            signer = Signer(name: submission.signerName)
            capturedAt = submission.capturedAt
            location = submission.location
            device = submission.device
        }

        enum CodingKeys: String, CodingKey {
            case signer, location, device
            case capturedAt = "captured_at"
        }
    }
}
