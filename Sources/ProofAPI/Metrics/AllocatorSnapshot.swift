import CMallocStatistics

/// What the C allocator holds at one moment (glibc's `mallinfo2`), exposed by `/metrics` as
/// `countersign_malloc_bytes{state}`.
///
/// RSS alone cannot tell a leak from an allocator that keeps freed memory: glibc gives threads
/// their own arenas, and a new worker thread's arena keeps what it once held. With these figures a
/// growing `in_use` is a leak and a growing `free` is retained memory (docs/reliability.md, soak).
public struct AllocatorSnapshot: Sendable, Equatable {
    /// Bytes handed out and not yet freed (arenas and large mmapped blocks together).
    public var inUse: Int
    /// Bytes freed by the program but kept by the allocator in its arenas.
    public var free: Int
    /// Bytes of large blocks that live in their own mapping (part of `inUse`).
    public var mmapped: Int

    /// The allocator's figures now, or nil where the C library has no `mallinfo2` (not glibc).
    public static func now() -> AllocatorSnapshot? {
        let statistics = cs_malloc_statistics_now()
        guard statistics.available != 0 else { return nil }
        return AllocatorSnapshot(
            inUse: Int(statistics.in_use_bytes) + Int(statistics.mmapped_bytes),
            free: Int(statistics.free_bytes),
            mmapped: Int(statistics.mmapped_bytes))
    }
}
