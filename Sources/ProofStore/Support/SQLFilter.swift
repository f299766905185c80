import Postgres

/// A `WHERE` clause of AND-ed conditions, for the list queries whose filters are all optional.
/// Each condition is a ``PostgresQuery``, so its values are bound, never spliced:
/// `filter.add("d.status = \(status)")`.
struct SQLFilter {
    private(set) var conditions: [PostgresQuery] = []

    /// Adds one condition.
    mutating func add(_ condition: PostgresQuery) {
        conditions.append(condition)
    }

    /// This filter and every condition of `other`.
    func adding(_ other: SQLFilter) -> SQLFilter {
        var both = self
        both.conditions += other.conditions
        return both
    }

    /// `WHERE a AND b ...`, or nothing when there are no conditions.
    var whereClause: PostgresQuery {
        conditions.isEmpty ? "" : "WHERE \(conditions.joined(separator: " AND "))"
    }
}

/// The rows of a keyset page fetched with `LIMIT limit + 1`: at most `limit` of them, and the seq to
/// continue after when the extra row showed there is more.
func keysetPage<Row>(_ rows: [Row], limit: Int, seq: (Row) -> Int64) -> (rows: [Row], nextSeq: Int64?) {
    guard rows.count > limit else { return (rows, nil) }
    let page = Array(rows.prefix(limit))
    return (page, page.last.map(seq))
}
