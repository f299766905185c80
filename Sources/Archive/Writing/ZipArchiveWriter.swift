import Foundation

/// Writes a ZIP archive (APPNOTE 6.3) as a stream in bounded memory: each ``add(_:modified:)``
/// returns the bytes of one entry (local header and data) to send at once, and
/// ``finish(into:)`` the central directory. The central directory's records are encoded as each
/// entry is added and kept in a temporary file (``ZipDirectorySpill``), not in memory.
/// Entries are stored or raw-deflated; names are UTF-8 (flag bit 11). ZIP64 records are written
/// only when the archive needs them (more than 65,535 entries, or offsets past 4 GiB).
///
/// The costly part of an entry, CRC-32 and deflate, is ``prepare(_:contents:compress:)``: a pure
/// function, so callers run it wherever their CPU work belongs and add the results in order.
public struct ZipArchiveWriter {
    /// One file, checksummed and (when worth it) deflated, ready to be added.
    public struct PreparedEntry: Sendable {
        public var name: [UInt8]
        public var crc: UInt32
        public var size: UInt64
        /// The bytes as stored in the archive (deflated when ``method`` is 8).
        public var data: [UInt8]
        public var method: UInt16
    }

    /// Entries added.
    public private(set) var count: UInt64 = 0
    /// Bytes of the archive so far.
    public private(set) var offset: UInt64 = 0
    private var spill: ZipDirectorySpill?

    /// An empty archive.
    public init() {}

    /// `contents` checksummed and, when `compress` and deflate makes it smaller, deflated.
    public static func prepare(_ name: String, contents: [UInt8], compress: Bool) -> PreparedEntry {
        let crc = CRC32.of(contents)
        if compress, let deflated = deflate(contents), deflated.count < contents.count {
            return PreparedEntry(name: Array(name.utf8), crc: crc, size: UInt64(contents.count), data: deflated, method: 8)
        }
        return PreparedEntry(name: Array(name.utf8), crc: crc, size: UInt64(contents.count), data: contents, method: 0)
    }

    /// The local header and data of one file (``prepare(_:contents:compress:)`` and ``add(_:modified:)``).
    public mutating func add(_ name: String, contents: [UInt8], modified: Date, compress: Bool) throws(ZipWriteError) -> [UInt8] {
        try add(Self.prepare(name, contents: contents, compress: compress), modified: modified)
    }

