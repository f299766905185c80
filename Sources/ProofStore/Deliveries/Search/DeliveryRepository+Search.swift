import Postgres

extension DeliveryRepository {
    /// One page of deliveries matching `search`, newest first.
    ///
    /// A search with a text or a flag reads them by band from the cursor: the newest band of 32,768
    /// deliveries first, each band through the GIN indexes of `delivery_search_text` (reference,
    /// recipient, address) and `proof_search` (signer's name, flags), stopping at a full page
    /// (``bandsQuery(_:below:limit:)``, docs/decisions/0039-text-search-by-band.md and
    /// 0040-proof-search-by-band.md). Its other filters are tested on each band's matches.
    ///
    /// Any other search is at most three short reads, each bounded whatever the filter and the
    /// table size (docs/decisions/0020-search-from-indexes.md):
    ///
    /// 1. The newest ``recentWindow(limit:)`` rows below the cursor, read by the `seq` index and
    ///    filtered row by row. A filter that matches often (a country, the whole world, a status)
    ///    fills its page here.
    /// 2. Otherwise the `seq` where that window ended (none: the window reached the oldest delivery,
    ///    so the page is complete).
    /// 3. The rest of the page from below the window: an area from the GiST index over place and
    ///    seq, which hands the matches over newest first; status and time from their B-trees.
    ///
    /// Each read has one query shape whose plan does not depend on its values, so a prepared
    /// statement keeps a good plan whichever area came first: read 1 is forced onto the `seq`
    /// index by its inner `LIMIT`, read 3 onto the place index by its order, the bands onto their
    /// indexes by the equality on the band.
    public func search(_ search: DeliverySearch) async throws -> DeliveryPage {
        try await self.search(search, window: Self.recentWindow(limit: search.limit))
    }

    /// ``search(_:)`` with the size of read 1's window given (tests make it tiny so that read 3 runs).
    func search(_ search: DeliverySearch, window: Int) async throws -> DeliveryPage {
        let below = search.afterSeq ?? .max
        guard search.isFiltered else {
            return page(try await newest(below: below, limit: search.limit + 1), limit: search.limit)
        }
        if search.readsByBand {
            let rows = try await inTransaction(Self.bandSettings(for: search), Self.bandsQuery(search, below: below, limit: search.limit + 1))
            return page(rows, limit: search.limit)
        }
        var rows = try await database.query(Self.recentQuery(search, below: below, window: window)).rows.map(Self.delivery)
        guard rows.count <= search.limit else { return page(rows, limit: search.limit) }
        guard let end = try await windowEnd(below: below, window: window) else { return page(rows, limit: search.limit) }
        rows += try await inTransaction(Self.indexedSettings(search), Self.indexedQuery(search, below: end, limit: search.limit + 1 - rows.count))
        return page(rows, limit: search.limit)
    }

    /// Read 2: the `seq` where read 1's window ended; `nil` when it reached the oldest delivery.
    private func windowEnd(below: Int64, window: Int) async throws -> Int64? {
        let result = try await database.query("""
            SELECT seq FROM deliveries WHERE seq < \(below) ORDER BY seq DESC OFFSET \(window - 1) LIMIT 1
            """)
        return try result.first?.decode("seq")
    }

    /// `query` after `settings`, in a transaction of their own when there are any.
    private func inTransaction(_ settings: [PostgresQuery], _ query: PostgresQuery) async throws -> [Delivery] {
        guard !settings.isEmpty else { return try await database.query(query).rows.map(Self.delivery) }
        return try await database.withTransaction { session in
            for setting in settings { session.enqueue(setting) }
            return try await session.query(query).rows.map(Self.delivery)
        }
    }

    /// Rows read by the `seq` index before the filter's own index is asked: large enough that a
    /// filter matching one row in 200 fills its page here, small enough to read in a few
    /// milliseconds (10,200 rows for a page of 50: 1.5 ms at a million deliveries).
    static func recentWindow(limit: Int) -> Int {
        min(100_000, max(4096, 200 * (limit + 1)))
    }

