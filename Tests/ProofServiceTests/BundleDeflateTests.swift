import Archive
import CLibDeflate
import Foundation
import Testing

/// Export bundles keep their bytes whatever thread wrote them
/// (docs/decisions/0031-libdeflate-for-bundle-entries.md): entries deflated through the pooled
/// compressors are exactly what a fresh compressor per entry makes, whatever came before them on
/// the same compressor, and zlib inflates them back.
@Suite("Bundle deflate")
struct BundleDeflateTests {
    /// A fresh libdeflate compressor at level 1 for one entry.
    static func freshDeflate(_ contents: [UInt8]) -> [UInt8] {
        let compressor = libdeflate_alloc_compressor(1)
        defer { libdeflate_free_compressor(compressor) }
        var output = [UInt8](repeating: 0, count: libdeflate_deflate_compress_bound(compressor, contents.count))
        let count = contents.withUnsafeBytes { source in
            output.withUnsafeMutableBytes { libdeflate_deflate_compress(compressor, source.baseAddress, source.count, $0.baseAddress, $0.count) }
        }
        precondition(count > 0)
        return Array(output.prefix(count))
    }

    @Test("pooled compressors write the bytes fresh ones write, from every thread; zlib inflates them")
    func sameBytes() async throws {
        var generator = SystemRandomNumberGenerator()
        let words = Array("<path d=\"M 12.5 40.25 C 13 41 14 42.5 15.75 43\"/> {\"x\":1.25,\"y\":2,\"t\":16} ".utf8)
        let inputs: [[UInt8]] = (0..<200).map { index in
            let count = [0, 1, 100, 2_000, 7_000, 40_000][index % 6]
            return index % 4 == 3
                ? (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
                : (0..<count).map { words[($0 * 7 + index) % words.count] }
        }
        let expected = inputs.map(Self.freshDeflate)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<4 {
                group.addTask {
                    for index in inputs.indices.shuffled() where index % 4 == worker || index % 3 == 0 {
                        let entry = ZipArchiveWriter.prepare("f", contents: inputs[index], compress: true)
                        if entry.method == 8 {
                            #expect(entry.data == expected[index])
                            let inflated = try GzipInflater.inflate(entry.data, limit: inputs[index].count, raw: true)
                            #expect(inflated == inputs[index])
                        } else {
                            #expect(expected[index].count >= inputs[index].count && entry.data == inputs[index])
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
    }
}
