/// fastest zlib settings measured.
public struct PNGOptions: Sendable, Equatable {
    public var pixelFormat: PNGPixelFormat = .automatic
    public var filter: PNGFilter = .none
    /// What compresses the rows; ``PNGCompressor/runLength`` takes only ``PNGFilter/none``.
    public var compressor: PNGCompressor = .runLength
    /// zlib level 0...9.
    public var compressionLevel: Int = 6
    public var strategy: PNGCompressionStrategy = .rle
    /// zlib memLevel 1...9. 6 (not zlib's 8): with Z_RLE the hash table is never used but
    /// is still slid every 32 KiB, and a smaller one slides less (docs/decisions/0002-run-length-deflate.md).
    public var memoryLevel: Int = 6
    /// zlib windowBits 8...15.
    public var windowBits: Int = 15

    public init(
        pixelFormat: PNGPixelFormat = .automatic, filter: PNGFilter = .none, compressor: PNGCompressor = .runLength,
        compressionLevel: Int = 6, strategy: PNGCompressionStrategy = .rle, memoryLevel: Int = 6, windowBits: Int = 15
    ) {
        self.pixelFormat = pixelFormat
        self.filter = filter
        self.compressor = compressor
        self.compressionLevel = compressionLevel
        self.strategy = strategy
        self.memoryLevel = memoryLevel
        self.windowBits = windowBits
    }

    public static let `default` = PNGOptions()
}
