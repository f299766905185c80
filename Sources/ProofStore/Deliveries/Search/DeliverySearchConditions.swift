import Foundation
import Postgres

/// The `WHERE` conditions of a ``DeliverySearch`` over deliveries `d`, and the read by band that
/// answers its text or flag.
///
/// - ``filter(_:)`` checks a search's conditions on rows already in hand (read 1's newest rows
///   below the cursor, or a band's matches): a flag beside a text is looked up for that one delivery.
/// - ``placedPerRectangle(_:below:)`` asks an area of the place index instead, one rectangle at a
///   time, newest first.
/// - ``bands(_:below:limit:)`` reads a text or a flag from its own indexes, one band of deliveries
///   at a time, newest band first.
///
/// An area is `destination <@ box` on the stored point. The distance of `near` is computed from
/// the stored point (`destination[0]` is the longitude, `[1]` the latitude).
///
/// A new filter (another status, a reason) is one more `if` in ``nonSpatial(_:)``.
enum DeliverySearchConditions {
    /// Every condition of `search` but its text, row by row (a text is always read by band).
    static func filter(_ search: DeliverySearch) -> SQLFilter {
        var filter = SQLFilter()
        if let box = search.boundingBox { filter.add(inside(GeoRectangles(box))) }
        if let circle = search.near { filter.add(inside(GeoRectangles(around: circle))) }
        return filter.adding(nonSpatial(search))
    }

    /// The search once per rectangle of its area, each answered by the place index
    /// `deliveries_place_seq` (migration 0019) together with the cursor (`seq` below `below`), so
    /// that ordering by ``newestPlaceFirst`` reads the matches newest first. The rectangles are
    /// disjoint (``GeoRectangles``), so every match is in exactly one of the filters; a search
    /// without an area has one filter, with the cursor as a plain condition.
    static func placedPerRectangle(_ search: DeliverySearch, below: Int64) -> [SQLFilter] {
        var areas: [[GeoRectangles.Rectangle]] = [[]]
        for area in [search.boundingBox.map { GeoRectangles($0) }, search.near.map { GeoRectangles(around: $0) }] {
            guard let area else { continue }
            areas = areas.flatMap { chosen in area.rectangles.map { chosen + [$0] } }
        }
        let rest = nonSpatial(search)
        return areas.map { rectangles in
            var filter = SQLFilter()
            for rectangle in rectangles { filter.add(placed(rectangle, below: below)) }
            // A rectangle's cube carries the cursor; the place index is partial (destinations only).
            filter.add(rectangles.isEmpty ? "d.seq < \(below)" : "d.destination_lat IS NOT NULL")
            return filter.adding(rest)
        }
    }

    /// A delivery as a point of three dimensions (longitude, latitude, seq), written exactly as the
    /// expression of `deliveries_place_seq`. Built one dimension at a time because those `cube`
    /// functions are STRICT: without a destination it is NULL and matches no area.
    static let place = "extensions.cube(extensions.cube(extensions.cube(d.destination_lon::float8), d.destination_lat::float8), d.seq::float8)"

    /// Read 3's order for an area: the place's seq, highest first (cube's `~>` with a negative
    /// coordinate, 6 being the upper end of the third dimension: the form a GiST index can hand over in order).
    static let newestPlaceFirst: PostgresQuery = "\(unescaped: place) OPERATOR(extensions.~>) -6"

    /// Destination inside one rectangle and `seq` below `below`, as one cube the place index answers.
    static func placed(_ rectangle: GeoRectangles.Rectangle, below: Int64) -> PostgresQuery {
        """
        \(unescaped: place) OPERATOR(extensions.<@) extensions.cube(
            ARRAY[\(rectangle.west)::float8, \(rectangle.south)::float8, 0::float8],
            ARRAY[\(rectangle.east)::float8, \(rectangle.north)::float8, (\(below) - 1)::float8])
        """
    }

