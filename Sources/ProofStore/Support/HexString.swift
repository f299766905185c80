import Cryptography

extension Collection where Element == UInt8 {
    /// Lower-case hexadecimal, two digits per byte.
    public var hexString: String { Hex.encode(self) }
}
