import Foundation

/// A Swift value that can be bound to a statement parameter.
public protocol PostgresBindable: Sendable {
    /// The value as libpq will send it.
    var postgresParameter: PostgresParameter { get }
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
        .binary(bigEndianBytes(PostgresEpoch.micros(self)), oid: PostgresType.timestamptz)
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

extension Array: PostgresBindable where Element == UInt8 {
    /// A byte array binds as `bytea`.
    public var postgresParameter: PostgresParameter { .binary(self, oid: PostgresType.bytea) }
}
