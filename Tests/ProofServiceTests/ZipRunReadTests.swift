import Archive
import Foundation
import Testing

/// ``ZipArchiveReader/contents(ofRun:limit:)`` reads consecutive entries with one read: it must
/// give, entry by entry, exactly what ``ZipArchiveReader/contents(of:limit:)`` gives, whatever the
/// run (out of order, overlapping, damaged, oversized) and never trap.
@Suite("ZIP run reads")
struct ZipRunReadTests {
    static func archive(_ files: [(String, [UInt8], Bool)]) throws -> [UInt8] {
        var writer = ZipArchiveWriter()
        var out: [UInt8] = []
        for (name, contents, compress) in files {
            out += try writer.add(name, contents: contents, modified: Date(timeIntervalSince1970: 1_800_000_000), compress: compress)
        }
        return out + (try writer.finish())
    }

    static let files: [(String, [UInt8], Bool)] = (0..<12).map { index in
        let text = Array(String(repeating: "entry \(index) of a run; ", count: 20 + 30 * index).utf8)
        return ("deliveries/D-\(index / 5)/file-\(index)", index % 3 == 0 ? (0..<(500 * index)).map { UInt8(truncatingIfNeeded: $0 &* 7919) } : text,
                index % 3 != 0)
    }

    /// Both readings of `entries` as comparable values (contents or the failure's message).
    static func compare(_ reader: ZipArchiveReader, _ entries: [ZipArchiveReader.Entry], limit: Int = 512 << 20) {
        for checkingCRC in [true, false] {
            compare(reader, entries, limit: limit, checkingCRC: checkingCRC)
        }
    }

    static func compare(_ reader: ZipArchiveReader, _ entries: [ZipArchiveReader.Entry], limit: Int, checkingCRC: Bool) {
        let run = reader.contents(ofRun: entries[...], limit: limit, checkingCRC: checkingCRC)
        #expect(run.count == entries.count)
        for (entry, result) in zip(entries, run) {
            let single = Result { () throws(ZipArchiveReader.Failure) in try reader.contents(of: entry, limit: limit, checkingCRC: checkingCRC) }
            switch (result, single) {
            case (.success(let a), .success(let b)): #expect(Array(a) == b, "\(entry.name)")
            case (.failure(let a), .failure(let b)): #expect(a == b, "\(entry.name)")
            default: Issue.record("\(entry.name): the run gave \(result), alone \(single)")
            }
        }
    }

    @Test("a run gives each entry's contents, in order or not, whole or in part")
    func sameAsOneByOne() throws {
        let bytes = try Self.archive(Self.files)
        let reader = try ZipArchiveReader(bytes)
        let entries = try reader.entries
        #expect(entries.count == Self.files.count)
        let run = reader.contents(ofRun: entries[...])
        for (result, file) in zip(run, Self.files) { #expect(Array(try result.get()) == file.1) }
        Self.compare(reader, entries)
        Self.compare(reader, Array(entries.reversed()))
        Self.compare(reader, [entries[3], entries[3], entries[1]])
        Self.compare(reader, Array(entries[2..<5]))
        Self.compare(reader, [entries[0]])
        Self.compare(reader, [])
        Self.compare(reader, entries, limit: 4000)
    }

    /// Skipped names are not handed over, but their directory records are still checked.
    @Test("entries skipped by name prefix")
    func skipping() throws {
        let bytes = try Self.archive(Self.files)
        let reader = try ZipArchiveReader(bytes)
        var names: [String] = []
        try reader.forEachEntry(skipping: [Array("deliveries/D-0/".utf8), Array("nothing".utf8)]) { names.append($0.name) }
        #expect(names == Self.files.map(\.0).filter { !$0.hasPrefix("deliveries/D-0/") })
        #expect(names.count == Self.files.count - 5)
        // A record signature damaged inside the skipped entries still fails the pass.
        let all = try reader.entries
        var damaged = bytes
        let directory = bytes.count - 22 - all.reduce(0) { $0 + 46 + $1.name.utf8.count + 0 }
        let second = directory + 46 + all[0].name.utf8.count
        #expect(Array(damaged[second..<second + 4]) == [0x50, 0x4B, 0x01, 0x02])
        damaged[second] ^= 0xFF
        #expect(throws: ZipArchiveReader.Failure.self) {
            try ZipArchiveReader(damaged).forEachEntry(skipping: [Array("deliveries/D-0/".utf8)]) { _ in }
        }
    }

