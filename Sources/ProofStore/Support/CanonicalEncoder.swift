import Foundation

/// The byte encoding every digest and signed message of the evidence uses (docs/audit.md): a
/// field is `0x00` for null, or `0x01`, a 4-byte big-endian length and the UTF-8 bytes for text;
/// integers are big-endian two's complement of a fixed width; a number is `0x01` and its 8-byte
/// big-endian IEEE 754 bits (or `0x00` for null). No field can be read as another, so two
/// different lists of facts never give the same bytes.
public struct CanonicalEncoder: Sendable {
    public private(set) var bytes: [UInt8] = []

    /// An empty encoding, with room for `capacity` bytes.
    public init(capacity: Int = 0) {
        bytes.reserveCapacity(capacity)
    }

    /// Text, or null.
    public mutating func text(_ value: String?) {
        guard let value else { bytes.append(0); return }
        bytes.append(1)
        uint32(UInt32(value.utf8.count))
        bytes.append(contentsOf: value.utf8)
    }

    /// A number, or null.
    public mutating func number(_ value: Double?) {
        guard let value else { bytes.append(0); return }
        bytes.append(1)
        withUnsafeBytes(of: value.bitPattern.bigEndian) { bytes.append(contentsOf: $0) }
    }

    public mutating func int16(_ value: Int16) { withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) } }
    public mutating func int32(_ value: Int32) { withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) } }
    public mutating func uint32(_ value: UInt32) { withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) } }
    public mutating func int64(_ value: Int64) { withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) } }
    public mutating func raw(_ value: [UInt8]) { bytes.append(contentsOf: value) }
}
