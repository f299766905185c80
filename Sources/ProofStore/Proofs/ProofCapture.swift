/// What the device reported about the moment of signing.
public struct ProofCapture: Sendable {
    /// The name the signer gave.
    public var signerName: String
    /// Device time of the signature.
    public var capturedAt: CaptureTime
    /// Where the device was, when it said.
    public var location: CaptureLocation?
    /// The device, as far as the app described it.
    public var device: DeviceFacts

    /// Creates the capture facts.
    public init(signerName: String, capturedAt: CaptureTime, location: CaptureLocation?, device: DeviceFacts) {
        self.signerName = signerName
        self.capturedAt = capturedAt
        self.location = location
        self.device = device
    }
}
