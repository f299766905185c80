/// An audit event's details as JSON text: one object of strings, keys in UTF-8 byte order, `/`
/// left as it is. These are the bytes Foundation's `JSONEncoder` gives with `.sortedKeys` and
/// `.withoutEscapingSlashes` (a test compares the two over every ASCII character), written
/// directly (``JSONText``): the encoder cost tens of microseconds per event, and every upload and
/// every read of a proof appends one.
enum AuditDetailsJSON {
    static func encode(_ details: [String: String]) -> String {
        JSONText.object { object in
            for key in details.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) { object.string(key, details[key]) }
        }
    }
}
