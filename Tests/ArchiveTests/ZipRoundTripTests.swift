import Archive
import CountersignClient
import CZlib
import Foundation
import Testing

/// The Archive module on its own: what ZipArchiveWriter writes, ZipArchiveReader reads back (and
/// Info-ZIP's unzip and Python's zipfile too, in ProofServiceTests' bundle tests); damage is named.
@Suite("ZIP writer and reader")
struct ZipRoundTripTests {
    static let modified = Date(timeIntervalSince1970: 1_764_547_200)  // 2025-12-01T00:00:00Z

    static func archive(_ files: [(String, [UInt8], Bool)]) throws -> [UInt8] {
        var writer = ZipArchiveWriter()
        var bytes: [UInt8] = []
        for (name, contents, compress) in files {
            bytes += try writer.add(name, contents: contents, modified: modified, compress: compress)
        }
        return bytes + (try writer.finish())
    }

    @Test("stored and deflated entries, empty and large, read back byte for byte with their CRC-32")
    func roundTrip() throws {
        let text = Array(String(repeating: "proof of delivery ", count: 5_000).utf8)
        var random = SystemRandomNumberGenerator()
        let noise = (0..<70_000).map { _ in UInt8.random(in: 0...255, using: &random) }
        let files: [(String, [UInt8], Bool)] = [("manifest.json", Array(#"{"a":1}"#.utf8), false), ("empty", [], true),
                                                ("proofs/p1/ink.json", text, true), ("proofs/p1/signature.png", noise, false)]
        let reader = try ZipArchiveReader(try Self.archive(files))
        #expect(try reader.entries.map(\.name) == files.map(\.0))
        for (entry, file) in zip(try reader.entries, files) {
            #expect(try reader.contents(of: entry) == file.1, "\(entry.name)")
            #expect(entry.size == UInt64(file.1.count))
            let crc = file.1.withUnsafeBufferPointer { UInt32(crc32(0, $0.baseAddress, uInt($0.count))) }
            #expect(entry.crc == crc, "\(entry.name)")
        }
        let deflated = try #require(try reader.entries.first { $0.name == "proofs/p1/ink.json" })
        #expect(deflated.method == 8 && deflated.compressedSize < deflated.size / 10)
    }

    @Test("a changed byte of an entry is a CRC failure; a cut archive is not a ZIP archive")
    func damageIsNamed() throws {
        var bytes = try Self.archive([("a.txt", Array("hello, courier".utf8), false)])
        let reader = try ZipArchiveReader(bytes)
        let entry = try #require(try reader.entries.first)
        let at = try #require(bytes.firstRange(of: Array("courier".utf8))).lowerBound
        bytes[at] ^= 0x20
        #expect(throws: ZipArchiveReader.Failure.self) { try ZipArchiveReader(bytes).contents(of: entry) }
        #expect(throws: ZipArchiveReader.Failure.self) { try ZipArchiveReader(Array(bytes.prefix(bytes.count - 30))) }
        #expect(throws: ZipArchiveReader.Failure.self) { try ZipArchiveReader(Array("PK not really".utf8)) }
    }

    @Test("an entry larger than the read limit is refused rather than inflated")
    func readLimit() throws {
        let reader = try ZipArchiveReader(try Self.archive([("big", [UInt8](repeating: 7, count: 1 << 20), true)]))
        let entry = try #require(try reader.entries.first)
        #expect(throws: ZipArchiveReader.Failure.self) { try reader.contents(of: entry, limit: 1 << 16) }
        #expect(try reader.contents(of: entry, limit: 1 << 21).count == 1 << 20)
    }
}

@Suite("gzip inflation")
struct GzipInflaterTests {
    @Test("a gzip body inflates to what was compressed; past the limit it is tooLarge, broken bytes invalid")
    func inflate() throws {
        let body = Array(String(repeating: "{\"x\":1,\"y\":2,\"t\":3}", count: 2_000).utf8)
        let packed = try Gzip.compress(body)  // the SDK's: what couriers send
        #expect(try GzipInflater.inflate(packed, limit: body.count) == body)
        #expect(throws: GzipInflater.Failure.tooLarge(limit: 1_000)) { try GzipInflater.inflate(packed, limit: 1_000) }
        #expect(throws: GzipInflater.Failure.self) { try GzipInflater.inflate(Array(packed.prefix(packed.count / 2)), limit: body.count) }
        #expect(throws: GzipInflater.Failure.self) { try GzipInflater.inflate(Array("not gzip".utf8), limit: 100) }
    }
}

@Suite("Civil dates")
struct CivilDateTests {
    @Test("days since 1970 and back agree for every day of 0001 to 9999 sampled, and for the edges of leap years")
    func roundTrip() throws {
        for days in stride(from: Int64(-719_162), through: 2_932_896, by: 97) {
            let (year, month, day) = CivilDate.from(daysSince1970: days)
            #expect(CivilDate.daysSince1970(year: year, month: month, day: day) == days, "\(year)-\(month)-\(day)")
        }
        #expect(CivilDate.daysSince1970(year: 1970, month: 1, day: 1) == 0)
        #expect(CivilDate.daysSince1970(year: 1, month: 1, day: 1) == -719_162)
        #expect(CivilDate.daysSince1970(year: 2000, month: 2, day: 29) != nil && CivilDate.daysSince1970(year: 1900, month: 2, day: 29) == nil)
        #expect(CivilDate.daysSince1970(year: 2024, month: 13, day: 1) == nil && CivilDate.daysSince1970(year: 2024, month: 4, day: 31) == nil)
    }
}
