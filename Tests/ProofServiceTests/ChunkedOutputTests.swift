import Archive
import Foundation
import Testing

@testable import ProofService

/// ``ChunkedOutput`` reuses one buffer for every chunk: whatever a sink does with a chunk (copy it
/// or keep it), it must see exactly the bytes written, in order, in chunks of at least
/// ``ChunkedOutput/chunkSize`` but the last.
@Suite("Chunked export output")
struct ChunkedOutputTests {
    /// Writes of varied sizes (empty, tiny, around and beyond a chunk), by both `write` and `append`.
    static func writes() -> [[UInt8]] {
        var generator = SystemRandomNumberGenerator()
        let sizes = [0, 1, 17, ChunkedOutput.chunkSize - 1, 1, ChunkedOutput.chunkSize, 3, 2 * ChunkedOutput.chunkSize + 5]
            + (0..<200).map { _ in Int.random(in: 0...9_000, using: &generator) }
        return sizes.enumerated().map { index, size in (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ index) } }
    }

    /// A sink that keeps every chunk it is given: a buffer reused under it would change them.
    final class KeepingSink: @unchecked Sendable {
        var chunks: [[UInt8]] = []
    }

    @Test("a sink that keeps its chunks sees each one's own bytes, in order")
    func keptChunks() async throws {
        let writes = Self.writes()
        let sink = KeepingSink()
        var output = ChunkedOutput()
        for (index, bytes) in writes.enumerated() {
            if index % 2 == 0 {
                try await output.write(bytes, to: { sink.chunks.append($0) })
            } else {
                try await output.append(to: { sink.chunks.append($0) }) { (buffer: inout [UInt8]) in buffer += bytes }
            }
        }
        try await output.flush(to: { sink.chunks.append($0) })
        #expect(sink.chunks.flatMap { $0 } == writes.flatMap { $0 })
        #expect(output.total == writes.reduce(0) { $0 + $1.count })
        #expect(sink.chunks.dropLast().allSatisfy { $0.count >= ChunkedOutput.chunkSize })
        #expect(!sink.chunks.contains { $0.isEmpty })
    }

    @Test("ZIP entries appended into one buffer are the bytes the one-array-per-entry writer gives")
    func zipEntriesInPlace() async throws {
        let modified = Date(timeIntervalSince1970: 1_800_000_000)
        let entries = Self.writes().prefix(40).enumerated().map { index, bytes in
            ZipArchiveWriter.prepare("deliveries/D-\(index)/file", contents: bytes, compress: index % 3 != 0)
        }
        var separate = ZipArchiveWriter(), inPlace = ZipArchiveWriter()
        var expected: [UInt8] = []
        for entry in entries { expected += try separate.add(entry, modified: modified) }
        expected += try separate.finish()
        let sink = KeepingSink()
        var output = ChunkedOutput()
        for entry in entries {
            try await output.append(to: { sink.chunks.append($0) }) { (buffer) throws(ZipWriteError) in
                try inPlace.add(entry, modified: modified, appendingTo: &buffer)
            }
        }
        try await output.write(try inPlace.finish(), to: { sink.chunks.append($0) })
        try await output.flush(to: { sink.chunks.append($0) })
        #expect(sink.chunks.flatMap { $0 } == expected)
        let reader = try ZipArchiveReader(expected)
        #expect(try reader.entries.count == entries.count)
    }
}
