import Archive
import CZlib
import Foundation
import Testing

/// Export bundles keep their bytes (docs/decisions/0028-export-and-verify-throughput.md): entries
/// deflated through the reused streams are exactly what a fresh stream per entry — the writer
/// before — made, whatever came before them on the same stream.
@Suite("Bundle deflate")
struct BundleDeflateTests {
    /// The writer before: a new raw-deflate stream at level 1 for each entry.
    static func freshDeflate(_ contents: [UInt8]) -> [UInt8] {
        var stream = z_stream()
        precondition(deflateInit2_(&stream, 1, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION,
                                   Int32(MemoryLayout<z_stream>.size)) == Z_OK)
        defer { deflateEnd(&stream) }
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, UInt(contents.count))))
        let status: Int32 = contents.withUnsafeBufferPointer { source in
            output.withUnsafeMutableBufferPointer { target in
                stream.next_in = UnsafeMutablePointer(mutating: source.baseAddress)
                stream.avail_in = UInt32(source.count)
                stream.next_out = target.baseAddress
                stream.avail_out = UInt32(target.count)
                return deflate(&stream, Z_FINISH)
            }
        }
        precondition(status == Z_STREAM_END)
        output.removeLast(Int(stream.avail_out))
        return output
    }

    @Test("reused streams write the bytes fresh ones wrote, from every thread")
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
