import Foundation

/// Reads the ZIP archives ``ZipArchiveWriter`` makes (stored or deflated entries, ZIP64 when
/// present) for offline verification, from any ``ZipSource``: the central directory is walked in
/// 1 MiB windows (``forEachEntry(_:)``) and each entry read on its own, so memory stays bounded
/// whatever the archive's size. Every offset and length is bounds-checked: a damaged or hostile
/// archive gives a ``Failure``, never a crash.
public struct ZipArchiveReader: Sendable {
    /// Why an archive or one of its entries cannot be read.
    public struct Failure: Error, CustomStringConvertible, Equatable {
        public var message: String
        public var description: String { message }

        public init(message: String) {
            self.message = message
        }
    }

    public struct Entry: Sendable, Equatable {
        public var name: String
        public var method: UInt16
        public var crc: UInt32
        public var compressedSize: UInt64
        public var size: UInt64
        public var localHeaderOffset: UInt64
    }

    public let source: any ZipSource
    /// Entries the central directory declares.
    public let entryCount: UInt64
    let directoryOffset: UInt64
    let directorySize: UInt64
    static let window = 1 << 20

    /// Parses the end records of an archive in memory.
    public init(_ bytes: [UInt8]) throws(Failure) {
        try self.init(source: ZipBytes(bytes))
    }

    /// Parses the end records of `source`.
    public init(source: any ZipSource) throws(Failure) {
        self.source = source
        guard source.size >= 22 else { throw Failure(message: "not a ZIP archive (too short)") }
        let tailStart = source.size - min(source.size, 22 + 65_535 + 20)
        let tail = try source.read(at: tailStart, count: Int(source.size - tailStart))
        var end = -1
        var position = tail.count - 22
        while position >= 0 {
            if tail.u32(position) == 0x0605_4b50 { end = position; break }
            position -= 1
        }
        guard end >= 0 else { throw Failure(message: "not a ZIP archive (no end of central directory)") }
        var count = UInt64(tail.u16(end + 10))
        var directorySize = UInt64(tail.u32(end + 12))
        var directoryOffset = UInt64(tail.u32(end + 16))
        if end >= 20, tail.u32(end - 20) == 0x0706_4b50 {
            let record = tail.u64(end - 12)
            guard record <= source.size, source.size - record >= 56 else { throw Failure(message: "damaged ZIP64 end of central directory") }
            let fields = try source.read(at: record, count: 56)
            guard fields.u32(0) == 0x0606_4b50 else { throw Failure(message: "damaged ZIP64 end of central directory") }
            count = fields.u64(32)
            directorySize = fields.u64(40)
            directoryOffset = fields.u64(48)
        }
        guard directoryOffset <= source.size, directorySize <= source.size - directoryOffset, count <= directorySize / 46 + 1 else {
            throw Failure(message: "damaged central directory")
        }
        self.entryCount = count
        self.directoryOffset = directoryOffset
        self.directorySize = directorySize
    }

    /// Every entry, in central-directory order (loads the whole directory: small archives and tests).
    public var entries: [Entry] {
        get throws(Failure) {
            var all: [Entry] = []
            try forEachEntry { all.append($0) }
            return all
        }
    }

