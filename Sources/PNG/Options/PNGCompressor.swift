/// options and on the command line.
public enum PNGCompressor: String, Sendable, Equatable {
    /// Our run-length deflate: each repeat of the previous byte is a match at distance 1, as with
    /// zlib's `Z_RLE` strategy, without zlib's window and hash upkeep, in a fraction of its time
    /// on signature images (docs/decisions/0002-run-length-deflate.md). Unfiltered rows only; libpng writes the chunks.
    case runLength = "run-length"
    /// zlib, driven by libpng, with the options' level, strategy, memLevel and windowBits.
    case zlib
}

/// Encoder settings. The defaults were chosen by measurement on real signatures
/// (docs/decisions/0001-png-pixel-format.md, 0002-run-length-deflate.md): no filter, the run-length compressor. The zlib settings apply with
