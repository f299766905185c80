import Postgres

extension DeliveryRepository {
    /// One page of deliveries matching `search`, newest first.
    ///
    /// A search is at most three short reads, each bounded whatever the filter and the table size
    /// (docs/decisions/0020-search-from-indexes.md):
    ///
    /// 1. The newest ``recentWindow(limit:)`` rows below the cursor, read by the `seq` index and
    ///    filtered row by row. A filter that matches often (a country, the whole world, a common
    ///    name) fills its page here.
    /// 2. Otherwise the `seq` where that window ended (none: the window reached the oldest delivery,
    ///    so the page is complete).
    /// 3. The rest of the page from below the window, found by the filter's own index (GiST for an
    ///    area, trigrams for text, GIN for flags) and sorted. Few rows match here, or the window
    ///    would have filled the page: about `N × (limit + 1) / window` of N deliveries when matches
    ///    are spread evenly over time.
    ///
    /// Each read has one query shape whose plan does not depend on its values, so a prepared
    /// statement keeps a good plan whichever area came first: read 1 is forced onto the `seq`
    /// index by its inner `LIMIT`, read 3 off it by ordering on `seq + 0`.
    public func search(_ search: DeliverySearch) async throws -> DeliveryPage {
        try await self.search(search, window: Self.recentWindow(limit: search.limit))
    }

    /// ``search(_:)`` with the size of read 1's window given (tests make it tiny so that read 3 runs).
    func search(_ search: DeliverySearch, window: Int) async throws -> DeliveryPage {
        let below = search.afterSeq ?? .max
        guard search.isFiltered else {
            return page(try await newest(below: below, limit: search.limit + 1), limit: search.limit)
        }
        let recent = try await database.query(Self.recentQuery(search, below: below, window: window))
        var rows = try recent.rows.map(Self.delivery)
        guard rows.count <= search.limit else { return page(rows, limit: search.limit) }
        let windowEnd = try await database.query("""
            SELECT seq FROM deliveries WHERE seq < \(below) ORDER BY seq DESC OFFSET \(window - 1) LIMIT 1
            """)
        guard let end: Int64 = try windowEnd.first?.decode("seq") else { return page(rows, limit: search.limit) }
        let older = try await database.query(Self.indexedQuery(search, below: end, limit: search.limit + 1 - rows.count))
        rows += try older.rows.map(Self.delivery)
        return page(rows, limit: search.limit)
    }

    /// Rows read by the `seq` index before the filter's own index is asked: large enough that a
    /// filter matching one row in 200 fills its page here, small enough to read in a few
    /// milliseconds (10,200 rows for a page of 50: 1.5 ms at a million deliveries).
    static func recentWindow(limit: Int) -> Int {
        min(100_000, max(4096, 200 * (limit + 1)))
    }

    /// Read 1: the matches among the newest `window` rows below `below`, newest first.
    static func recentQuery(_ search: DeliverySearch, below: Int64, window: Int) -> PostgresQuery {
        let filter = DeliverySearchConditions.filter(search, form: .perRow)
        return """
            SELECT \(unescaped: columns) FROM (
                SELECT d.* FROM (SELECT * FROM deliveries WHERE seq < \(below) ORDER BY seq DESC LIMIT \(window)) d
                \(filter.whereClause) ORDER BY d.seq DESC LIMIT \(search.limit + 1)
            ) d LEFT JOIN proofs p ON \(unescaped: proofJoin)
            ORDER BY d.seq DESC
            """
    }

    /// Read 3: the newest `limit` matches below `below`, found by the filter's index. The inner
    /// select reads only `seq` (and the conditions' columns), so an area alone is answered by an
    /// index-only scan of `deliveries_destination_point`; ordering by `seq + 0` keeps the planner
    /// from walking the `seq` index instead, which is the slow plan when matches are rare and the
    /// planner cannot know it (a box's selectivity is a constant to it, a set from `proofs` is
    /// opaque). Status and time alone keep `ORDER BY seq`: their B-trees have real statistics, and
    /// `(status, seq DESC)` or a walk of `seq` past a period's end may be the right plan for them.
    /// An area across the 180th meridian is one such select per rectangle, merged: each stays an
    /// index-only scan.
    static func indexedQuery(_ search: DeliverySearch, below: Int64, limit: Int) -> PostgresQuery {
        let order = search.hasIndexedFilter ? "d.seq + 0" : "d.seq"
        let selects: [PostgresQuery] = DeliverySearchConditions.filterPerRectangle(search, form: .fromIndex).map {
            var filter = $0
            filter.add("d.seq < \(below)")
            return "SELECT d.seq FROM deliveries d \(filter.whereClause) ORDER BY \(unescaped: order) DESC LIMIT \(limit)"
        }
        let hits: PostgresQuery = selects.count == 1 ? selects[0] : """
            SELECT seq FROM (\(selects.map { "(\($0))" as PostgresQuery }.joined(separator: " UNION ALL "))) each
            ORDER BY seq DESC LIMIT \(limit)
            """
        return """
            SELECT \(unescaped: columns) FROM (\(hits)) hit
            JOIN deliveries d ON d.seq = hit.seq LEFT JOIN proofs p ON \(unescaped: proofJoin)
            ORDER BY d.seq DESC
            """
    }

    /// The newest `limit` deliveries below `below`, unfiltered.
    private func newest(below: Int64, limit: Int) async throws -> [Delivery] {
        let result = try await database.query("""
            SELECT \(unescaped: Self.columns) FROM (
                SELECT * FROM deliveries WHERE seq < \(below) ORDER BY seq DESC LIMIT \(limit)
            ) d LEFT JOIN proofs p ON \(unescaped: Self.proofJoin)
            ORDER BY d.seq DESC
            """)
        return try result.rows.map(Self.delivery)
    }

    private func page(_ rows: [Delivery], limit: Int) -> DeliveryPage {
        let page = keysetPage(rows, limit: limit, seq: \.seq)
        return DeliveryPage(deliveries: page.rows, nextSeq: page.nextSeq)
    }
}
