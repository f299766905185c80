import Foundation
import Postgres
@testable import ProofStore
import Testing
import TestSupport

/// Searches over real PostgreSQL. Each search runs with read 1's window at several sizes, down to
/// one row, so that the index read (read 3) answers most of the page and must agree with the
/// newest-first scan.
@Suite("Delivery search", .needsDatabase)
struct DeliverySearchTests {
    static let windows = [1, 2, 3, 4096]

    @Test("areas: boxes across the 180th meridian, circles across it and around a city, the whole world")
    func areas() async throws {
        try await ScratchDatabase.with(prefix: "search_area") { _, database in
            let deliveries = DeliveryRepository(database: database, dataKeys: TestDataKeys.provider)
            let places: [(String, Double?, Double?)] = [
                ("FJ-EAST", -17.9, 179.5), ("FJ-WEST", -17.8, -179.5), ("BERLIN", 52.52, 13.405), ("NOWHERE", nil, nil),
                ("POTSDAM", 52.39, 13.06), ("SYDNEY", -33.87, 151.21), ("FJ-EDGE", -17.7, -180),
            ]
            for (reference, lat, lon) in places {
                let destination = lat.flatMap { lat in lon.map { GeoPoint(lat: lat, lon: $0) } }
                _ = try await deliveries.create(NewDelivery(reference: reference, recipientName: "R", address: "A", destination: destination), by: nil)
            }
            func references(_ search: DeliverySearch) async throws -> [String] {
                var answers: [[String]] = []
                for window in Self.windows {
                    answers.append(try await deliveries.search(search, window: window).deliveries.map(\.reference))
                }
                #expect(Set(answers.map { $0.joined(separator: ",") }).count == 1, "windows disagree: \(answers)")
                return answers.last ?? []
            }
            typealias Box = DeliverySearch.BoundingBox
            #expect(try await references(.init(boundingBox: Box(west: 179, south: -19, east: -179, north: -16)))
                    == ["FJ-EDGE", "FJ-WEST", "FJ-EAST"])
            #expect(try await references(.init(boundingBox: Box(west: 179, south: -19, east: 180, north: -16))) == ["FJ-EDGE", "FJ-EAST"])
            #expect(try await references(.init(boundingBox: Box(west: -180, south: -19, east: -179, north: -16))) == ["FJ-EDGE", "FJ-WEST"])
            #expect(try await references(.init(boundingBox: Box(west: 13, south: 52, east: 14, north: 53))) == ["POTSDAM", "BERLIN"])
            #expect(try await references(.init(boundingBox: Box(west: -180, south: -90, east: 180, north: 90)))
                    == ["FJ-EDGE", "SYDNEY", "POTSDAM", "BERLIN", "FJ-WEST", "FJ-EAST"])
            #expect(try await references(.init(near: .init(center: GeoPoint(lat: 52.52, lon: 13.40), radiusMeters: 5000))) == ["BERLIN"])
            #expect(try await references(.init(near: .init(center: GeoPoint(lat: 52.45, lon: 13.2), radiusMeters: 40000))) == ["POTSDAM", "BERLIN"])
            #expect(try await references(.init(near: .init(center: GeoPoint(lat: -17.8, lon: -179.9), radiusMeters: 100_000)))
                    == ["FJ-EDGE", "FJ-WEST", "FJ-EAST"])
            // A circle over the North Pole takes every longitude.
            #expect(try await references(.init(near: .init(center: GeoPoint(lat: 89, lon: 0), radiusMeters: 4_300_000))) == ["POTSDAM", "BERLIN"])
            #expect(try await references(.init(status: .pending, boundingBox: Box(west: 150, south: -40, east: 152, north: -30))) == ["SYDNEY"])
        }
    }

    @Test("status and time alone: the same answers from the window and from their own indexes")
    func statusAndTime() async throws {
        try await ScratchDatabase.with(prefix: "search_time") { _, database in
            let deliveries = DeliveryRepository(database: database, dataKeys: TestDataKeys.provider)
            for i in 0..<5 {
                _ = try await deliveries.create(NewDelivery(reference: "T-\(i)", recipientName: "R", address: "A", destination: nil), by: nil)
            }
            let future = Date().addingTimeInterval(86_400), past = Date(timeIntervalSince1970: 0)
            for window in Self.windows {
                let all = try await deliveries.search(.init(status: .pending, since: past, until: future, limit: 2), window: window)
                #expect(all.deliveries.map(\.reference) == ["T-4", "T-3"] && all.nextSeq != nil, "window \(window)")
                #expect(try await deliveries.search(.init(since: future), window: window).deliveries.isEmpty)
                #expect(try await deliveries.search(.init(status: .delivered), window: window).deliveries.isEmpty)
            }
        }
    }

    @Test("paging an area newest first, with matching deliveries inserted between pages")
    func pagingWithInserts() async throws {
        try await ScratchDatabase.with(prefix: "search_paging") { _, database in
            let deliveries = DeliveryRepository(database: database, dataKeys: TestDataKeys.provider)
            func add(_ reference: String, lon: Double) async throws {
                _ = try await deliveries.create(NewDelivery(reference: reference, recipientName: "R", address: "A",
                                                            destination: GeoPoint(lat: 0, lon: lon)), by: nil)
            }
            var expected: [String] = []
            for i in 0..<9 {
                try await add("IN-\(i)", lon: 179.5)        // inside the box (east of the 180th meridian)
                try await add("OUT-\(i)", lon: 10)         // outside
                expected.insert("IN-\(i)", at: 0)
            }
            for window in Self.windows {
                var search = DeliverySearch(boundingBox: .init(west: 179, south: -1, east: -179, north: 1), limit: 2)
                var seen: [String] = []
                while true {
                    let page = try await deliveries.search(search, window: window)
                    seen += page.deliveries.map(\.reference)
                    try await add("LATE-\(window)-\(seen.count)", lon: -179.5)   // inside, but newer than the cursor
                    guard let next = page.nextSeq else { break }
                    search.afterSeq = next
                }
                #expect(seen == expected, "window \(window)")
                expected = try await deliveries.search(DeliverySearch(boundingBox: search.boundingBox, limit: 500)).deliveries.map(\.reference)
            }
        }
    }

    @Test("text: reference prefix, recipient and address parts, ignoring case; % and _ are literal")
    func text() async throws {
        try await ScratchDatabase.with(prefix: "search_text") { _, database in
            let deliveries = DeliveryRepository(database: database, dataKeys: TestDataKeys.provider)
            let rows: [(String, String, String)] = [
                ("PKG-100", "Ada Lovelace", "1 Main St"), ("PKG-200", "100% Cotton Ltd", "2 Mill Rd"),
                ("PKG-300", "100 Percent Ltd", "3 Mill Rd"), ("XPKG-1", "Bob", "4 a_b Lane"), ("XPKG-2", "Bob", "5 axb Lane"),
                ("pkg_9", "Zoë Müller", "6 Back\\slash Ave"),
            ]
            for (reference, name, address) in rows {
                _ = try await deliveries.create(NewDelivery(reference: reference, recipientName: name, address: address, destination: nil), by: nil)
            }
            func references(_ q: String) async throws -> [String] { try await Self.references(q, in: deliveries) }
            #expect(try await references("pkg") == ["pkg_9", "PKG-300", "PKG-200", "PKG-100"])   // prefix, not XPKG
            #expect(try await references("PKG-1") == ["PKG-100"])
            #expect(try await references("lovelace") == ["PKG-100"])
            #expect(try await references("100%") == ["PKG-200"])
            #expect(try await references("a_b lane") == ["XPKG-1"])
            #expect(try await references("pkg_") == ["pkg_9"])
            #expect(try await references("back\\slash") == ["pkg_9"])
            #expect(try await references("MÜLLER") == ["pkg_9"])
            #expect(try await references("mill rd") == ["PKG-300", "PKG-200"])
            // Issue 41: a text without three letters or digits in a row has no trigram to narrow the
            // names; it matches the start of the reference only.
            #expect(try await references("%%%") == [])
            #expect(try await references("a_b") == [])
            #expect(try await references("k\\s") == [])
            #expect(try await references("pkg-") == ["PKG-300", "PKG-200", "PKG-100"])
            for shape in ["%%%", "---", "😀😀😀", "e s", "a_b", "k\\s", "ab cd", "e\u{301}\u{301}\u{301}", "p-1"] {
                #expect(DeliveryTextQuery(shape)?.matchesNames == false, "\(shape)")
            }
            for text in ["Łódź", "R-123", "x 100", "a_b lane"] { #expect(DeliveryTextQuery(text)?.matchesNames == true, "\(text)") }
            #expect(DeliveryTextQuery("ab") == nil && DeliveryTextQuery("  ab  ") == nil && DeliveryTextQuery("a\u{7}bc") == nil)
            #expect(DeliveryTextQuery(String(repeating: "x", count: 101)) == nil)
        }
    }

    @Test("0018: reference, recipient and address are copied to delivery_search_text by trigger; the runtime role only reads them")
    func searchTextTable() async throws {
        try await ScratchDatabase.with(prefix: "search_texts") { scratch, database in
            let deliveries = DeliveryRepository(database: database, dataKeys: TestDataKeys.provider)
            _ = try await deliveries.create(NewDelivery(reference: "ST-1", recipientName: "Grace Hopper", address: "7 Navy Yard",
                                                        destination: nil), by: nil)
            try await database.query("INSERT INTO deliveries (reference, recipient_name, address) VALUES ('ST-2', 'Alan Turing', '9 Bletchley Park')")
            try await PostgresClient.withClient(.forTests(url: scratch.ownerURL, poolSize: 1)) { owner in
                _ = try await owner.query("UPDATE deliveries SET address = '10 Bletchley Park' WHERE reference = 'ST-2'")
            }
            let rows = try await database.query("""
                SELECT t.reference, t.recipient_name, t.address FROM delivery_search_text t
                JOIN deliveries d ON d.id = t.delivery_id AND d.reference = t.reference ORDER BY d.reference
                """).rows.map { try $0.decode((String, String, String).self) }
            #expect(rows.map { [$0.0, $0.1, $0.2] } == [["ST-1", "Grace Hopper", "7 Navy Yard"], ["ST-2", "Alan Turing", "10 Bletchley Park"]])
            func references(_ q: String) async throws -> [String] { try await Self.references(q, in: deliveries) }
            #expect(try await references("bletchley") == ["ST-2"])
            #expect(try await references("st-") == ["ST-2", "ST-1"])
            #expect(try await references("9 bletchley").isEmpty)
            if scratch.url != scratch.ownerURL {
                await #expect(throws: PostgresError.self) {
                    try await database.query("INSERT INTO delivery_search_text VALUES (gen_random_uuid(), 'X', 'forged', 'text')")
                }
            }
        }
    }

    @Test("plans: one prepared statement uses the area index for a city and the whole world, in either order")
    func plans() async throws {
        try await ScratchDatabase.with(prefix: "search_plan", poolSize: 1) { scratch, database in
            // Enough rows that a sequential scan is not the cheap plan: 20,000 deliveries, a tenth in Berlin.
            try await database.query("""
                INSERT INTO deliveries (reference, recipient_name, address, destination_lat, destination_lon)
                SELECT 'P-' || g, 'R', 'A', CASE WHEN g % 10 = 0 THEN 52.5 + (g % 7) * 0.01 ELSE -60 + (g % 130) END,
                       CASE WHEN g % 10 = 0 THEN 13.4 ELSE -180 + (g * 7919 % 360) END
                FROM generate_series(1, 20000) g
                """)
            // As the owner: the runtime role may not ANALYZE (PostgreSQL skips it with a warning), and
            // without statistics the planner would not be choosing as it does in production.
            try await PostgresClient.withClient(.forTests(url: scratch.ownerURL, poolSize: 1)) { owner in
                _ = try await owner.query("ANALYZE deliveries")
            }
            let city = DeliverySearch(boundingBox: .init(west: 13.2, south: 52.4, east: 13.6, north: 52.6))
            let world = DeliverySearch(boundingBox: .init(west: -180, south: -90, east: 180, north: 90))
            for order in [[city, world], [world, city]] {
                for mode in ["auto", "force_generic_plan", "force_custom_plan"] {
                    try await database.withTransaction { session in
                        try await session.query("SET LOCAL plan_cache_mode = \(unescaped: mode)")
                        // Read 3's own settings (the same for every area), as the repository sends them.
                        for setting in DeliveryRepository.indexedSettings(city) { try await session.execute(setting) }
                        let indexed = { (search: DeliverySearch) in DeliveryRepository.indexedQuery(search, below: 15_000, limit: 51) }
                        let recent = { (search: DeliverySearch) in DeliveryRepository.recentQuery(search, below: 15_000, window: 10_200) }
                        for (name, query, index) in [("indexed_search", indexed, "deliveries_place_seq"),
                                                     ("recent_search", recent, "deliveries_seq")] {
                            try await session.query("PREPARE \(unescaped: name) AS \(unescaped: query(city).sql)")
                            // Six runs of each: from the sixth, `auto` may switch to the generic plan.
                            for search in order {
                                for _ in 0..<6 {
                                    let plan = try await Self.explain(session, name, query(search))
                                    // An index scan proper: a bitmap would read every match before sorting.
                                    #expect(Self.nodes(plan).contains { $0.index == index && $0.type.hasPrefix("Index") }, "\(mode) \(name): \(plan)")
                                }
                            }
                            try await session.query("DEALLOCATE \(unescaped: name)")
                        }
                    }
                }
            }
        }
    }

    @Test("plans: a box across the 180th meridian is read newest first from the place index, one scan per side, each stopping at the page")
    func meridianPlan() async throws {
        try await ScratchDatabase.with(prefix: "search_meridian", poolSize: 1) { scratch, database in
            try await database.query("""
                INSERT INTO deliveries (reference, recipient_name, address, destination_lat, destination_lon)
                SELECT 'M-' || g, 'R', 'A', -18 + (g % 5) * 0.1, CASE WHEN g % 2 = 0 THEN 179.5 ELSE -179.5 END
                FROM generate_series(1, 20000) g
                """)
            try await PostgresClient.withClient(.forTests(url: scratch.ownerURL, poolSize: 1)) { owner in
                _ = try await owner.query("VACUUM ANALYZE deliveries")
            }
            let search = DeliverySearch(boundingBox: .init(west: 179, south: -19, east: -179, north: -16))
            let query = DeliveryRepository.indexedQuery(search, below: 15_000, limit: 51)
            let result = try await database.withTransaction { session in
                for setting in DeliveryRepository.indexedSettings(search) { session.enqueue(setting) }
                return try await session.query("EXPLAIN (ANALYZE, FORMAT JSON) \(query)")
            }
            let plan = try result.decode(String.self, row: 0, column: 0)
            // 7,500 matches on each side below the cursor: reading them all and sorting (the old
            // plan, and the bitmap plan without read 3's settings) returns 7,500 rows from each
            // scan; read newest first, each stops at 51.
            let scans = Self.nodes(plan).filter { $0.index == "deliveries_place_seq" }
            #expect(scans.count == 2 && scans.allSatisfy { $0.type == "Index Scan" && $0.rows == 51 }, "\(plan)")
            #expect(!Self.nodes(plan).contains { $0.type.hasPrefix("Bitmap") || $0.type == "Sort" && $0.rows ?? 0 > 102 }, "\(plan)")
            // And the page is the newest 51 below the cursor, across both sides.
            let page = try await database.query(query).rows.map { try $0.decode(Int64.self, "seq") }
            #expect(page == Array((14_949...14_999).reversed()))
        }
    }

    /// The references a text search for `q` lists on its first page, newest first.
    static func references(_ q: String, in deliveries: DeliveryRepository) async throws -> [String] {
        let text = try #require(DeliveryTextQuery(q))
        return try await deliveries.search(.init(text: text)).deliveries.map(\.reference)
    }

    /// The JSON plan of `EXECUTE name(...)` with `query`'s values written as literals (run, with `analyze`).
    static func explain(_ session: PostgresSession, _ name: String, _ query: PostgresQuery, analyze: Bool = false) async throws -> String {
        let literals = query.binds.map { value -> String in
            switch value {
            case let number as Double: return "\(number)::float8"
            case let number as Int: return "\(number)"
            case let number as Int64: return "\(number)"
            case let text as String: return "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
            default: return "NULL"
            }
        }
        let options = analyze ? "ANALYZE, FORMAT JSON" : "FORMAT JSON"
        let result = try await session.query("EXPLAIN (\(unescaped: options)) EXECUTE \(unescaped: name)(\(unescaped: literals.joined(separator: ", ")))")
        return try result.decode(String.self, row: 0, column: 0)
    }

    /// Every node of a JSON plan: its type, the index and table it reads, if any, and its rows per
    /// loop and loops (`EXPLAIN ANALYZE`).
    static func nodes(_ plan: String) -> [(type: String, index: String?, relation: String?, rows: Int?, loops: Int?)] {
        var nodes: [(type: String, index: String?, relation: String?, rows: Int?, loops: Int?)] = []
        func walk(_ node: Any) {
            if let object = node as? [String: Any] {
                if let type = object["Node Type"] as? String {
                    nodes.append((type, object["Index Name"] as? String, object["Relation Name"] as? String,
                                  (object["Actual Rows"] as? NSNumber)?.intValue, (object["Actual Loops"] as? NSNumber)?.intValue))
                }
                object.values.forEach(walk)
            } else if let array = node as? [Any] {
                array.forEach(walk)
            }
        }
        if let json = try? JSONSerialization.jsonObject(with: Data(plan.utf8)) { walk(json) }
        return nodes
    }
}
