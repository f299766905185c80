import PNG

// The PNG encoder's types that appear in this module's API (``RenderOptions/png``,
// ``RenderError/png(_:)``), under their own names: callers (the service, the CLI) choose a
// compressor or read an encoder error without importing PNG, so SignatureRender stays the only
// door to Raster and PNG.

/// The PNG encoder settings of a render.
public typealias PNGOptions = PNG.PNGOptions
/// What compresses a PNG's image data; the raw value is its name in stored render options and
/// on the command line.
public typealias PNGCompressor = PNG.PNGCompressor
/// Why libpng failed.
public typealias PNGError = PNG.PNGError
