import Postgres

/// The part of each audit chain an export bundle carries so it stands alone: from the oldest
/// exported proof's `proof_recorded` event of that chain up to the head its signed checkpoint
/// names (the chain's head in the export's snapshot, or in an earlier stored checkpoint that
/// covers every exported proof: ``ending(at:)``). Re-hashing the segment from its first event
/// and arriving at the signed head proves every event in it (each exported proof's among them) is
/// in the log the checkpoint covers (docs/decisions/0019-standalone-bundles.md).
public struct AuditSegment: Sendable {
    /// The heads the segments end at, by chain.
    let heads: [Int16: AuditChainHead]
    /// The seq of the oldest included event, by chain.
    public private(set) var firstSeq: [Int16: Int64] = [:]
    /// The seq of the newest included event, by chain.
    public private(set) var lastSeq: [Int16: Int64] = [:]
    /// Events read per round trip.
    static let pageSize = 1000

    /// Bounds for the snapshot whose chain heads are `heads`.
    public init(heads: [AuditChainHead]) {
        self.heads = Dictionary(heads.map { ($0.chain, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// Makes the segment of `event`'s chain start at `event` or earlier.
    public mutating func include(_ event: AuditEvent) {
        firstSeq[event.chain] = min(firstSeq[event.chain] ?? event.seq, event.seq)
        lastSeq[event.chain] = max(lastSeq[event.chain] ?? event.seq, event.seq)
    }

    /// These segments ending at `heads` instead, when every chain holding an included event has a
    /// head there at or after that chain's newest included event (else nil).
    public func ending(at heads: [AuditChainHead]) -> AuditSegment? {
        var ending = AuditSegment(heads: heads)
        for (chain, last) in lastSeq {
            guard let head = ending.heads[chain], head.seq >= last else { return nil }
        }
        ending.firstSeq = firstSeq
        ending.lastSeq = lastSeq
        return ending
    }

    /// True when `event` belongs to a segment: its chain has one, and it lies between its start and head.
    public func contains(_ event: AuditEvent) -> Bool {
        guard let first = firstSeq[event.chain], let head = heads[event.chain] else { return false }
        return event.seq >= first && event.seq <= head.seq
    }

    /// A segment that does not link event to event up to its head (an event changed, removed or
    /// reordered since the head was signed): `seq` is where the chain `chain` breaks off.
    public struct Break: Error, Equatable {
        public var chain: Int16
        public var seq: Int64
    }

    /// Reads every event of the segments in `session` (the export's snapshot), by ascending seq,
    /// in pages of ``pageSize``: one pass over the log from the oldest segment's start. Throws
    /// ``Break`` when a chain's events do not link one to the next, or do not end at its head: a
    /// head from a stored checkpoint is older than the snapshot, so a chain rewritten since no
    /// longer reaches it (the events read so far have been handed to `each`).
    func read(in session: PostgresSession, each: (AuditEvent) async throws -> Void) async throws {
        guard let start = firstSeq.values.min() else { return }
        let last = firstSeq.keys.compactMap { heads[$0]?.seq }.max() ?? start
        var key = (start - 1, AuditTimestamp(micros: -62_135_596_800_000_000))  // year 1: below any event, inside timestamptz's range
        var tails: [Int16: (seq: Int64, hash: [UInt8])] = [:]
        reading: while true {
            let page = try await AuditLog.page(after: key, limit: Self.pageSize, in: session)
            for event in page where contains(event) {
                if let tail = tails[event.chain], tail.hash != event.prevHash || tail.seq >= event.seq {
                    throw Break(chain: event.chain, seq: event.seq)
                }
                tails[event.chain] = (event.seq, event.hash)
                try await each(event)
            }
            guard let tail = page.last, page.count == Self.pageSize, tail.seq < last else { break reading }
            key = (tail.seq, AuditTimestamp(micros: tail.occurredAtMicros))
        }
        for (chain, tail) in tails where heads[chain].map({ $0.seq != tail.seq || $0.hash != tail.hash }) ?? true {
            throw Break(chain: chain, seq: tail.seq)
        }
    }
}