    /// Calls `body` with each entry in central-directory order, reading the directory in 1 MiB windows.
    /// Entries whose name starts with one of `skipping` (UTF-8 bytes) are checked as directory
    /// records but not handed over, and their names are not decoded: a reader that wants a few
    /// entries at the end of a directory of hundreds of thousands passes over the rest cheaply.
    public func forEachEntry(skipping prefixes: [[UInt8]] = [], _ body: (Entry) throws(Failure) -> Void) throws(Failure) {
        var window: [UInt8] = []
        var windowStart = directoryOffset
        let directoryEnd = directoryOffset + directorySize
        /// The bytes `[at, at + count)` of the directory, as an index into `window`.
        func bytes(_ at: UInt64, _ count: Int) throws(Failure) -> Int {
            guard at >= directoryOffset, UInt64(count) <= directoryEnd - min(at, directoryEnd) else {
                throw Failure(message: "damaged central directory entry")
            }
            if at < windowStart || at + UInt64(count) > windowStart + UInt64(window.count) {
                let length = Int(min(directoryEnd - at, UInt64(max(count, Self.window))))
                window = try source.read(at: at, count: length)
                windowStart = at
            }
            return Int(at - windowStart)
        }
        var cursor = directoryOffset
        for _ in 0..<entryCount {
            var at = try bytes(cursor, 46)
            guard window.u32(at) == 0x0201_4b50 else { throw Failure(message: "damaged central directory entry") }
            let nameLength = Int(window.u16(at + 28)), extraLength = Int(window.u16(at + 30)), commentLength = Int(window.u16(at + 32))
            let total = 46 + nameLength + extraLength + commentLength
            at = try bytes(cursor, total)
            let nameStart = at + 46
            if !prefixes.isEmpty, prefixes.contains(where: { prefix in
                prefix.count <= nameLength && window[nameStart..<(nameStart + prefix.count)].elementsEqual(prefix)
            }) {
                cursor += UInt64(total)
                continue
            }
            let name = String(decoding: window[(at + 46)..<(at + 46 + nameLength)], as: UTF8.self)
            var entry = Entry(name: name, method: window.u16(at + 10), crc: window.u32(at + 16), compressedSize: UInt64(window.u32(at + 20)),
                              size: UInt64(window.u32(at + 24)), localHeaderOffset: UInt64(window.u32(at + 42)))
            var extra = at + 46 + nameLength
            let extraEnd = extra + extraLength
            while extra + 4 <= extraEnd {
                let id = window.u16(extra), length = Int(window.u16(extra + 2))
                if id == 0x0001 {
                    var field = extra + 4
                    if entry.size == 0xFFFF_FFFF, field + 8 <= extraEnd { entry.size = window.u64(field); field += 8 }
                    if entry.compressedSize == 0xFFFF_FFFF, field + 8 <= extraEnd { entry.compressedSize = window.u64(field); field += 8 }
                    if entry.localHeaderOffset == 0xFFFF_FFFF, field + 8 <= extraEnd { entry.localHeaderOffset = window.u64(field) }
                }
                extra += 4 + length
            }
            try body(entry)
            cursor += UInt64(total)
        }
    }

    /// The uncompressed contents of `entry`, checked against its size and, unless `checkingCRC` is
    /// false, its CRC-32 (at most `limit` bytes). Only a caller that checks every byte against a
    /// stronger digest of its own (the bundle verifier's signed SHA-256s) leaves the CRC-32 out:
    /// it could only tell that such a file differs, which the digest already says.
    public func contents(of entry: Entry, limit: Int = 512 << 20, checkingCRC: Bool = true) throws(Failure) -> [UInt8] {
        let header = entry.localHeaderOffset
        guard header <= source.size, source.size - header >= 30 else { throw Failure(message: "damaged local header") }
        guard entry.size <= UInt64(limit), entry.compressedSize <= UInt64(limit) else {
            throw Failure(message: "\(max(entry.size, entry.compressedSize)) bytes, more than the \(limit) read for this file")
        }
        // One read for the local header and the data behind it, when the header's name and extra
        // field are no longer than the directory's name and a little slack (as in archives we write);
        // else a second read for the data.
        let block = try source.read(at: header, count: Int(min(Self.extent(of: entry), source.size - header)))
        if let stored = try stored(entry, in: block, at: 0) { return Array(try Self.decode(entry, stored, checkingCRC: checkingCRC)) }
        let offset = 30 + UInt64(block.u16(26)) + UInt64(block.u16(28))
        let data = ArraySlice(try source.read(at: header + offset, count: Int(entry.compressedSize)))
        return Array(try Self.decode(entry, data, checkingCRC: checkingCRC))
    }

