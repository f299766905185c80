import CZlib
import Foundation

/// Reads the ZIP archives ``ZipArchiveWriter`` makes (stored or deflated entries, ZIP64 when
/// present) for offline verification. Every offset and length is bounds-checked: a damaged or
/// hostile archive gives a ``Failure``, never a crash.
public struct ZipArchiveReader: Sendable {
    /// Why an archive or one of its entries cannot be read.
    public struct Failure: Error, CustomStringConvertible, Equatable {
        public var message: String
        public var description: String { message }
    }

    public struct Entry: Sendable {
        public var name: String
        public var method: UInt16
        public var crc: UInt32
        public var compressedSize: UInt64
        public var size: UInt64
        public var localHeaderOffset: UInt64
    }

    public let bytes: [UInt8]
    /// The entries in central-directory order.
    public private(set) var entries: [Entry] = []

    /// Parses the central directory of `bytes`.
    public init(_ bytes: [UInt8]) throws(Failure) {
        self.bytes = bytes
        guard bytes.count >= 22 else { throw Failure(message: "not a ZIP archive (too short)") }
        var end = -1
        var position = bytes.count - 22
        let lowest = max(0, bytes.count - 22 - 65_535)
        while position >= lowest {
            if u32(position) == 0x0605_4b50 { end = position; break }
            position -= 1
        }
        guard end >= 0 else { throw Failure(message: "not a ZIP archive (no end of central directory)") }
        var count = UInt64(u16(end + 10))
        var directorySize = UInt64(u32(end + 12))
        var directoryOffset = UInt64(u32(end + 16))
        if end >= 20, u32(end - 20) == 0x0706_4b50 {
            let record = Int(clamping: u64(end - 12))
            guard record >= 0, record + 56 <= bytes.count, u32(record) == 0x0606_4b50 else {
                throw Failure(message: "damaged ZIP64 end of central directory")
            }
            count = u64(record + 32)
            directorySize = u64(record + 40)
            directoryOffset = u64(record + 48)
        }
        guard directoryOffset + directorySize <= UInt64(bytes.count), count <= directorySize / 46 + 1 else {
            throw Failure(message: "damaged central directory")
        }
        var cursor = Int(directoryOffset)
        for _ in 0..<count {
            guard cursor + 46 <= bytes.count, u32(cursor) == 0x0201_4b50 else { throw Failure(message: "damaged central directory entry") }
            let nameLength = Int(u16(cursor + 28)), extraLength = Int(u16(cursor + 30)), commentLength = Int(u16(cursor + 32))
            guard cursor + 46 + nameLength + extraLength + commentLength <= bytes.count else {
                throw Failure(message: "damaged central directory entry")
            }
            let name = String(decoding: bytes[(cursor + 46)..<(cursor + 46 + nameLength)], as: UTF8.self)
            var entry = Entry(name: name, method: u16(cursor + 10), crc: u32(cursor + 16), compressedSize: UInt64(u32(cursor + 20)),
                              size: UInt64(u32(cursor + 24)), localHeaderOffset: UInt64(u32(cursor + 42)))
            var extra = cursor + 46 + nameLength
            let extraEnd = extra + extraLength
            while extra + 4 <= extraEnd {
                let id = u16(extra), length = Int(u16(extra + 2))
                if id == 0x0001 {
                    var field = extra + 4
                    if entry.size == 0xFFFF_FFFF, field + 8 <= extraEnd { entry.size = u64(field); field += 8 }
                    if entry.compressedSize == 0xFFFF_FFFF, field + 8 <= extraEnd { entry.compressedSize = u64(field); field += 8 }
                    if entry.localHeaderOffset == 0xFFFF_FFFF, field + 8 <= extraEnd { entry.localHeaderOffset = u64(field) }
                }
                extra += 4 + length
            }
            entries.append(entry)
            cursor = extraEnd + commentLength
        }
    }

    /// The uncompressed contents of `entry`, checked against its CRC-32 (at most `limit` bytes).
    public func contents(of entry: Entry, limit: Int = 512 << 20) throws(Failure) -> [UInt8] {
        let header = Int(clamping: entry.localHeaderOffset)
        guard header + 30 <= bytes.count, u32(header) == 0x0403_4b50 else { throw Failure(message: "damaged local header") }
        let start = header + 30 + Int(u16(header + 26)) + Int(u16(header + 28))
        let length = Int(clamping: entry.compressedSize)
        guard start <= bytes.count, length <= bytes.count - start, entry.size <= UInt64(limit) else {
            throw Failure(message: "entry data out of bounds")
        }
        let stored = Array(bytes[start..<(start + length)])
        let data: [UInt8]
        switch entry.method {
        case 0: data = stored
        case 8:
            do {
                data = try GzipInflater.inflate(stored, limit: Int(entry.size), raw: true)
            } catch {
                throw Failure(message: "the compressed data is damaged (\(error))")
            }
        default: throw Failure(message: "unsupported compression method \(entry.method)")
        }
        let crc = data.withUnsafeBufferPointer { UInt32(crc32(0, $0.baseAddress, UInt32($0.count))) }
        guard UInt64(data.count) == entry.size, crc == entry.crc else { throw Failure(message: "CRC-32 or size does not match") }
        return data
    }

    private func u16(_ at: Int) -> UInt16 {
        guard at >= 0, at + 2 <= bytes.count else { return 0 }
        return UInt16(bytes[at]) | UInt16(bytes[at + 1]) << 8
    }

    private func u32(_ at: Int) -> UInt32 {
        guard at >= 0, at + 4 <= bytes.count else { return 0 }
        return (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[at + $1]) << (8 * UInt32($1)) }
    }

    private func u64(_ at: Int) -> UInt64 {
        guard at >= 0, at + 8 <= bytes.count else { return 0 }
        return (0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[at + $1]) << (8 * UInt64($1)) }
    }
}
