import Foundation

/// A Swift type that can be read from a result column delivered in binary format.
public protocol PostgresDecodable: Sendable {
    /// Decodes a non-NULL value of the column type `type` from its binary representation.
    static func decode(from bytes: UnsafeRawBufferPointer, type: UInt32) throws(PostgresError) -> Self
    /// The value for SQL NULL; the default throws, `Optional` returns `nil`.
    static func decodeNull(type: UInt32) throws(PostgresError) -> Self
}

extension PostgresDecodable {
    public static func decodeNull(type: UInt32) throws(PostgresError) -> Self {
        throw PostgresError(.decodingFailed, message: "NULL cannot be decoded as \(Self.self)")
    }
}

func mismatch<T>(_ target: T.Type, _ type: UInt32, _ size: Int) -> PostgresError {
    PostgresError(.decodingFailed, message: "column of type OID \(type) (\(size) bytes) cannot be decoded as \(target)")
}

@inline(__always)
func readBigEndian<T: FixedWidthInteger>(_ bytes: UnsafeRawBufferPointer, as: T.Type) -> T {
    var value: T = 0
    withUnsafeMutableBytes(of: &value) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[0..<MemoryLayout<T>.size])) }
    return T(bigEndian: value)
}

extension Optional: PostgresDecodable where Wrapped: PostgresDecodable {
    public static func decode(from bytes: UnsafeRawBufferPointer, type: UInt32) throws(PostgresError) -> Wrapped? {
        try Wrapped.decode(from: bytes, type: type)
    }
    public static func decodeNull(type: UInt32) throws(PostgresError) -> Wrapped? { nil }
}

extension String: PostgresDecodable {
    /// Decodes text-like columns (text, varchar, char, name, json, jsonb, unknown) and, for convenience, uuid.
    public static func decode(from bytes: UnsafeRawBufferPointer, type: UInt32) throws(PostgresError) -> String {
        switch type {
        case PostgresType.text, PostgresType.varchar, PostgresType.bpchar, PostgresType.name,
             PostgresType.json, PostgresType.unknown:
            return String(decoding: bytes, as: UTF8.self)
        case PostgresType.jsonb:
            guard bytes.first == 1 else { throw PostgresError(.decodingFailed, message: "unknown jsonb binary version") }
            return String(decoding: UnsafeRawBufferPointer(rebasing: bytes.dropFirst()), as: UTF8.self)
        case PostgresType.uuid:
            return try UUID.decode(from: bytes, type: type).uuidString.lowercased()
        default:
            throw mismatch(String.self, type, bytes.count)
        }
    }
}

extension Int64: PostgresDecodable {
    /// Decodes int2, int4, int8 and oid columns.
    public static func decode(from bytes: UnsafeRawBufferPointer, type: UInt32) throws(PostgresError) -> Int64 {
        switch (type, bytes.count) {
        case (PostgresType.int8, 8): return readBigEndian(bytes, as: Int64.self)
        case (PostgresType.int4, 4): return Int64(readBigEndian(bytes, as: Int32.self))
        case (PostgresType.int2, 2): return Int64(readBigEndian(bytes, as: Int16.self))
        case (PostgresType.oid, 4): return Int64(readBigEndian(bytes, as: UInt32.self))
        default: throw mismatch(Int64.self, type, bytes.count)
        }
    }
}

extension Int: PostgresDecodable {
    public static func decode(from bytes: UnsafeRawBufferPointer, type: UInt32) throws(PostgresError) -> Int {
        Int(try Int64.decode(from: bytes, type: type))
    }
}

extension Int32: PostgresDecodable {
    public static func decode(from bytes: UnsafeRawBufferPointer, type: UInt32) throws(PostgresError) -> Int32 {
        let wide = try Int64.decode(from: bytes, type: type)
        guard let narrow = Int32(exactly: wide) else { throw mismatch(Int32.self, type, bytes.count) }
        return narrow
    }
}

extension Bool: PostgresDecodable {
    public static func decode(from bytes: UnsafeRawBufferPointer, type: UInt32) throws(PostgresError) -> Bool {
        guard type == PostgresType.bool, bytes.count == 1 else { throw mismatch(Bool.self, type, bytes.count) }
        return bytes[0] != 0
    }
}

extension Double: PostgresDecodable {
    /// Decodes float8, float4 and integer columns.
    public static func decode(from bytes: UnsafeRawBufferPointer, type: UInt32) throws(PostgresError) -> Double {
        switch (type, bytes.count) {
        case (PostgresType.float8, 8): return Double(bitPattern: readBigEndian(bytes, as: UInt64.self))
        case (PostgresType.float4, 4): return Double(Float(bitPattern: readBigEndian(bytes, as: UInt32.self)))
        case (PostgresType.int2, _), (PostgresType.int4, _), (PostgresType.int8, _):
            return Double(try Int64.decode(from: bytes, type: type))
        default: throw mismatch(Double.self, type, bytes.count)
        }
    }
}

extension Array: PostgresDecodable where Element == UInt8 {
    /// Decodes bytea (and, as raw UTF-8, text-like columns).
    public static func decode(from bytes: UnsafeRawBufferPointer, type: UInt32) throws(PostgresError) -> [UInt8] {
        switch type {
        case PostgresType.bytea, PostgresType.text, PostgresType.varchar, PostgresType.json:
            return Array(bytes)
        case PostgresType.jsonb:
            return Array(bytes.dropFirst())
        default:
            throw mismatch([UInt8].self, type, bytes.count)
        }
    }
}

extension UUID: PostgresDecodable {
    public static func decode(from bytes: UnsafeRawBufferPointer, type: UInt32) throws(PostgresError) -> UUID {
        guard type == PostgresType.uuid, bytes.count == 16 else { throw mismatch(UUID.self, type, bytes.count) }
        var raw: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &raw) { $0.copyMemory(from: bytes) }
        return UUID(uuid: raw)
    }
}

extension Date: PostgresDecodable {
    /// Decodes timestamptz, timestamp (taken as UTC) and date columns.
    public static func decode(from bytes: UnsafeRawBufferPointer, type: UInt32) throws(PostgresError) -> Date {
        switch (type, bytes.count) {
        case (PostgresType.timestamptz, 8), (PostgresType.timestamp, 8):
            let micros = readBigEndian(bytes, as: Int64.self)
            return Date(timeIntervalSince1970: PostgresEpoch.unixOffset + Double(micros) / 1_000_000)
        case (PostgresType.date, 4):
            let days = readBigEndian(bytes, as: Int32.self)
            return Date(timeIntervalSince1970: PostgresEpoch.unixOffset + Double(days) * 86_400)
        default:
            throw mismatch(Date.self, type, bytes.count)
        }
    }
}
