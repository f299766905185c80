/// The band buffers. Cells, flags and ink marks are all zero between uses.
final class BandScratch: @unchecked Sendable {
    private(set) var width = 0
    private(set) var stride = 0
    private(set) var blocksPerRow = 0
    /// `bandHeight × stride` cells.
    private(set) var acc: UnsafeMutablePointer<Float> = .allocate(capacity: 0)
    /// `bandHeight × blocksPerRow` flags: non-zero when a block of 16 cells may be non-zero.
    private(set) var flags: UnsafeMutablePointer<UInt8> = .allocate(capacity: 0)
    /// One mark per band row: non-zero when the row has any cell.
    private(set) var ink: UnsafeMutablePointer<UInt8> = .allocate(capacity: Rasterizer.bandHeight)
    /// `bandHeight × width` output bytes.
    private(set) var out: UnsafeMutablePointer<UInt8> = .allocate(capacity: 0)
    /// `width` zero bytes.
    private(set) var zero: UnsafeMutablePointer<UInt8> = .allocate(capacity: 0)
    var zeroRow: UnsafePointer<UInt8> { UnsafePointer(zero) }
    /// One row pointer per band row.
    let rows: UnsafeMutablePointer<UnsafePointer<UInt8>> = .allocate(capacity: Rasterizer.bandHeight)
    private(set) var order: UnsafeMutablePointer<Int32> = .allocate(capacity: 0)
    private(set) var active: UnsafeMutablePointer<Int32> = .allocate(capacity: 0)
    private var segmentCapacity = 0
    private(set) var starts: UnsafeMutablePointer<Int32> = .allocate(capacity: 0)
    private(set) var cursor: UnsafeMutablePointer<Int32> = .allocate(capacity: 0)
    private var bandCapacity = -1

    init() {
        ink.initialize(repeating: 0, count: Rasterizer.bandHeight)
    }

    deinit {
        for p in [UnsafeMutableRawPointer(acc), UnsafeMutableRawPointer(flags), UnsafeMutableRawPointer(ink),
                  UnsafeMutableRawPointer(out), UnsafeMutableRawPointer(zero), UnsafeMutableRawPointer(rows),
                  UnsafeMutableRawPointer(order), UnsafeMutableRawPointer(active), UnsafeMutableRawPointer(starts),
                  UnsafeMutableRawPointer(cursor)] {
            p.deallocate()
        }
    }

    /// Sizes the buffers for an image `width` wide with `bands` bands and `segments` segments.
    func prepare(width w: Int, bands: Int, segments n: Int) {
        if w != width {
            let bandH = Rasterizer.bandHeight
            let stride = w + 2
            let bpr = (stride + Cells.blockSize - 1) >> Cells.blockShift
            acc.deallocate()
            flags.deallocate()
            out.deallocate()
            zero.deallocate()
            acc = .allocate(capacity: bandH * stride)
            acc.initialize(repeating: 0, count: bandH * stride)
            flags = .allocate(capacity: bandH * bpr)
            flags.initialize(repeating: 0, count: bandH * bpr)
            out = .allocate(capacity: bandH * w)
            zero = .allocate(capacity: w)
            zero.initialize(repeating: 0, count: w)
            self.width = w
            self.stride = stride
            self.blocksPerRow = bpr
        }
        if n > segmentCapacity {
            let cap = max(n, segmentCapacity * 2)
            order.deallocate()
            active.deallocate()
            order = .allocate(capacity: cap)
            active = .allocate(capacity: cap)
            segmentCapacity = cap
        }
        if bands > bandCapacity {
            starts.deallocate()
            cursor.deallocate()
            starts = .allocate(capacity: bands + 1)
            cursor = .allocate(capacity: bands + 1)
            bandCapacity = bands
        }
    }
}
