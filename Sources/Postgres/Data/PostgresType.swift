import Foundation

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

public enum PostgresEpoch {
    /// Seconds between 1970-01-01 and 2000-01-01.
    public static let unixOffset: Double = 946_684_800

    /// `date` as a `timestamptz` stores it: whole microseconds since 2000-01-01 00:00:00 UTC.
    public static func micros(_ date: Date) -> Int64 {
        Int64(((date.timeIntervalSince1970 - unixOffset) * 1_000_000).rounded())
    }

    /// `date` as a `timestamptz` stores it, in whole microseconds since the Unix epoch (what
    /// `extract(epoch from column) * 1000000` gives back exactly).
    public static func unixMicros(_ date: Date) -> Int64 {
        micros(date) + Int64(unixOffset) * 1_000_000
    }
}
