import Foundation

/// One bound parameter of a statement, in the form libpq sends it.
///
/// Text parameters are sent with type OID 0 so the server infers the type from the statement
/// (`$1` compared with a `jsonb` column is parsed as `jsonb`); fixed-size types and `bytea` are
/// sent in binary, so a megabyte of `bytea` crosses the wire without escaping.
public enum PostgresParameter: Sendable, Equatable {
    /// SQL NULL.
    case null
    /// Text format; `oid` 0 lets the server infer the type.
    case text(String, oid: UInt32 = 0)
    /// Binary format with an explicit type OID.
    case binary([UInt8], oid: UInt32)
}

/// A Swift value that can be bound to a statement parameter.
public protocol PostgresBindable: Sendable {
    /// The value as libpq will send it.
    var postgresParameter: PostgresParameter { get }
}

/// Well-known type OIDs (from `pg_type`).
public enum PostgresType {
    public static let bool: UInt32 = 16
    public static let bytea: UInt32 = 17
    public static let name: UInt32 = 19
    public static let int8: UInt32 = 20
    public static let int2: UInt32 = 21
    public static let int4: UInt32 = 23
    public static let text: UInt32 = 25
    public static let oid: UInt32 = 26
    public static let json: UInt32 = 114
    public static let float4: UInt32 = 700
    public static let float8: UInt32 = 701
    public static let unknown: UInt32 = 705
    public static let bpchar: UInt32 = 1042
    public static let varchar: UInt32 = 1043
    public static let date: UInt32 = 1082
    public static let timestamp: UInt32 = 1114
    public static let timestamptz: UInt32 = 1184
    public static let numeric: UInt32 = 1700
    public static let uuid: UInt32 = 2950
    public static let jsonb: UInt32 = 3802
}

@inline(__always)
func bigEndianBytes<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
    withUnsafeBytes(of: value.bigEndian) { Array($0) }
}

extension String: PostgresBindable {
    public var postgresParameter: PostgresParameter { .text(self) }
}
extension Substring: PostgresBindable {
    public var postgresParameter: PostgresParameter { .text(String(self)) }
}
extension Int: PostgresBindable {
    public var postgresParameter: PostgresParameter { .binary(bigEndianBytes(Int64(self)), oid: PostgresType.int8) }
}
extension Int64: PostgresBindable {
    public var postgresParameter: PostgresParameter { .binary(bigEndianBytes(self), oid: PostgresType.int8) }
}
extension Int32: PostgresBindable {
    public var postgresParameter: PostgresParameter { .binary(bigEndianBytes(self), oid: PostgresType.int4) }
}
extension Int16: PostgresBindable {
    public var postgresParameter: PostgresParameter { .binary(bigEndianBytes(self), oid: PostgresType.int2) }
}
extension Bool: PostgresBindable {
    public var postgresParameter: PostgresParameter { .binary([self ? 1 : 0], oid: PostgresType.bool) }
}
extension Double: PostgresBindable {
    public var postgresParameter: PostgresParameter { .binary(bigEndianBytes(bitPattern), oid: PostgresType.float8) }
}
extension UUID: PostgresBindable {
    public var postgresParameter: PostgresParameter {
        withUnsafeBytes(of: uuid) { .binary(Array($0), oid: PostgresType.uuid) }
    }
}
extension Date: PostgresBindable {
    /// Sent as `timestamptz` in binary: microseconds since 2000-01-01 00:00:00 UTC.
    public var postgresParameter: PostgresParameter {
        let micros = ((timeIntervalSince1970 - PostgresEpoch.unixOffset) * 1_000_000).rounded()
        return .binary(bigEndianBytes(Int64(micros)), oid: PostgresType.timestamptz)
    }
}
extension Optional: PostgresBindable where Wrapped: PostgresBindable {
    public var postgresParameter: PostgresParameter {
        switch self {
        case .none: return .null
        case .some(let value): return value.postgresParameter
        }
    }
}

/// Raw bytes bound as `bytea` (binary, no escaping).
public struct PostgresBytes: PostgresBindable, Equatable {
    /// The bytes.
    public var bytes: [UInt8]
    /// Wraps bytes.
    public init(_ bytes: [UInt8]) { self.bytes = bytes }
    public var postgresParameter: PostgresParameter { .binary(bytes, oid: PostgresType.bytea) }
}

extension Array: PostgresBindable where Element == UInt8 {
    /// A byte array binds as `bytea`.
    public var postgresParameter: PostgresParameter { .binary(self, oid: PostgresType.bytea) }
}

/// A JSON document bound as `jsonb` (sent as text with the jsonb OID).
public struct PostgresJSONB: PostgresBindable, Equatable {
    /// The JSON text.
    public var json: String
    /// Wraps JSON text; the server validates it.
    public init(_ json: String) { self.json = json }
    public var postgresParameter: PostgresParameter { .text(json, oid: PostgresType.jsonb) }
}

enum PostgresEpoch {
    /// Seconds between 1970-01-01 and 2000-01-01.
    static let unixOffset: Double = 946_684_800
}