    /// Every condition except the areas' rectangles (a circle's exact distance is one of them)
    /// and the text.
    private static func nonSpatial(_ search: DeliverySearch) -> SQLFilter {
        var filter = SQLFilter()
        if let status = search.status { filter.add("d.status = \(status.rawValue)") }
        if let reason = search.attemptReason {
            filter.add("EXISTS (SELECT 1 FROM delivery_attempts a WHERE a.delivery_id = d.id AND a.reason = \(reason.rawValue)::text)")
        }
        if let since = search.since { filter.add("d.created_at >= \(since)") }
        if let until = search.until { filter.add("d.created_at < \(until)") }
        if let circle = search.near { filter.add(within(circle)) }
        if let flag = search.flag { filter.add(flagged(flag)) }
        return filter
    }

    /// Destination inside one of the rectangles (read 1 tests its rows one by one).
    static func inside(_ area: GeoRectangles) -> PostgresQuery {
        let boxes = area.rectangles.map(inside)
        return boxes.count == 1 ? boxes[0] : "(\(boxes.joined(separator: " OR ")))"
    }

    /// Destination inside one rectangle.
    static func inside(_ rectangle: GeoRectangles.Rectangle) -> PostgresQuery {
        "d.destination <@ box(point(\(rectangle.west), \(rectangle.south)), point(\(rectangle.east), \(rectangle.north)))"
    }

    /// The exact haversine distance from the circle's centre, within its radius.
    static func within(_ circle: DeliverySearch.Circle) -> PostgresQuery {
        let lat = circle.center.lat, lon = circle.center.lon
        return """
            2 * \(unescaped: "\(GeoPoint.earthRadius)") * asin(least(1, sqrt(
                power(sin(radians(d.destination[1] - \(lat)) / 2), 2)
                + cos(radians(\(lat))) * cos(radians(d.destination[1])) * power(sin(radians(d.destination[0] - \(lon)) / 2), 2)
            ))) <= \(circle.radiusMeters)
            """
    }

    /// Bits of `seq` below a band: a band holds 32,768 consecutive deliveries. Written into
    /// ``band(of:)`` as a literal, because the planner uses migrations 0021's and 0022's indexes only
    /// for the very expression they were built on.
    static let bandShift = 15

    /// The band of the seq `column`, as migrations 0021 and 0022 index it.
    static func band(of column: String) -> PostgresQuery {
        "(\(unescaped: column) >> \(unescaped: "\(bandShift)"))"
    }

