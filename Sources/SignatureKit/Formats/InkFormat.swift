/// The input formats ``InkParser`` understands.
public enum InkFormat: Sendable, Equatable {
    /// Native `countersign.ink/v1` JSON.
    case ink
    /// signature_pad `toData()` JSON; the canvas size (CSS px) must come from the caller.
    case signaturePad(canvas: CanvasSize)
    /// W3C InkML (normalised into a canvas, see ``NormalizationOptions``).
    case inkml
    /// SVC2004 signature text (normalised into a canvas, y flipped).
    case svc2004

    /// The format family without parameters.
    public var kind: InkFormatKind {
        switch self {
        case .ink: return .ink
        case .signaturePad: return .signaturePad
        case .inkml: return .inkml
        case .svc2004: return .svc2004
        }
    }
}

/// A format family, as named on the command line (`--format`) and as auto-detected.
public enum InkFormatKind: String, Sendable, Equatable, CaseIterable {
    /// `countersign.ink/v1` JSON.
    case ink = "ink"
    /// signature_pad `toData()` JSON.
    case signaturePad = "signature-pad"
    /// W3C InkML.
    case inkml = "inkml"
    /// SVC2004 text.
    case svc2004 = "svc"

    /// Sniffs the format from the first non-whitespace byte (after an optional UTF-8 BOM):
    /// `{` → ink, `[` → signature_pad, `<` → InkML, a digit → SVC2004; otherwise `nil`.
    public static func detect(_ bytes: UnsafeRawBufferPointer) -> InkFormatKind? {
        var i = 0
        if bytes.count >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF { i = 3 }
        while i < bytes.count {
            switch bytes[i] {
            case 0x20, 0x09, 0x0A, 0x0D: i += 1
            case UInt8(ascii: "{"): return .ink
            case UInt8(ascii: "["): return .signaturePad
            case UInt8(ascii: "<"): return .inkml
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return .svc2004
            default: return nil
            }
        }
        return nil
    }

    /// Sniffs the format of a byte array (see ``detect(_:)-(UnsafeRawBufferPointer)``).
    public static func detect(_ bytes: [UInt8]) -> InkFormatKind? {
        bytes.withUnsafeBytes { detect($0) }
    }
}
