import Foundation

/// When the device says the signature was captured: `captured_at` as sent, and what it means.
public struct CaptureTime: Sendable, Equatable {
    /// The instant.
    public var date: Date
    /// The device's UTC offset in minutes at that instant.
    public var offsetMinutes: Int
    /// `captured_at` exactly as sent.
    public var text: String

    /// Creates a capture time.
    public init(date: Date, offsetMinutes: Int, text: String) {
        self.date = date
        self.offsetMinutes = offsetMinutes
        self.text = text
    }
}