    /// The contents of `entries`, each as ``contents(of:limit:)`` gives it, read with one `read`
    /// when their local headers run forward within ``runLimit`` bytes (consecutive entries of an
    /// archive we write): a verifier reads a few hundred thousand small entries, and one call per
    /// entry cost a tenth of its CPU in the kernel. Any entry the run does not hold whole is read
    /// on its own. A stored entry comes back as a slice of the run, not copied.
    public func contents(ofRun entries: ArraySlice<Entry>, limit: Int = 512 << 20, checkingCRC: Bool = true) -> [Result<ArraySlice<UInt8>, Failure>] {
        func each() -> [Result<ArraySlice<UInt8>, Failure>] {
            entries.map { entry in Result { () throws(Failure) in ArraySlice(try contents(of: entry, limit: limit, checkingCRC: checkingCRC)) } }
        }
        guard let first = entries.first, entries.count > 1 else { return each() }
        var previous = first.localHeaderOffset, end = previous
        for entry in entries {
            guard entry.localHeaderOffset >= previous, entry.localHeaderOffset < source.size, entry.size <= UInt64(limit), entry.compressedSize <= UInt64(limit),
                  entry.compressedSize <= Self.runLimit else { return each() }
            previous = entry.localHeaderOffset
            end = max(end, previous + Self.extent(of: entry))
            guard end - first.localHeaderOffset <= Self.runLimit else { return each() }
        }
        guard first.localHeaderOffset < source.size,
              let block = try? source.read(at: first.localHeaderOffset, count: Int(min(end, source.size) - first.localHeaderOffset)) else {
            return each()
        }
        return entries.map { entry in
            Result { () throws(Failure) in
                if let stored = try stored(entry, in: block, at: Int(entry.localHeaderOffset - first.localHeaderOffset)) {
                    return try Self.decode(entry, stored, checkingCRC: checkingCRC)
                }
                return ArraySlice(try contents(of: entry, limit: limit, checkingCRC: checkingCRC))
            }
        }
    }

    /// Most bytes ``contents(ofRun:limit:)`` reads at once.
    static let runLimit: UInt64 = 256 << 10

    /// The bytes read for `entry` in the hope of holding its local header and data.
    static func extent(of entry: Entry) -> UInt64 {
        30 + UInt64(entry.name.utf8.count) + localExtraSlack + entry.compressedSize
    }

    /// The stored data of `entry` from `block`, whose byte `at` is its local header; nil when the
    /// block ends before the data does (a longer local extra field than expected).
    private func stored(_ entry: Entry, in block: [UInt8], at: Int) throws(Failure) -> ArraySlice<UInt8>? {
        guard at >= 0, block.count - at >= 30, block.u32(at) == 0x0403_4b50 else { throw Failure(message: "damaged local header") }
        let offset = 30 + UInt64(block.u16(at + 26)) + UInt64(block.u16(at + 28))
        let start = entry.localHeaderOffset + offset
        guard start <= source.size, entry.compressedSize <= source.size - start else { throw Failure(message: "entry data out of bounds") }
        let end = UInt64(at) + offset + entry.compressedSize
        return end <= UInt64(block.count) ? block[(at + Int(offset))..<Int(end)] : nil
    }

    /// `stored` as the entry's uncompressed contents (stored data as the same slice), checked
    /// against its size and, when `checkingCRC`, its CRC-32.
    private static func decode(_ entry: Entry, _ stored: ArraySlice<UInt8>, checkingCRC: Bool) throws(Failure) -> ArraySlice<UInt8> {
        let data: ArraySlice<UInt8>
        switch entry.method {
        case 0: data = stored
        case 8: data = ArraySlice(try ZipInflater.withInflater { (inflater) throws(Failure) in try inflater.inflate(stored, size: Int(entry.size)) })
        default: throw Failure(message: "unsupported compression method \(entry.method)")
        }
        guard UInt64(data.count) == entry.size else { throw Failure(message: "CRC-32 or size does not match") }
        if checkingCRC, CRC32.of(data) != entry.crc { throw Failure(message: "CRC-32 or size does not match") }
        return data
    }

    /// Bytes read past the directory's name in the hope that the local header's extra field fits.
    static let localExtraSlack: UInt64 = 32
}

extension [UInt8] {
    func u16(_ at: Int) -> UInt16 {
        guard at >= 0, at + 2 <= count else { return 0 }
        return UInt16(self[at]) | UInt16(self[at + 1]) << 8
    }

    func u32(_ at: Int) -> UInt32 {
        guard at >= 0, at + 4 <= count else { return 0 }
        return (0..<4).reduce(UInt32(0)) { $0 | UInt32(self[at + $1]) << (8 * UInt32($1)) }
    }

    func u64(_ at: Int) -> UInt64 {
        guard at >= 0, at + 8 <= count else { return 0 }
        return (0..<8).reduce(UInt64(0)) { $0 | UInt64(self[at + $1]) << (8 * UInt64($1)) }
    }
}
