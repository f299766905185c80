#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Where ``BundleEventIndex`` keeps its entries: a hash table of fixed 64-byte records in an
/// anonymous temporary file (unlinked as soon as it is opened), not in memory, so verifying a
/// bundle of a million proofs takes the same memory as one of ten thousand (issue 23; before, the
/// index held ~60 bytes per proof in a dictionary). Entries are appended while the audit segments
/// are read, then ``seal()`` places them in an open-addressing table (linear probing, slots at
/// least twice the entries, positions from Swift's per-process seeded hash so a hostile bundle
/// cannot choose colliding ids); each proof then costs one or two `pread`s and one `pwrite`, served
/// by the page cache, which is not the verifier's resident memory. The one owner of its file
/// descriptor: closed in `deinit`.
final class BundleEventTable {
    /// One indexed event: what ``BundleEventIndex`` needs to match a proof.
    struct Record: Equatable {
        var id: UUID
        var seq: Int64
        var chain: Int16
        var flags: UInt8
        var binding: Digest32
    }

    /// Why the temporary file failed (a full disk, an I/O error).
    struct Failure: Error, CustomStringConvertible {
        var code: Int32
        var description: String { "the verifier's temporary file failed: \(String(cString: strerror(code)))" }
    }

    static let recordSize = 64
    private static let empty: UInt8 = 0, live: UInt8 = 1, taken: UInt8 = 2
    private let descriptor: Int32
    private var pending: [UInt8] = []
    /// Records appended (before ``seal()``).
    private(set) var count = 0
    /// After ``seal()``: where the table starts, and its slots (a power of two).
    private var tableStart: Int64 = 0
    private var slots = 0

    init() throws(Failure) {
        let directory = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array((directory + "/countersign-verify-XXXXXX").utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else { throw Failure(code: errno) }
        _ = template.withUnsafeBufferPointer { unlink($0.baseAddress!) }
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// Appends one entry (before ``seal()``), buffered in 256 KiB.
    func append(_ record: Record) throws(Failure) {
        pending += Self.encode(record, state: Self.live)
        count += 1
        if pending.count >= 256 * 1024 { try flushPending() }
    }

    /// Places every appended record in the table; returns the records whose id an earlier record
    /// already had (each replaces it, as a later event would in a dictionary).
    func seal() throws(Failure) -> [Record] {
        try flushPending()
        let appended = Int64(count) * Int64(Self.recordSize)
        tableStart = appended
        slots = 16
        while slots < count * 2 { slots <<= 1 }
        guard ftruncate(descriptor, off_t(tableStart + Int64(slots) * Int64(Self.recordSize))) == 0 else { throw Failure(code: errno) }
        var duplicates: [Record] = []
        var offset: Int64 = 0
        while offset < appended {
            let chunk = try read(at: offset, count: Int(min(Int64(1 << 20), appended - offset)))
            for start in stride(from: 0, to: chunk.count, by: Self.recordSize) {
                let record = Self.decode(chunk[start..<start + Self.recordSize])
                let (slot, found) = try probe(record.id)
                if found != nil { duplicates.append(record) }
                try write(Self.encode(record, state: Self.live), at: slot)
            }
            offset += Int64(chunk.count)
        }
        return duplicates
    }

    /// The record of `id` still in the table, marked taken (a second take finds none).
    func take(_ id: UUID) throws(Failure) -> Record? {
        guard slots > 0 else { return nil }
        let (slot, found) = try probe(id)
        guard let found, found.state == Self.live else { return nil }
        try write([Self.taken], at: slot, within: 27)
        return found.record
    }

    /// The slot holding `id`, or the empty slot where it would go.
    private func probe(_ id: UUID) throws(Failure) -> (Int64, (record: Record, state: UInt8)?) {
        var slot = Int(UInt(bitPattern: id.hashValue) & UInt(slots - 1))
        while true {
            let offset = tableStart + Int64(slot) * Int64(Self.recordSize)
            let bytes = try read(at: offset, count: Self.recordSize)
            let state = bytes[27]
            if state == Self.empty { return (offset, nil) }
            let record = Self.decode(bytes[...])
            if record.id == id { return (offset, (record, state)) }
            slot = (slot + 1) & (slots - 1)
        }
    }

    /// `[0, 16)` id, `[16, 24)` seq, `[24, 26)` chain, `26` flags, `27` state, `[28, 60)` binding.
    private static func encode(_ record: Record, state: UInt8) -> [UInt8] {
        var out = withUnsafeBytes(of: record.id.uuid) { Array($0) }
        out.reserveCapacity(recordSize)
        withUnsafeBytes(of: record.seq.littleEndian) { out += $0 }
        withUnsafeBytes(of: record.chain.littleEndian) { out += $0 }
        out += [record.flags, state]
        out += record.binding.bytes
        out += [0, 0, 0, 0]
        return out
    }

    private static func decode(_ bytes: ArraySlice<UInt8>) -> Record {
        let base = bytes.startIndex
        func integer<T: FixedWidthInteger>(_ at: Int, _: T.Type) -> T {
            (0..<MemoryLayout<T>.size).reduce(T.zero) { $0 | T(bytes[base + at + $1]) << (8 * $1) }
        }
        let id = bytes[base..<base + 16].withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }
        return Record(id: id, seq: integer(16, Int64.self), chain: integer(24, Int16.self), flags: bytes[base + 26],
                      binding: Digest32(Array(bytes[base + 28..<base + 60])))
    }

    private func flushPending() throws(Failure) {
        guard !pending.isEmpty else { return }
        try write(pending, at: Int64(count - pending.count / Self.recordSize) * Int64(Self.recordSize))
        pending.removeAll(keepingCapacity: true)
    }

    private func write(_ bytes: [UInt8], at offset: Int64, within: Int = 0) throws(Failure) {
        var done = 0
        while done < bytes.count {
            let result = bytes.withUnsafeBytes { pwrite(descriptor, $0.baseAddress! + done, $0.count - done, off_t(offset) + off_t(within + done)) }
            if result < 0 {
                if errno == EINTR { continue }
                throw Failure(code: errno)
            }
            done += result
        }
    }

    private func read(at offset: Int64, count: Int) throws(Failure) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let result = out.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress! + done, count - done, off_t(offset) + off_t(done)) }
            if result < 0 {
                if errno == EINTR { continue }
                throw Failure(code: errno)
            }
            guard result > 0 else { throw Failure(code: EIO) }
            done += result
        }
        return out
    }
}