    /// The local header and data of a prepared file; its central-directory record goes to the spill file.
    public mutating func add(_ entry: PreparedEntry, modified: Date) throws(ZipWriteError) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(30 + entry.name.count + entry.data.count)
        try add(entry, modified: modified, appendingTo: &out)
        return out
    }

    /// Appends the local header and data of a prepared file to `out`: a streaming writer fills its
    /// output buffer directly, without an array per file in between.
    public mutating func add(_ entry: PreparedEntry, modified: Date, appendingTo out: inout [UInt8]) throws(ZipWriteError) {
        let (time, date) = Self.dosTimestamp(modified)
        let start = out.count
        out.le32(0x0403_4b50)
        out.le16(20)  // version needed: 2.0 (deflate)
        out.le16(1 << 11)  // UTF-8 names
        out.le16(entry.method)
        out.le16(time)
        out.le16(date)
        out.le32(entry.crc)
        out.le32(UInt32(entry.data.count))
        out.le32(UInt32(entry.size))
        out.le16(UInt16(entry.name.count))
        out.le16(0)
        out.append(contentsOf: entry.name)
        out.append(contentsOf: entry.data)
        if spill == nil { spill = try ZipDirectorySpill() }
        try spill!.append(Self.directoryRecord(entry, offset: offset, time: time, date: date))
        count += 1
        offset += UInt64(out.count - start)
    }

    /// The central-directory record of `entry`, whose local header is at `offset`.
    static func directoryRecord(_ entry: PreparedEntry, offset: UInt64, time: UInt16, date: UInt16) -> [UInt8] {
        let needsZip64 = offset >= 0xFFFF_FFFF
        var out: [UInt8] = []
        out.reserveCapacity(46 + entry.name.count + 12)
        out.le32(0x0201_4b50)
        out.le16(0x0300 | (needsZip64 ? 45 : 20))  // made by: Unix, spec version
        out.le16(needsZip64 ? 45 : 20)
        out.le16(1 << 11)
        out.le16(entry.method)
        out.le16(time)
        out.le16(date)
        out.le32(entry.crc)
        out.le32(UInt32(entry.data.count))
        out.le32(UInt32(entry.size))
        out.le16(UInt16(entry.name.count))
        out.le16(needsZip64 ? 12 : 0)
        out.le16(0)  // comment
        out.le16(0)  // disk
        out.le16(0)  // internal attributes
        out.le32(0o100644 << 16)  // external: a regular file, rw-r--r--
        out.le32(needsZip64 ? 0xFFFF_FFFF : UInt32(offset))
        out.append(contentsOf: entry.name)
        if needsZip64 {
            out.le16(0x0001)
            out.le16(8)
            out.le64(offset)
        }
        return out
    }

    /// Hands the central directory and end records to `sink` in chunks of at most 256 KiB; the
    /// archive is complete after these bytes.
    public func finish(into sink: ([UInt8]) async throws -> Void) async throws {
        let directoryStart = offset
        let directorySize = spill?.size ?? 0
        if let spill {
            try spill.flush()
            var position: UInt64 = 0
            while position < directorySize {
                let chunk = try spill.read(at: position, count: Int(min(UInt64(ZipDirectorySpill.bufferSize), directorySize - position)))
                guard !chunk.isEmpty else { throw ZipWriteError.spill(errno: EIO) }
                try await sink(chunk)
                position += UInt64(chunk.count)
            }
        }
        try await sink(endRecords(directoryStart: directoryStart, directorySize: directorySize))
    }

    /// The whole central directory and end records at once (small archives and tests).
    public func finish() throws(ZipWriteError) -> [UInt8] {
        var out: [UInt8] = []
        if let spill {
            try spill.flush()
            out = try spill.read(at: 0, count: Int(spill.size))
        }
        return out + endRecords(directoryStart: offset, directorySize: UInt64(out.count))
    }

    /// The ZIP64 end records when needed, then the end of central directory record.
    func endRecords(directoryStart: UInt64, directorySize: UInt64) -> [UInt8] {
        var out: [UInt8] = []
        let directoryEnd = directoryStart + directorySize
        let needsZip64 = count >= 0xFFFF || directoryStart >= 0xFFFF_FFFF || directorySize >= 0xFFFF_FFFF
        if needsZip64 {
            out.le32(0x0606_4b50)
            out.le64(44)
            out.le16(0x0300 | 45)
            out.le16(45)
            out.le32(0)
            out.le32(0)
            out.le64(count)
            out.le64(count)
            out.le64(directorySize)
            out.le64(directoryStart)
            out.le32(0x0706_4b50)
            out.le32(0)
            out.le64(directoryEnd)
            out.le32(1)
        }
        out.le32(0x0605_4b50)
        out.le16(0)
        out.le16(0)
        out.le16(needsZip64 ? 0xFFFF : UInt16(count))
        out.le16(needsZip64 ? 0xFFFF : UInt16(count))
        out.le32(needsZip64 ? 0xFFFF_FFFF : UInt32(directorySize))
        out.le32(needsZip64 ? 0xFFFF_FFFF : UInt32(directoryStart))
        out.le16(0)
        return out
    }

    /// `contents` as a raw deflate stream, or nil if it fails. Level 1: deflate is the largest
    /// part of an export's CPU, and higher levels cost more for a few percent fewer bytes
    /// (docs/decisions/0019-standalone-bundles.md); libdeflate, with a reused compressor
    /// (``ZipDeflater``, docs/decisions/0031-libdeflate-for-bundle-entries.md).
    static func deflate(_ contents: [UInt8]) -> [UInt8]? {
        ZipDeflater.withDeflater { $0.deflate(contents) }
    }

    /// MS-DOS time and date fields (UTC; two-second resolution; clamped to 1980...2107), by
    /// arithmetic: a Calendar per entry cost more than the entry's CRC.
    static func dosTimestamp(_ date: Date) -> (time: UInt16, date: UInt16) {
        let seconds = Int64(date.timeIntervalSince1970.rounded(.down))
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let second = seconds - days * 86_400
        let (year, month, day) = CivilDate.from(daysSince1970: days)
        guard year >= 1980 else { return (0, UInt16(0 << 9 | 1 << 5 | 1)) }
        guard year <= 2107 else { return (UInt16(23 << 11 | 59 << 5 | 29), UInt16(127 << 9 | 12 << 5 | 31)) }
        let time = UInt16(second / 3600) << 11 | UInt16(second % 3600 / 60) << 5 | UInt16(second % 60 / 2)
        return (time, UInt16(year - 1980) << 9 | UInt16(month) << 5 | UInt16(day))
    }

}

extension [UInt8] {
    mutating func le16(_ value: UInt16) {
        append(UInt8(truncatingIfNeeded: value))
        append(UInt8(truncatingIfNeeded: value >> 8))
    }

    mutating func le32(_ value: UInt32) {
        for shift in stride(from: 0, to: 32, by: 8) { append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }

    mutating func le64(_ value: UInt64) {
        for shift in stride(from: 0, to: 64, by: 8) { append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }
}
