/// A JSON document bound as `jsonb` (sent as text with the jsonb OID).
public struct PostgresJSONB: PostgresBindable, Equatable {
    /// The JSON text.
    public var json: String
    /// Wraps JSON text; the server validates it.
    public init(_ json: String) { self.json = json }
    public var postgresParameter: PostgresParameter { .text(json, oid: PostgresType.jsonb) }
}

extension PostgresJSONB: PostgresDecodable {
    public static func decode(from bytes: UnsafeRawBufferPointer, type: UInt32) throws(PostgresError) -> PostgresJSONB {
        guard type == PostgresType.jsonb || type == PostgresType.json else { throw mismatch(PostgresJSONB.self, type, bytes.count) }
        return PostgresJSONB(try String.decode(from: bytes, type: type))
    }
}
