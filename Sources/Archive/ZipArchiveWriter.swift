import CZlib
import Foundation

/// Writes a ZIP archive (APPNOTE 6.3) as a stream: each ``add(_:contents:modified:compress:)``
/// returns the bytes of one entry (local header and data) to send at once, and ``finish()`` the
/// central directory. Only the central directory's records (about 100 bytes per file) are kept.
/// Entries are stored or raw-deflated; names are UTF-8 (flag bit 11). ZIP64 records are written
/// only when the archive needs them (more than 65,535 entries, or offsets past 4 GiB).
public struct ZipArchiveWriter: Sendable {
    /// One file's central-directory record.
    public struct Entry: Sendable {
        var name: [UInt8]
        var crc: UInt32
        var compressedSize: UInt64
        var size: UInt64
        var offset: UInt64
        var method: UInt16
        var dosTime: UInt16
        var dosDate: UInt16
    }

    public private(set) var entries: [Entry] = []
    public private(set) var offset: UInt64 = 0

    /// An empty archive.
    public init() {}

    /// The local header and data of one file.
    public mutating func add(_ name: String, contents: [UInt8], modified: Date, compress: Bool) -> [UInt8] {
        let crc = contents.withUnsafeBufferPointer { UInt32(crc32(0, $0.baseAddress, UInt32($0.count))) }
        var data = contents
        var method: UInt16 = 0
        if compress, let deflated = Self.deflate(contents), deflated.count < contents.count {
            data = deflated
            method = 8
        }
        let (time, date) = Self.dosTimestamp(modified)
        let entry = Entry(name: Array(name.utf8), crc: crc, compressedSize: UInt64(data.count), size: UInt64(contents.count),
                          offset: offset, method: method, dosTime: time, dosDate: date)
        var out: [UInt8] = []
        out.reserveCapacity(30 + entry.name.count + data.count)
        out.le32(0x0403_4b50)
        out.le16(20)  // version needed: 2.0 (deflate)
        out.le16(1 << 11)  // UTF-8 names
        out.le16(method)
        out.le16(time)
        out.le16(date)
        out.le32(crc)
        out.le32(UInt32(data.count))
        out.le32(UInt32(contents.count))
        out.le16(UInt16(entry.name.count))
        out.le16(0)
        out.append(contentsOf: entry.name)
        out.append(contentsOf: data)
        entries.append(entry)
        offset += UInt64(out.count)
        return out
    }

    /// The central directory and end records; the archive is complete after these bytes.
    public func finish() -> [UInt8] {
        var out: [UInt8] = []
        let directoryStart = offset
        for entry in entries {
            let needsZip64 = entry.offset >= 0xFFFF_FFFF
            out.le32(0x0201_4b50)
            out.le16(0x0300 | (needsZip64 ? 45 : 20))  // made by: Unix, spec version
            out.le16(needsZip64 ? 45 : 20)
            out.le16(1 << 11)
            out.le16(entry.method)
            out.le16(entry.dosTime)
            out.le16(entry.dosDate)
            out.le32(entry.crc)
            out.le32(UInt32(entry.compressedSize))
            out.le32(UInt32(entry.size))
            out.le16(UInt16(entry.name.count))
            out.le16(needsZip64 ? 12 : 0)
            out.le16(0)  // comment
            out.le16(0)  // disk
            out.le16(0)  // internal attributes
            out.le32(0o100644 << 16)  // external: a regular file, rw-r--r--
            out.le32(needsZip64 ? 0xFFFF_FFFF : UInt32(entry.offset))
            out.append(contentsOf: entry.name)
            if needsZip64 {
                out.le16(0x0001)
                out.le16(8)
                out.le64(entry.offset)
            }
        }
        let directorySize = UInt64(out.count)
        let directoryEnd = directoryStart + directorySize
        let needsZip64 = entries.count >= 0xFFFF || directoryStart >= 0xFFFF_FFFF || directorySize >= 0xFFFF_FFFF
        if needsZip64 {
            out.le32(0x0606_4b50)
            out.le64(44)
            out.le16(0x0300 | 45)
            out.le16(45)
            out.le32(0)
            out.le32(0)
            out.le64(UInt64(entries.count))
            out.le64(UInt64(entries.count))
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
        out.le16(needsZip64 ? 0xFFFF : UInt16(entries.count))
        out.le16(needsZip64 ? 0xFFFF : UInt16(entries.count))
        out.le32(needsZip64 ? 0xFFFF_FFFF : UInt32(directorySize))
        out.le32(needsZip64 ? 0xFFFF_FFFF : UInt32(directoryStart))
        out.le16(0)
        return out
    }

    /// `contents` as a raw deflate stream (zlib level 6), or nil if zlib fails.
    static func deflate(_ contents: [UInt8]) -> [UInt8]? {
        var stream = z_stream()
        guard deflateInit2_(&stream, 6, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION,
                            Int32(MemoryLayout<z_stream>.size)) == Z_OK else { return nil }
        defer { deflateEnd(&stream) }
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, UInt(contents.count))))
        let status: Int32 = contents.withUnsafeBufferPointer { source in
            output.withUnsafeMutableBufferPointer { target in
                stream.next_in = UnsafeMutablePointer(mutating: source.baseAddress)
                stream.avail_in = UInt32(source.count)
                stream.next_out = target.baseAddress
                stream.avail_out = UInt32(target.count)
                return CZlib.deflate(&stream, Z_FINISH)
            }
        }
        guard status == Z_STREAM_END else { return nil }
        output.removeLast(Int(stream.avail_out))
        return output
    }

    /// MS-DOS time and date fields (UTC; two-second resolution; clamped to 1980...2107).
    static func dosTimestamp(_ date: Date) -> (time: UInt16, date: UInt16) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        let year = min(max((parts.year ?? 1980) - 1980, 0), 127)
        let time = UInt16((parts.hour ?? 0) << 11 | (parts.minute ?? 0) << 5 | (parts.second ?? 0) / 2)
        let day = UInt16(year << 9 | (parts.month ?? 1) << 5 | (parts.day ?? 1))
        return (time, day)
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
