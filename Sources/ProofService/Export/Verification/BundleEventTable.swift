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
/// are read, then ``seal(duplicate:)`` places them in an open-addressing table (linear probing,
/// slots at least twice the entries, positions from Swift's per-process seeded hash so a hostile
/// bundle cannot choose colliding ids). Sealing builds the table a window of slots at a time in
/// memory and writes each window once: placing records one `pwrite` at a time cost two system
/// calls per proof on the verifier's one serial thread. Each proof's lookup then costs one
/// `pread`, served by the page cache, which is not the verifier's resident memory; which slots
/// were taken is kept in memory, one bit per slot. The one owner of its file descriptor: closed
/// in `deinit`.
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
    /// Slots built in memory at once while sealing (8 MiB); past one window, the records are first
    /// sorted into a run per window, so each window reads only its own.
    static let windowSlots = 1 << 17
    /// This table's window (smaller in tests, to cross windows and wrap with few records).
    private let windowSlots: Int
    private static let empty: UInt8 = 0, live: UInt8 = 1
    private let descriptor: Int32
    private var pending: [UInt8] = []
    /// Records appended (before ``seal(duplicate:)``).
    private(set) var count = 0
    /// After ``seal(duplicate:)``: where the table starts, and its slots (a power of two).
    private var tableStart: Int64 = 0
    private var slots = 0
    /// One bit per slot: its record was taken.
    private var taken: [UInt64] = []

    init(windowSlots: Int = BundleEventTable.windowSlots) throws(Failure) {
        precondition(windowSlots > 0 && windowSlots & (windowSlots - 1) == 0, "a window is a power of two of slots")
        self.windowSlots = windowSlots
        let directory = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array((directory + "/countersign-verify-XXXXXX").utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else { throw Failure(code: errno) }
        _ = template.withUnsafeBufferPointer { unlink($0.baseAddress!) }
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// Appends one entry (before ``seal(duplicate:)``), buffered in 256 KiB.
    func append(_ record: Record) throws(Failure) {
        Self.encode(record, into: &pending)
        count += 1
        if pending.count >= 256 * 1024 { try flushPending() }
    }

    /// Places every appended record in the table, calling `duplicate` for each record whose id an
    /// earlier record already had (it replaces that one, as a later event would in a dictionary).
    /// Holds one window of slots and the records that probe past its end, never the duplicates.
    func seal(duplicate: (Record) -> Void) throws(Failure) {
        try flushPending()
        let appended = Int64(count) * Int64(Self.recordSize)
        tableStart = appended
        slots = 16
        while slots < count * 2 { slots <<= 1 }
        taken = [UInt64](repeating: 0, count: (slots + 63) / 64)
        guard ftruncate(descriptor, off_t(tableStart + Int64(slots) * Int64(Self.recordSize))) == 0 else { throw Failure(code: errno) }
        let windowSlots = min(slots, windowSlots), windows = slots / windowSlots
        var window = [UInt8](repeating: 0, count: windowSlots * Self.recordSize)
        // Records whose probe ran past the end of the window being built: they go on at the start of the next.
        var carried: [UInt8] = []
        /// Places the record at `record[at...]` from slot `from` of the window; false when it runs past the end.
        func place(_ record: UnsafeRawBufferPointer, from: Int) -> Bool {
            window.withUnsafeMutableBytes { table in
                var slot = from
                while slot < windowSlots {
                    let at = slot * Self.recordSize
                    if table[at + 27] == Self.empty {
                        table.baseAddress!.advanced(by: at).copyMemory(from: record.baseAddress!, byteCount: Self.recordSize)
                        table[at + 27] = Self.live
                        return true
                    }
                    if memcmp(table.baseAddress! + at, record.baseAddress!, 16) == 0 {
                        duplicate(Self.decode(record))
                        table.baseAddress!.advanced(by: at).copyMemory(from: record.baseAddress!, byteCount: Self.recordSize)
                        table[at + 27] = Self.live
                        return true
                    }
                    slot += 1
                }
                return false
            }
        }
        func placeCarried() {
            let records = carried
            carried.removeAll(keepingCapacity: true)
            records.withUnsafeBytes { bytes in
                for start in stride(from: 0, to: bytes.count, by: Self.recordSize) {
                    let record = UnsafeRawBufferPointer(rebasing: bytes[start..<start + Self.recordSize])
                    if !place(record, from: 0) { carried += record }
                }
            }
        }
        /// Calls `body` with each record of `count` from `offset` on, read 1 MiB at a time.
        func forEachRecord(from offset: Int64, count: Int, _ body: (UnsafeRawBufferPointer) -> Void) throws(Failure) {
            var done = 0
            while done < count {
                let chunk = try read(at: offset + Int64(done) * Int64(Self.recordSize),
                                     count: min(1 << 20, (count - done) * Self.recordSize))
                chunk.withUnsafeBytes { bytes in
                    for start in stride(from: 0, to: bytes.count, by: Self.recordSize) {
                        body(UnsafeRawBufferPointer(rebasing: bytes[start..<start + Self.recordSize]))
                    }
                }
                done += chunk.count / Self.recordSize
            }
        }
        func windowNumber(of record: UnsafeRawBufferPointer) -> Int {
            homeSlot(record.loadUnaligned(fromByteOffset: 60, as: UInt32.self)) / windowSlots
        }
        // The records sorted into one run per window (after the table), in their order: each
        // window then reads its own records only, so sealing reads every record three times
        // whatever the number of windows.
        var runs = [Int](repeating: 0, count: windows + 1)
        let runsStart = tableStart + Int64(slots) * Int64(Self.recordSize)
        if windows > 1 {
            try forEachRecord(from: 0, count: count) { record in runs[windowNumber(of: record) + 1] += 1 }
            for number in 0..<windows { runs[number + 1] += runs[number] }
            var next = Array(runs.dropLast())
            var buffers = [[UInt8]](repeating: [], count: windows)
            func flush(_ number: Int) throws(Failure) {
                try write(buffers[number], at: runsStart + Int64(next[number]) * Int64(Self.recordSize))
                next[number] += buffers[number].count / Self.recordSize
                buffers[number].removeAll(keepingCapacity: true)
            }
            var failure: Failure?
            try forEachRecord(from: 0, count: count) { record in
                guard failure == nil else { return }
                let number = windowNumber(of: record)
                buffers[number] += record
                guard buffers[number].count >= 64 * Self.recordSize else { return }
                do throws(Failure) { try flush(number) } catch { failure = error }
            }
            if let failure { throw failure }
            for number in 0..<windows where !buffers[number].isEmpty { try flush(number) }
        }
        for number in 0..<windows {
            let first = number * windowSlots
            window.withUnsafeMutableBytes { _ = memset($0.baseAddress!, 0, $0.count) }
            placeCarried()
            let (start, records) = windows > 1 ? (runsStart + Int64(runs[number]) * Int64(Self.recordSize), runs[number + 1] - runs[number])
                : (0, count)
            try forEachRecord(from: start, count: records) { record in
                let home = homeSlot(record.loadUnaligned(fromByteOffset: 60, as: UInt32.self))
                if !place(record, from: home - first) { carried += record }
            }
            try write(window, at: tableStart + Int64(first) * Int64(Self.recordSize))
        }
        // What ran past the last slot goes on at the first (the table wraps), a window at a time.
        var number = 0
        while !carried.isEmpty {
            let at = tableStart + Int64(number * windowSlots) * Int64(Self.recordSize)
            window = try read(at: at, count: windowSlots * Self.recordSize)
            placeCarried()
            try write(window, at: at)
            number = (number + 1) % windows
        }
    }

    /// The record of `id` still in the table, marked taken (a second take finds none).
    func take(_ id: UUID) throws(Failure) -> Record? {
        guard slots > 0 else { return nil }
        var slot = homeSlot(Self.hash(id)), probed = 0
        // A full table cannot occur (slots are at least twice the records), but never loop forever.
        while probed < slots {
            // Most probes end within a few slots: read four at once.
            let run = min(4, slots - slot)
            let bytes = try read(at: tableStart + Int64(slot) * Int64(Self.recordSize), count: run * Self.recordSize)
            for index in 0..<run {
                let at = index * Self.recordSize
                if bytes[at + 27] == Self.empty { return nil }
                guard withUnsafeBytes(of: id.uuid, { bytes[at..<at + 16].elementsEqual($0) }) else { continue }
                let found = slot + index
                let (word, bit) = (found / 64, UInt64(1) << (found % 64))
                if taken[word] & bit != 0 { return nil }
                taken[word] |= bit
                return Self.decode(bytes[at..<at + Self.recordSize])
            }
            slot = (slot + run) & (slots - 1)
            probed += run
        }
        return nil
    }

    /// The seeded hash of `id`, as stored in its record.
    private static func hash(_ id: UUID) -> UInt32 { UInt32(truncatingIfNeeded: id.hashValue) }

    private func homeSlot(_ hash: UInt32) -> Int { Int(hash) & (slots - 1) }

    /// `[0, 16)` id, `[16, 24)` seq, `[24, 26)` chain, `26` flags, `27` state, `[28, 60)` binding,
    /// `[60, 64)` the id's hash, so sealing need not hash each id again for every window.
    private static func encode(_ record: Record, into out: inout [UInt8]) {
        withUnsafeBytes(of: record.id.uuid) { out += $0 }
        withUnsafeBytes(of: record.seq.littleEndian) { out += $0 }
        withUnsafeBytes(of: record.chain.littleEndian) { out += $0 }
        out += [record.flags, live]
        record.binding.append(to: &out)
        withUnsafeBytes(of: hash(record.id).littleEndian) { out += $0 }
    }

    private static func decode(_ bytes: ArraySlice<UInt8>) -> Record {
        bytes.withUnsafeBytes { decode($0) }
    }

    private static func decode(_ bytes: UnsafeRawBufferPointer) -> Record {
        Record(id: UUID(uuid: bytes.loadUnaligned(as: uuid_t.self)),
               seq: Int64(littleEndian: bytes.loadUnaligned(fromByteOffset: 16, as: Int64.self)),
               chain: Int16(littleEndian: bytes.loadUnaligned(fromByteOffset: 24, as: Int16.self)), flags: bytes[26],
               binding: Digest32(Array(bytes[28..<60])))
    }

    private func flushPending() throws(Failure) {
        guard !pending.isEmpty else { return }
        try write(pending, at: Int64(count - pending.count / Self.recordSize) * Int64(Self.recordSize))
        pending.removeAll(keepingCapacity: true)
    }

    private func write(_ bytes: [UInt8], at offset: Int64) throws(Failure) {
        var done = 0
        while done < bytes.count {
            let result = bytes.withUnsafeBytes { pwrite(descriptor, $0.baseAddress! + done, $0.count - done, off_t(offset) + off_t(done)) }
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
