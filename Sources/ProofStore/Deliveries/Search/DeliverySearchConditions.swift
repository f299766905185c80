import Foundation
import Postgres

/// The `WHERE` conditions of a ``DeliverySearch`` over deliveries `d`, in the two forms the two
/// reads of ``DeliveryRepository/search(_:)`` need.
///
/// - ``Form/perRow``: each condition is checked on rows already in hand (the newest rows below the
///   cursor): a proof's flag or signer is looked up for that one delivery.
/// - ``Form/fromIndex``: each condition can be answered by an index over the whole table: the
///   deliveries with a flag or a signer come from the GIN indexes of `proofs` as a set.
///
/// An area is `destination <@ box` in the first, checked on the stored point; read 3 asks it of the
/// place index instead, one rectangle at a time (``placedPerRectangle(_:below:)``). The distance of
/// `near` is computed from the stored point in both (`destination[0]` is the longitude, `[1]` the
/// latitude). A text is its signer's name in both; its reference, recipient and address have a
/// read of their own, by band (``textBands(_:_:below:limit:)``).
///
/// A new filter (another status, a reason) is one more `if` in ``filter(_:form:)``.
enum DeliverySearchConditions {
    enum Form {
        case perRow
        case fromIndex
    }

    static func filter(_ search: DeliverySearch, form: Form) -> SQLFilter {
        var filter = SQLFilter()
        if let box = search.boundingBox { filter.add(inside(GeoRectangles(box))) }
        if let circle = search.near { filter.add(inside(GeoRectangles(around: circle))) }
        return filter.adding(nonSpatial(search, form: form))
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
        let rest = nonSpatial(search, form: .fromIndex)
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

    /// Every condition except the areas' rectangles (a circle's exact distance is one of them).
    private static func nonSpatial(_ search: DeliverySearch, form: Form) -> SQLFilter {
        var filter = SQLFilter()
        if let status = search.status { filter.add("d.status = \(status.rawValue)") }
        if let reason = search.attemptReason {
            filter.add("EXISTS (SELECT 1 FROM delivery_attempts a WHERE a.delivery_id = d.id AND a.reason = \(reason.rawValue)::text)")
        }
        if let since = search.since { filter.add("d.created_at >= \(since)") }
        if let until = search.until { filter.add("d.created_at < \(until)") }
        if let circle = search.near { filter.add(within(circle)) }
        if let text = search.text { filter.add(signed(text, form: form)) }
        if let flag = search.flag { filter.add(flagged(flag, form: form)) }
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

    /// The signer's name of the delivery's proof contains the text: row by row, or as a set from
    /// the trigram index of `proofs`. The rest of a text, the reference's start and the
    /// recipient and address, is read band by band (``textBands(_:_:below:limit:)``), and a text
    /// search merges the two (``DeliveryRepository/search(_:)``).
    static func signed(_ text: DeliveryTextQuery, form: Form) -> PostgresQuery {
        let contains = text.containsPattern
        switch form {
        case .perRow:
            return """
                EXISTS (SELECT FROM proofs s WHERE s.delivery_id = d.id AND s.received_at = d.delivered_at
                        AND s.signer_name ILIKE \(contains))
                """
        case .fromIndex:
            return "d.id IN (SELECT s.delivery_id FROM proofs s WHERE s.signer_name ILIKE \(contains))"
        }
    }

    /// Bits of `seq` below a text band: a band holds 32,768 consecutive deliveries. Written into
    /// ``band`` as a literal, because the planner uses migration 0021's indexes only for the very
    /// expression they were built on.
    static let bandShift = 15

    /// The band of a `delivery_search_text` row `t`, as migration 0021 indexes it.
    static let band = "(t.seq >> \(bandShift))"

    /// The newest `limit` deliveries below `below` whose reference starts with the text or whose
    /// recipient or address contains it, and which pass the search's other filters, newest first.
    ///
    /// The bands are asked newest first, each for its own newest `limit` matches: an equality on
    /// the band narrows the trigram index (`delivery_search_text_band_trgm`) and the reference
    /// index to that band's rows, so one band costs what it holds. The outer `LIMIT` stops asking
    /// once the page is full: a word common anywhere in the newest bands costs a band or two; a
    /// rare word asks every band, each cheaply. The search's other filters are tested on each
    /// band's matches as rows (a flag looked up per delivery).
    static func textBands(_ search: DeliverySearch, _ text: DeliveryTextQuery, below: Int64, limit: Int) -> PostgresQuery {
        let contains = text.containsPattern
        var others = search
        others.text = nil
        var inBand = SQLFilter()
        inBand.add("\(unescaped: band) = band.n")
        inBand.add("t.seq < \(below)")
        inBand.add("(\(prefix(text, of: "t.reference")) OR t.recipient_name ILIKE \(contains) OR t.address ILIKE \(contains))")
        let rest = filter(others, form: .perRow)
        inBand = inBand.adding(rest)
        // Without other filters a band's matches need no look-up of their deliveries. No ORDER BY
        // outside: PostgreSQL would read every band to sort them. The nested loop over the LATERAL
        // hands the bands over in generate_series's order (the tests check the page and the bands read).
        let rows: PostgresQuery = rest.conditions.isEmpty ? "delivery_search_text t" : "delivery_search_text t JOIN deliveries d ON d.id = t.delivery_id"
        return """
            SELECT hit.seq FROM generate_series(\(topBand(below: below)), 0, -1) AS band(n), LATERAL (
                SELECT t.seq FROM \(rows)
                \(inBand.whereClause)
                ORDER BY t.seq DESC LIMIT \(limit)
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

    /// The delivery's proof carries the flag. `cardinality(flags) > 0` names the partial index.
    static func flagged(_ flag: ProofFlag, form: Form) -> PostgresQuery {
        switch form {
        case .perRow:
            return """
                EXISTS (SELECT FROM proofs f WHERE f.delivery_id = d.id AND f.received_at = d.delivered_at
                        AND cardinality(f.flags) > 0 AND f.flags @> ARRAY[\(flag.rawValue)::text])
                """
        case .fromIndex:
            return """
                d.id IN (SELECT f.delivery_id FROM proofs f
                         WHERE cardinality(f.flags) > 0 AND f.flags @> ARRAY[\(flag.rawValue)::text])
                """
        }
    }
}
