import CLibPQ

/// A statement as the server prepared it: its text and the parameter types it was prepared with
/// (a different type list, e.g. a NULL where a value was before, is a different statement).
struct PreparedStatementKey: Hashable {
    var sql: String
    var types: [Oid]
}
