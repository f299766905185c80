/// One clipped line segment: inside [0, w] × [0, h], `y0 < y1`, `dir` = ±1 (the original
/// direction along y).
struct Segment {
    var x0: Float
    var y0: Float
    var x1: Float
    var y1: Float
    var dir: Float
}
