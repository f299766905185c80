import Archive
import CLibISAL
import Foundation
import Testing

/// Export bundles keep their bytes whatever thread wrote them
/// (docs/decisions/0034-isa-l-deflates-bundle-entries.md): entries deflated through the pooled
/// compressors are exactly what a fresh compressor per entry makes, whatever came before them on
/// the same compressor, and zlib inflates them back.
@Suite("Bundle deflate")
struct BundleDeflateTests {
    /// A fresh igzip level-1 stream and level buffer for one entry (nil: not shorter than the input).
    static func freshDeflate(_ contents: [UInt8]) -> [UInt8]? {
        guard !contents.isEmpty else { return nil }
        let stream = UnsafeMutablePointer<isal_zstream>.allocate(capacity: 1)
        stream.initialize(to: isal_zstream())
        let level = UnsafeMutableRawBufferPointer.allocate(byteCount: countersign_isal_level1_buffer_size(), alignment: 64)
        level.initializeMemory(as: UInt8.self, repeating: 0)
        defer {
            stream.deinitialize(count: 1)
            stream.deallocate()
            level.deallocate()
        }
        var output = [UInt8](repeating: 0, count: contents.count)
        var input = contents
        let status = input.withUnsafeMutableBufferPointer { source in
            output.withUnsafeMutableBufferPointer { target in
                isal_deflate_stateless_init(stream)
                stream.pointee.level = 1
                stream.pointee.level_buf = level.baseAddress!.assumingMemoryBound(to: UInt8.self)
                stream.pointee.level_buf_size = UInt32(level.count)
                stream.pointee.end_of_stream = 1
                stream.pointee.next_in = source.baseAddress
                stream.pointee.avail_in = UInt32(source.count)
                stream.pointee.next_out = target.baseAddress
                stream.pointee.avail_out = UInt32(target.count)
                return isal_deflate_stateless(stream)
            }
        }
        guard status == COMP_OK, stream.pointee.total_out > 0 else { return nil }
        return Array(output.prefix(Int(stream.pointee.total_out)))
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
                            #expect(entry.data.count < inputs[index].count)
                            let inflated = try GzipInflater.inflate(entry.data, limit: inputs[index].count, raw: true)
                            #expect(inflated == inputs[index])
                        } else {
                            #expect((expected[index]?.count ?? inputs[index].count) >= inputs[index].count && entry.data == inputs[index])
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
    }
}
