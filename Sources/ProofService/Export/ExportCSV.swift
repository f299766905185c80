import Foundation
import ProofStore

/// The CSV export: one row per proof, RFC 4180 (CRLF line ends, fields with `,` `"` CR or LF
/// quoted, quotes doubled). Text cells starting with `=`, `+`, `-`, `@`, tab or CR are prefixed with
/// `'` so a spreadsheet shows them instead of running them as formulas (OWASP "CSV injection");
/// numeric columns are written by us and never neutralised.
public enum ExportCSV {
    public static let columns = [
        "proof_id", "reference", "recipient_name", "address", "signer_name", "captured_at", "received_at",
        "location_lat", "location_lon", "location_accuracy_m", "distance_to_destination_m", "flags",
        "device_id", "device_model", "device_os", "device_app", "ink_format", "point_count", "stroke_count",
        "points_sha256", "png_sha256", "uploaded_by_key_id", "uploaded_by_name",
    ]

    public static var header: String { columns.joined(separator: ",") + "\r\n" }

    public static func row(_ proof: ExportedProof) -> String {
        let m = proof.metadata
        func number(_ value: Double?) -> String { value.map { String($0) } ?? "" }
        let cells: [String] = [
            m.id.uuidString.lowercased(), text(m.deliveryReference), text(proof.recipientName), text(proof.address),
            text(m.signerName), RFC3339Timestamp.format(m.capturedAt, offsetMinutes: m.capturedAtOffsetMinutes),
            RFC3339Timestamp.format(m.receivedAt), number(m.location?.point.lat), number(m.location?.point.lon),
            number(m.location?.accuracyMeters), number(m.distanceToDestinationMeters), text(m.flags.joined(separator: ";")),
            text(m.device.id ?? ""), text(m.device.model ?? ""), text(m.device.os ?? ""), text(m.device.app ?? ""),
            text(m.inkFormat), String(m.pointCount), String(m.strokeCount), m.bodySHA256.hexString, m.pngSHA256.hexString,
            m.uploadedBy.keyID.uuidString.lowercased(), text(m.uploadedBy.name),
        ]
        return cells.map(quoted).joined(separator: ",") + "\r\n"
    }

    /// A text cell with formula-starting characters neutralised.
    public static func text(_ value: String) -> String {
        guard let first = value.unicodeScalars.first, "=+-@\t\r".unicodeScalars.contains(first) else { return value }
        return "'" + value
    }

    /// RFC 4180 quoting where needed.
    public static func quoted(_ cell: String) -> String {
        guard cell.contains(where: { $0 == "," || $0 == "\"" || $0 == "\r" || $0 == "\n" || $0 == "\r\n" }) else { return cell }
        return "\"" + cell.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
