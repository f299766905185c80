/// The filled shape of a reconstructed signature: closed subpaths to be filled with the
/// non-zero winding rule.
///
/// Contract for consumers (rasteriser, SVG): every subpath starts with `.move` and ends with
/// `.close`; only `move`, `line`, `quad`, `cubic` and `close` occur (dots are four cubic arcs).
/// Subpaths are emitted with a positive shoelace area in y-down coordinates (clockwise on
/// screen), so overlapping pieces add up rather than cancel, except where the smoothing itself
/// twists a segment at a very sharp turn.
public struct Outline: Sendable, Equatable {
    /// The path commands, in canvas units unless transformed.
    public var elements: [PathElement]
    /// Bounding box of every point in ``elements`` including control points (a superset of the
    /// painted area). ``Rect/zero`` when the outline is empty.
    public var bounds: Rect

    /// Creates an outline, computing its bounds.
    public init(elements: [PathElement]) {
        self.elements = elements
        self.bounds = Outline.computeBounds(elements)
    }

    /// `true` when there is nothing to fill.
    @inlinable public var isEmpty: Bool { elements.isEmpty }

    /// Number of closed subpaths.
    public var subpathCount: Int {
        var n = 0
        for e in elements { if case .move = e { n += 1 } }
        return n
    }

    /// The outline with every point mapped through `transform` (bounds recomputed).
    public func transformed(by transform: Transform) -> Outline {
        var out: [PathElement] = []
        out.reserveCapacity(elements.count)
        for e in elements { out.append(e.transformed(by: transform)) }
        return Outline(elements: out)
    }

    /// Bounding box of all points (including control points) of `elements`.
    public static func computeBounds(_ elements: [PathElement]) -> Rect {
        var r: Rect? = nil
        @inline(__always) func add(_ p: Point) {
            if r == nil { r = Rect(minX: p.x, minY: p.y, maxX: p.x, maxY: p.y) } else { r!.include(p) }
        }
        for e in elements {
            switch e {
            case .move(let p), .line(let p): add(p)
            case .quad(let c, let p): add(c); add(p)
            case .cubic(let c1, let c2, let p): add(c1); add(c2); add(p)
            case .close: break
            }
        }
        return r ?? .zero
    }
}
