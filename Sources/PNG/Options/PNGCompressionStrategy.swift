/// zlib strategy.
public enum PNGCompressionStrategy: Int32, Sendable, Equatable {
    case `default` = 0, filtered = 1, huffmanOnly = 2, rle = 3, fixed = 4
}

