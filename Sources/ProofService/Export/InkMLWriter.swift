import Foundation
import SignatureKit

/// Writes an ``InkDocument`` as W3C InkML: X, Y and T (milliseconds) channels, plus F (pressure)
/// when every point has one. Coordinates are canvas units; the canvas is recorded in an annotation.
public enum InkMLWriter {
    public static func inkml(_ document: InkDocument) -> [UInt8] {
        let withPressure = document.strokes.allSatisfy { $0.points.allSatisfy { $0.pressure != nil } } && document.pointCount > 0
        var out = """
            <?xml version="1.0" encoding="UTF-8"?>
            <ink xmlns="http://www.w3.org/2003/InkML">
            <annotation type="canvas">\(format(document.canvas.width)) \(format(document.canvas.height))</annotation>
            <traceFormat>
            <channel name="X" type="decimal"/>
            <channel name="Y" type="decimal"/>
            <channel name="T" type="decimal" units="ms"/>\(withPressure ? "\n<channel name=\"F\" type=\"decimal\" min=\"0\" max=\"1\"/>" : "")
            </traceFormat>

            """
        for stroke in document.strokes {
            out += "<trace>"
            out += stroke.points.map { p in
                var fields = [format(p.x), format(p.y), format(p.t)]
                if withPressure, let pressure = p.pressure { fields.append(format(pressure)) }
                return fields.joined(separator: " ")
            }.joined(separator: ", ")
            out += "</trace>\n"
        }
        out += "</ink>\n"
        return Array(out.utf8)
    }

    public static func format(_ value: Double) -> String {
        if value == value.rounded() && abs(value) < 1e15 { return String(Int64(value)) }
        var text = String(format: "%.4f", value)
        while text.hasSuffix("0") { text.removeLast() }
        return text
    }
}