    /// The newest `limit` deliveries below `below` that match the search's text (or, without one,
    /// its flag) and pass its other filters, newest first.
    ///
    /// The bands are asked newest first, each for its own newest `limit` matches: an equality on the
    /// band narrows each GIN index's posting lists to that band's rows, so one band costs what it
    /// holds. The outer `LIMIT` stops asking once the page is full: a word or flag common anywhere
    /// in the newest bands costs a band or two; a rare one asks every band, each cheaply.
    ///
    /// A text matches the reference's start, the recipient or the address (`delivery_search_text`,
    /// migration 0021) or the signer's name (`proof_search`, migration 0022) — a text without three
    /// letters or digits in a row the reference's start only (``DeliveryTextQuery``); a flag, the proof's
    /// flags (`proof_search`). The search's other filters, a flag beside a text included, are tested
    /// on each band's matches as rows.
    static func bands(_ search: DeliverySearch, below: Int64, limit: Int) -> PostgresQuery {
        var others = search
        let sources: [(table: String, seq: String, condition: PostgresQuery)]
        if let text = search.text, !text.matchesNames {
            // No trigram to narrow the names: the reference's start alone, from its band index.
            others.text = nil
            sources = [("delivery_search_text t", "t.seq", prefix(text, of: "t.reference"))]
        } else if let text = search.text {
            others.text = nil
            let contains = text.containsPattern
            sources = [
                ("delivery_search_text t", "t.seq",
                 "(\(prefix(text, of: "t.reference")) OR t.recipient_name ILIKE \(contains) OR t.address ILIKE \(contains))"),
                ("proof_search s", "s.delivery_seq", "s.signer_name ILIKE \(contains)"),
            ]
        } else if let flag = search.flag {
            others.flag = nil
            sources = [("proof_search s", "s.delivery_seq", "cardinality(s.flags) > 0 AND s.flags @> ARRAY[\(flag.rawValue)::text]")]
        } else {
            preconditionFailure("a search is read by band for its text or its flag")
        }
        let rest = filter(others)
        // Matches are sorted by `seq + 0`: ordered by `seq` itself, the planner may walk
        // proof_search's primary key down from the cursor instead, testing the band and the flag
        // row by row, which reads every row below the cursor when the flag is rare.
        //
        // A delivery matched twice (its recipient and its signer) is one row: UNION, not UNION ALL.
        // Without other filters each source gives only its own newest `limit` of the band (the
        // newest `limit` of the union are among them), so the union hashes at most `limit` rows of
        // each, not every match of a word common in the band; and a band's matches need no look-up
        // of their deliveries. With other filters, every match of the band is tested first.
        let union = sources.map { source -> PostgresQuery in
            let select: PostgresQuery = """
                SELECT \(unescaped: source.seq) FROM \(unescaped: source.table)
                WHERE \(band(of: source.seq)) = band.n AND \(unescaped: source.seq) < \(below) AND \(source.condition)
                """
            return rest.conditions.isEmpty && sources.count > 1
                ? "(\(select) ORDER BY \(unescaped: source.seq) + 0 DESC LIMIT \(limit))" : select
        }.joined(separator: " UNION ")
        let rows: PostgresQuery = rest.conditions.isEmpty ? "(\(union)) m(seq)" : "(\(union)) m(seq) JOIN deliveries d ON d.seq = m.seq"
        // No ORDER BY outside: PostgreSQL would read every band to sort them. The nested loop over
        // the LATERAL hands the bands over in generate_series's order (the tests check the page and
        // the bands read).
        return """
            SELECT hit.seq FROM generate_series(\(topBand(below: below)), 0, -1) AS band(n), LATERAL (
                SELECT m.seq FROM \(rows)
                \(rest.whereClause)
                ORDER BY m.seq + 0 DESC LIMIT \(limit)
            ) hit
            LIMIT \(limit)
            """
    }

    /// The band of the newest delivery below `below`: the cursor, or the newest delivery when the
    /// cursor is above it (a first page's is `Int64.max`: its bands would be empty, but asked).
    static func topBand(below: Int64) -> PostgresQuery {
        "(least(greatest(\(below)::bigint, 1), (SELECT coalesce(max(seq), 0) FROM deliveries) + 1) - 1) >> \(unescaped: "\(bandShift)")"
    }

    /// `column` starts with the text, ignoring case: a range of its folded value.
    ///
    /// A range of the folded reference (`delivery_search_text_band_reference`), not a LIKE: a
    /// prepared statement's generic plan can use a range over a bound value, where a LIKE prefix
    /// becomes a range only when the pattern is a literal; and trigrams do poorly on the prefix
    /// every reference shares. U+10FFFF sorts after every other character (C collation).
    static func prefix(_ text: DeliveryTextQuery, of column: String) -> PostgresQuery {
        """
        (lower(\(unescaped: column)) COLLATE "C" >= lower(\(text.text)) COLLATE "C"
         AND lower(\(unescaped: column)) COLLATE "C" < lower(\(text.text)) || chr(1114111) COLLATE "C")
        """
    }

    /// The delivery's proof carries the flag: its `proof_search` row, found by the delivery's seq.
    static func flagged(_ flag: ProofFlag) -> PostgresQuery {
        "EXISTS (SELECT FROM proof_search f WHERE f.delivery_seq = d.seq AND f.flags @> ARRAY[\(flag.rawValue)::text])"
    }
}
