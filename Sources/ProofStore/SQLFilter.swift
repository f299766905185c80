import Postgres

/// Builds a `WHERE` clause of AND-ed conditions with numbered parameters (`$1`, `$2`, ...), for
/// the list queries whose filters are all optional. Values are always bound, never spliced.
///
/// A class, so a condition's text can bind its values inline: `filter.add("x = \(filter.bind(v))")`.
final class SQLFilter {
    private(set) var conditions: [String] = []
    /// The values bound so far, in placeholder order.
    private(set) var parameters: [any PostgresBindable] = []

    /// Binds `value` and returns its placeholder.
    func bind(_ value: any PostgresBindable) -> String {
        parameters.append(value)
        return "$\(parameters.count)"
    }

    /// Adds one condition.
    func add(_ condition: String) {
        conditions.append(condition)
    }

    /// `WHERE a AND b ...`, or nothing when there are no conditions.
    var whereClause: String {
        conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
    }
}

/// The rows of a keyset page fetched with `LIMIT limit + 1`: at most `limit` of them, and the seq to
/// continue after when the extra row showed there is more.
func keysetPage<Row>(_ rows: [Row], limit: Int, seq: (Row) -> Int64) -> (rows: [Row], nextSeq: Int64?) {
    guard rows.count > limit else { return (rows, nil) }
    let page = Array(rows.prefix(limit))
    return (page, page.last.map(seq))
}
