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
