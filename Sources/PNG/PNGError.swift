import PNGShim

/// An error from PNG encoding or decoding, carrying libpng's own message when libpng failed.
public struct PNGError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Code: Sendable, Equatable {
        /// The caller passed something unusable (sizes, buffer length, format for a colour).
        case invalidArgument
        /// Memory could not be allocated.
        case outOfMemory
        /// libpng reported an error; `message` is its text.
        case libpng
    }

    public let code: Code
    public let message: String

    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "PNG error (\(code)): \(message)" }
}

/// The error code for a shim status.
package func shimErrorCode(_ status: Int32) -> PNGError.Code {
    switch status {
    case Int32(CS_PNG_OUT_OF_MEMORY): .outOfMemory
    case Int32(CS_PNG_LIBPNG_ERROR): .libpng
    default: .invalidArgument
    }
}

/// The shim's NUL-terminated message as a string.
package func shimMessage(_ message: [CChar]) -> String {
    let bytes = message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
    return String(decoding: bytes, as: UTF8.self)
}
