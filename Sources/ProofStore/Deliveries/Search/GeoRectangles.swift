import Foundation

/// A search area as a few longitude/latitude rectangles, the shape the GiST index on
/// `deliveries.destination` answers (`destination <@ box`). A box that crosses the 180th meridian
/// is two rectangles, one each side; a circle is first widened to the rectangle around it.
struct GeoRectangles: Equatable {
    /// One rectangle in degrees, `west <= east`, longitudes within `-180...180`.
    struct Rectangle: Equatable {
        var west: Double
        var south: Double
        var east: Double
        var north: Double
    }

    /// Disjoint, so a search may read each from the index on its own and merge without duplicates.
    let rectangles: [Rectangle]

    /// The rectangles of `box` (`west > east` crosses the 180th meridian; a width of 360° or more is
    /// every longitude). A box's rectangles are at most three: when it ends at 180, the meridian
    /// stored as -180 is a rectangle of its own.
    init(_ box: DeliverySearch.BoundingBox) {
        self.init(west: box.west, south: box.south, east: box.east, north: box.north)
    }

    /// The rectangles holding every point within `circle` on the sphere: the latitude band of the
    /// radius, and the longitudes within reach at the circle's latitude (every longitude when the
    /// circle reaches over a pole). Points inside them still need the exact distance check.
    init(around circle: DeliverySearch.Circle) {
        let angle = circle.radiusMeters / GeoPoint.earthRadius
        let center = circle.center
        let south = center.lat - angle * 180 / .pi, north = center.lat + angle * 180 / .pi
        let reach = angle >= .pi / 2 ? 2 : sin(angle) / cos(center.lat * .pi / 180)
        guard south > -90, north < 90, reach < 1 else {
            self.init(west: -180, south: max(-90, south), east: 180, north: min(90, north))
            return
        }
        let halfWidth = asin(reach) * 180 / .pi
        self.init(west: center.lon - halfWidth, south: south, east: center.lon + halfWidth, north: north)
    }

    private init(west: Double, south: Double, east: Double, north: Double) {
        if east - west >= 360 {
            rectangles = [Rectangle(west: -180, south: south, east: 180, north: north)]
            return
        }
        let from = GeoPoint.normalizedLongitude(west)
        let to = east == 180 ? 180 : GeoPoint.normalizedLongitude(east)
        if from <= to {
            rectangles = [Rectangle(west: from, south: south, east: to, north: north)]
                // Stored longitudes stop short of 180 (it is kept as -180): a box to 180 takes that meridian too.
                + (to == 180 && from > -180 ? [Rectangle(west: -180, south: south, east: -180, north: north)] : [])
        } else {
            rectangles = [Rectangle(west: from, south: south, east: 180, north: north),
                          Rectangle(west: -180, south: south, east: to, north: north)]
        }
    }
}
