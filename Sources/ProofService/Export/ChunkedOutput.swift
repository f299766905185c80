/// Collects small writes into chunks of about 64 KiB before handing them on.
///
/// One buffer serves every chunk: it is cleared in place once the sink returns. Both sinks (the
/// HTTP body writer and the CLI's file) copy what they are given, so the buffer is uniquely held
/// again by then; a sink that kept it would only cost a fresh buffer. A new buffer per chunk was
/// mapped fresh by malloc each time, so every 4 KiB of an export took a page fault.
struct ChunkedOutput {
    static let chunkSize = 64 * 1024
    private var pending: [UInt8] = []
    private(set) var total = 0

    mutating func write(_ bytes: [UInt8], to sink: ([UInt8]) async throws -> Void) async throws {
        if pending.isEmpty, bytes.count >= Self.chunkSize {
            total += bytes.count
            try await sink(bytes)
            return
        }
        try await append(to: sink) { $0.append(contentsOf: bytes) }
    }

    /// Appends whatever `fill` adds to the pending chunk, straight into its buffer.
    mutating func append<Failure: Error>(to sink: ([UInt8]) async throws -> Void,
                                         _ fill: (inout [UInt8]) throws(Failure) -> Void) async throws {
        let before = pending.count
        try fill(&pending)
        total += pending.count - before
        if pending.count >= Self.chunkSize { try await flush(to: sink) }
    }

    mutating func flush(to sink: ([UInt8]) async throws -> Void) async throws {
        guard !pending.isEmpty else { return }
        try await sink(pending)
        pending.removeAll(keepingCapacity: true)
    }
}
