import Postgres

/// A `timestamptz` carried exactly as integer microseconds since the Unix epoch (binary format,
/// no floating point on the way), so the time the audit hash covers is the time stored.
struct AuditTimestamp: PostgresBindable, PostgresDecodable, Equatable {
    /// Microseconds between 1970-01-01 and 2000-01-01 (PostgreSQL's epoch).
    static let postgresEpochOffset: Int64 = 946_684_800_000_000

    var micros: Int64

    var postgresParameter: PostgresParameter {
        withUnsafeBytes(of: (micros - Self.postgresEpochOffset).bigEndian) { .binary(Array($0), oid: PostgresType.timestamptz) }
    }

    static func decode(from bytes: UnsafeRawBufferPointer, type: UInt32) throws(PostgresError) -> AuditTimestamp {
        guard type == PostgresType.timestamptz, bytes.count == 8 else {
            throw PostgresError(.decodingFailed, message: "column of type OID \(type) is not a timestamptz")
        }
        var raw: Int64 = 0
        for byte in bytes { raw = raw << 8 | Int64(byte) }
        return AuditTimestamp(micros: raw + postgresEpochOffset)
    }
}