    /// Unchecked CRC-32 (for a caller that checks a stronger digest): a wrong CRC in the directory
    /// passes, a wrong size still fails.
    @Test("without the CRC-32 check, only the CRC is not checked")
    func withoutCRC() throws {
        let bytes = try Self.archive(Self.files)
        let reader = try ZipArchiveReader(bytes)
        var entries = try reader.entries
        for index in [0, 1] {  // stored, deflated
            entries[index].crc ^= 1
            #expect(throws: ZipArchiveReader.Failure.self) { try reader.contents(of: entries[index]) }
            #expect(try reader.contents(of: entries[index], checkingCRC: false) == Self.files[index].1)
            #expect(try Array(reader.contents(ofRun: entries[0...1], checkingCRC: false)[index].get()) == Self.files[index].1)
            #expect(throws: ZipArchiveReader.Failure.self) { try reader.contents(ofRun: entries[0...1])[index].get() }
            entries[index].size += 1
            #expect(throws: ZipArchiveReader.Failure.self) { try reader.contents(of: entries[index], checkingCRC: false) }
        }
    }

    @Test("a damaged byte, a hostile offset or size fails only the entries it touches, as alone")
    func damage() throws {
        let bytes = try Self.archive(Self.files)
        let entries = try ZipArchiveReader(bytes).entries
        for offset in stride(from: 0, to: Int(entries[6].localHeaderOffset), by: 97) {
            var damaged = bytes
            damaged[offset] ^= 0x5A
            let reader = try ZipArchiveReader(damaged)
            Self.compare(reader, entries)
        }
        let reader = try ZipArchiveReader(bytes)
        // Values that keep the headers in forward order, so the run is read with one call and
        // each entry is cut from the block.
        let last = entries.count - 1
        for change in 0..<3 {
            var hostile = entries
            switch change {
            case 0: hostile[last].localHeaderOffset = UInt64(bytes.count - 10)  // too close to the end for a header
            case 1: hostile[4].localHeaderOffset = entries[3].localHeaderOffset + 7  // inside the entry before
            default: hostile[4].compressedSize = UInt64(bytes.count)  // runs past the end of the file
            }
            Self.compare(reader, hostile)
        }
        // A local extra field longer than the directory's slack: the last entry's data lies past
        // the block, so it is read again on its own.
        var longExtra = bytes
        let header = Int(entries[last].localHeaderOffset)
        longExtra[header + 28] = 200
        Self.compare(try ZipArchiveReader(longExtra), entries)
        for change in 0..<4 {
            var hostile = entries
            switch change {
            case 0: hostile[4].localHeaderOffset = UInt64.max - 10
            case 1: hostile[4].compressedSize = UInt64.max
            case 2: hostile[4].size = 1 << 40
            default: hostile[4].localHeaderOffset = UInt64(bytes.count - 3)
            }
            Self.compare(reader, hostile)
        }
    }

    /// The verifier reads each kind of file up to its own limit: a larger one is refused, naming its size.
    @Test("an entry larger than the limit is refused with its size, alone or in a run")
    func overLimit() throws {
        let reader = try ZipArchiveReader(Self.archive(Self.files))
        let entries = try reader.entries
        let large = try #require(entries.last)
        let limit = Int(large.size) - 1
        #expect(throws: ZipArchiveReader.Failure(message: "\(large.size) bytes, more than the \(limit) read for this file")) {
            try reader.contents(of: large, limit: limit)
        }
        Self.compare(reader, entries, limit: limit)
        #expect(try reader.contents(of: large, limit: limit + 1).count == Int(large.size))
    }
}
