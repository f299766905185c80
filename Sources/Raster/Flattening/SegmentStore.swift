/// Growable segment storage (a class so the flattener can append through it; the rasteriser
/// copies it before writing when it is shared).
final class SegmentStore: @unchecked Sendable {
    private(set) var segments: UnsafeMutablePointer<Segment>
    private(set) var capacity: Int
    var count = 0

    init(capacity: Int = 256) {
        self.capacity = capacity
        self.segments = .allocate(capacity: capacity)
    }

    deinit { segments.deallocate() }

    func copy() -> SegmentStore {
        let c = SegmentStore(capacity: max(capacity, 1))
        c.segments.update(from: segments, count: count)
        c.count = count
        return c
    }

    @inline(__always)
    func append(_ x0: Float, _ y0: Float, _ x1: Float, _ y1: Float, _ dir: Float) {
        if count == capacity { grow() }
        segments[count] = Segment(x0: x0, y0: y0, x1: x1, y1: y1, dir: dir)
        count += 1
    }

    private func grow() {
        let bigger = UnsafeMutablePointer<Segment>.allocate(capacity: capacity * 2)
        bigger.update(from: segments, count: count)
        segments.deallocate()
        segments = bigger
        capacity *= 2
    }
}