    /// Read 1: the matches among the newest `window` rows below `below`, newest first.
    static func recentQuery(_ search: DeliverySearch, below: Int64, window: Int) -> PostgresQuery {
        let filter = DeliverySearchConditions.filter(search)
        return """
            SELECT \(unescaped: columns) FROM (
                SELECT d.* FROM (SELECT * FROM deliveries WHERE seq < \(below) ORDER BY seq DESC LIMIT \(window)) d
                \(filter.whereClause) ORDER BY d.seq DESC LIMIT \(search.limit + 1)
            ) d LEFT JOIN proofs p ON \(unescaped: proofJoin)
            ORDER BY d.seq DESC
            """
    }

    /// Read 3: the newest `limit` matches below `below`, found by the filter's index.
    ///
    /// - An area: each rectangle is read from the place index `deliveries_place_seq` newest
    ///   first, so the scan stops after `limit` matches however many the area holds; the
    ///   rectangles' pages are merged.
    /// - Status and time alone keep `ORDER BY seq`: their B-trees have real statistics, and
    ///   `(status, seq DESC)` or a walk of `seq` past a period's end may be the right plan for them.
    static func indexedQuery(_ search: DeliverySearch, below: Int64, limit: Int) -> PostgresQuery {
        let order: PostgresQuery = readsByPlace(search) ? DeliverySearchConditions.newestPlaceFirst : "d.seq DESC"
        let selects: [PostgresQuery] = DeliverySearchConditions.placedPerRectangle(search, below: below).map {
            "SELECT d.seq FROM deliveries d \($0.whereClause) ORDER BY \(order) LIMIT \(limit)"
        }
        let hits: PostgresQuery = selects.count == 1 ? selects[0] : """
            SELECT seq FROM (\(selects.map { "(\($0))" as PostgresQuery }.joined(separator: " UNION ALL "))) each
            ORDER BY seq DESC LIMIT \(limit)
            """
        return deliveries(at: hits)
    }

    /// A text or flag search's page: the newest `limit` matches below `below` that pass the other
    /// filters, read band by band (``DeliverySearchConditions/bands(_:below:limit:)``), so a word
    /// or a flag common in old deliveries costs a few bands, not every match.
    static func bandsQuery(_ search: DeliverySearch, below: Int64, limit: Int) -> PostgresQuery {
        deliveries(at: DeliverySearchConditions.bands(search, below: below, limit: limit))
    }

    /// The deliveries (with their proofs' columns) whose `seq` the query `hits` selects, newest first.
    private static func deliveries(at hits: PostgresQuery) -> PostgresQuery {
        """
        SELECT \(unescaped: columns) FROM (\(hits)) hit
        JOIN deliveries d ON d.seq = hit.seq LEFT JOIN proofs p ON \(unescaped: proofJoin)
        ORDER BY d.seq DESC
        """
    }

    /// True when read 3 reads the area's matches newest first from the place index.
    static func readsByPlace(_ search: DeliverySearch) -> Bool {
        search.boundingBox != nil || search.near != nil
    }

    /// What read 3 sets for its own transaction before it runs. Reading an area newest first: no
    /// bitmap scans. cube's `<@` has no statistics, so the planner takes an area to hold a fixed
    /// 0.1 % of the table; when that is not many more rows than the page, it reads the whole area
    /// with a bitmap and sorts it (every match: 7,500 of 100,000 in the tests). Without bitmaps the
    /// index scan that hands the rows over in order is the cheapest plan it has, at any size.
    static func indexedSettings(_ search: DeliverySearch) -> [PostgresQuery] {
        readsByPlace(search) ? ["SET LOCAL enable_bitmapscan = off"] : []
    }

    /// What the read by band sets for its own transaction: no parallel workers and no JIT
    /// compilation. A generic plan does not know how many bands will be asked (a thousand, it
    /// assumes); for that it starts workers and compiles the plan, each of which costs more than
    /// the read.
    static let bandSettings: [PostgresQuery] = ["SET LOCAL max_parallel_workers_per_gather = 0", "SET LOCAL jit = off"]

    /// ``bandSettings``, and for a text that matches the reference's start only, no bitmap scans:
    /// the band's trigram index (a GIN index, read only through bitmaps) would otherwise hand over
    /// every row of the band for the prefix to be tested on, where the band's reference index
    /// reads just the prefix's rows.
    static func bandSettings(for search: DeliverySearch) -> [PostgresQuery] {
        guard let text = search.text, !text.matchesNames else { return bandSettings }
        return bandSettings + ["SET LOCAL enable_bitmapscan = off"]
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
