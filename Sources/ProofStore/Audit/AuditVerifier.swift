import Cryptography
import Execution
import Foundation
import Postgres

/// Walks the audit chains in constant memory and re-hashes every proof they vouch for.
///
/// Events are read by ascending `(seq, occurred_at)` in pages of ``pageSize``, inside one
/// REPEATABLE READ, READ ONLY transaction (one consistent snapshot, no locks that block appends),
/// keeping the running head of every chain (``AuditLog/chainCount`` of them: constant memory). For
/// every event it checks, in this order: its seq is not the previous event's (`duplicate_seq`);
/// its chain is one of `audit_chains` (`unknown_chain`); a v1 event lies in the legacy prefix of
/// chain 0 (`encoding_invalid`) with no gap in its numbers (`gap`); the stored hash is
/// `SHA-256(prev_hash || canonical bytes)` (`hash_mismatch`); `prev_hash` is the hash of the
/// previous event of the same chain (`prev_mismatch`). For a `proof_recorded` event it then reads
/// the proof (in batches of ``proofBatchSize``), re-hashes its original body and its PNG, and
/// compares both with the digests in the event's details and those stored in the proofs table; a
/// proof that is gone is accepted only when its delivery's `delivered_at` lies in the period of a
/// `proofs_archived` event (the retention procedure archived and dropped it), and counted. Then
/// the proof's delivery, canonical ink and facts, and a created delivery's facts, must still give
/// what their events bound (AuditVerifier+Facts.swift), and so must failed attempts and closed
/// deliveries (AuditVerifier+Lifecycle.swift), and device keys and device-signed proofs
/// (AuditVerifier+Devices.swift).
/// After the walk, every head in `audit_chains` must be its chain's newest event (`head_mismatch`),
/// every stored checkpoint must hold (`checkpoint_*`), every stored proof must have exactly one
/// `proof_recorded` event, and every attempt, closure, delivered delivery and API key its event
/// (AuditVerifier+Unrecorded.swift).
public struct AuditVerifier: Sendable {
    let database: PostgresClient
    /// Events (and checkpoints) read per round trip.
    public var pageSize: Int
    /// Proofs (body + PNG) read per round trip.
    public var proofBatchSize: Int
    /// Connections reading proofs at once, all in the walk's snapshot (``withSnapshotReaders(_:of:_:)``):
    /// the command-line verifier uses eight (`VerifyCommand.proofReaders`), the service one.
    public var proofReaders: Int

    /// Recomputes the hashes of a page of events (``AuditEvent/recomputedHash``, in order): the
    /// CPU-heavy half of the walk. The default hashes inline; ProofService passes one that spreads
    /// a page over the cores on threads that may block (`AuditVerifier.parallel`), so the walk
    /// hashes one page while the next is read.
    public typealias Hashing = @Sendable (_ events: [AuditEvent]) async throws -> [[UInt8]]

    let hashing: Hashing
    /// Opens sealed proofs (migration 0025) to re-hash them; nil: a sealed proof's body, ink and
    /// PNG cannot be checked, and verification fails with ``SealingError/notConfigured``.
    let sealer: ProofSealer?
    /// Where sealed proofs are opened and hashed (CPU work the database does for clear ones).
    let offload: any CPUOffload

    /// Creates a verifier over `database`, whose pool must hold `proofReaders` connections; sealed
    /// proofs are opened with `dataKeys` on `offload`.
    public init(database: PostgresClient, dataKeys: DataKeyProvider? = nil, pageSize: Int = 1_000, proofBatchSize: Int = 50,
                proofReaders: Int = 1, hashing: @escaping Hashing = { events in events.map { $0.recomputedHash } },
                offload: any CPUOffload = .inline) {
        self.sealer = dataKeys.map(ProofSealer.init(keys:))
        self.offload = offload
        self.database = database
        self.pageSize = pageSize
        self.proofBatchSize = proofBatchSize
        self.proofReaders = max(1, proofReaders)
        self.hashing = hashing
    }

    /// The running state of the walk.
    struct Walk {
        /// Each chain's newest event so far, keyed by chain (the chains of `audit_chains`).
        var heads: [Int16: AuditChainHead]
        /// Chain 0 has had only v1 events so far.
        var legacyOpen = true
        /// The previous event's seq (0 before the first).
        var lastSeq: Int64 = 0
        /// Events checked.
        var count: Int64 = 0
        /// Recorded proofs found missing inside an archived period.
        var archived: Int64 = 0
        /// References of the erased deliveries whose events the walk passed.
        var erased: Set<String> = []
        /// An incremental run's starting heads: events at or below them are trusted, not walked.
        var trustedThrough: [Int16: Int64] = [:]
        /// Witnessed heads (seq > 0) the walk must pass, by seq, and those it passed with their hash.
        var wanted: [Int64: Int16] = [:]
        var passed: [Int64: AuditChainHead] = [:]
        /// The newest witnessed checkpoint's heads, and the events after them (the unwitnessed window).
        var witnessedThrough: [Int16: Int64]?
        var unwitnessed: Int64 = 0
    }

    /// Verifies every chain, the heads recorded in `audit_chains`, then every stored signed
    /// checkpoint: each must carry a valid Ed25519 signature (by one of `trustedPublicKeys` when
    /// given) and every head it signs must still be in its chain with the same hash — a head
    /// beyond the chain's end means its tail was removed.
    public func verify(trustedPublicKeys: [Ed25519PublicKey] = []) async throws -> AuditVerification {
        try await verify(trustedPublicKeys: trustedPublicKeys, witnessed: [], incremental: false).result
    }

    /// ``verify(trustedPublicKeys:)`` that also checks checkpoints read back from witnesses
    /// (AuditVerifier+Witnesses.swift): each must be signed by a trusted key, every head it signs
    /// must be in the recomputed chain, and it must still be in `audit_checkpoints`. With
    /// `incremental`, the newest witnessed (version 2) checkpoint is trusted for everything up to
    /// its heads, once they are found in the database: only later events are walked.
    public func verify(trustedPublicKeys: [Ed25519PublicKey], witnessed: [WitnessedCheckpoint], incremental: Bool,
                       now: @Sendable () -> Double = { Date().timeIntervalSince1970 }) async throws -> AuditVerificationReport {
        if let failure = Self.checkSignatures(of: witnessed, trusted: trustedPublicKeys) { return AuditVerificationReport(result: .broken(failure)) }
        let ordered = witnessed.sorted { $0.checkpoint.signedAtMicros < $1.checkpoint.signedAtMicros }
        let start = incremental ? ordered.last(where: { $0.checkpoint.version == 2 }) : nil
        let considered = start.map { start in ordered.filter { $0.checkpoint.signedAtMicros >= start.checkpoint.signedAtMicros } } ?? ordered
        return try await database.withTransaction(isolation: "REPEATABLE READ, READ ONLY", retryingStalePlans: true) { session in
            func broken(_ failure: AuditBreak) -> AuditVerificationReport {
                AuditVerificationReport(result: .broken(failure), witnessedChecked: considered.count, startedAfter: start?.name)
            }
            let recorded = try await AuditCheckpointStore.heads(in: session)
            var walk = Walk(heads: Dictionary(uniqueKeysWithValues: recorded.map { ($0.chain, AuditChainHead.empty($0.chain)) }))
            if let start, let failure = try await begin(at: start, walk: &walk, in: session) { return broken(failure) }
            for checkpoint in considered {
                for head in checkpoint.checkpoint.anchoredHeads where head.seq > (walk.trustedThrough[head.chain] ?? 0) {
                    walk.wanted[head.seq] = head.chain
                }
            }
            if let newest = ordered.last {
                walk.witnessedThrough = Dictionary(newest.checkpoint.anchoredHeads.map { ($0.chain, $0.seq) }, uniquingKeysWith: max)
            }
            let walkFailure = try await withSnapshotReaders(proofReaders - 1, of: session) { readers in
                try await walkEvents(&walk, in: session, readers: readers)
            }
            if let failure = walkFailure { return broken(failure) }
            for head in recorded {
                let walked = walk.heads[head.chain] ?? .empty(head.chain)
                if walked != head {
                    return broken(AuditBreak(seq: walked.seq, kind: .headMismatch, expected: "\(walked.seq) \(walked.hash.hexString)",
                                             found: "\(head.seq) \(head.hash.hexString)", subject: "chain:\(head.chain)", chain: head.chain))
                }
            }
            if let failure = try await checkWitnessed(considered, walk: walk, in: session) { return broken(failure) }
            let trustedThrough = walk.trustedThrough
            let since: (micros: Int64, seq: Int64) = start.map { ($0.checkpoint.signedAtMicros, Self.lowerBound(trustedThrough)) } ?? (0, 0)
            if let failure = try await checkCheckpoints(walk: walk, trusted: trustedPublicKeys, signedFrom: since.micros, in: session) {
                return broken(failure)
            }
            if let failure = try await checkEveryProofHasOneEvent(in: session, since: since) { return broken(failure) }
            let window = ordered.last.map { newest in
                AuditVerificationReport.UnwitnessedWindow(
                    since: newest.name, signedAtMicros: newest.checkpoint.signedAtMicros, events: walk.unwitnessed,
                    seconds: max(0, now() - Double(newest.checkpoint.signedAtMicros) / 1_000_000))
            }
            if let failure = try await checkEveryAttemptHasEvent(in: session, since: since) { return broken(failure) }
            if let failure = try await checkEveryChangeHasEvent(in: session, since: since) { return broken(failure) }
            if let failure = try await checkEveryErasureHasEvent(in: session) { return broken(failure) }
            var report = AuditVerificationReport(result: .ok(count: walk.count, heads: recorded, archivedProofs: walk.archived),
                                                 witnessedChecked: considered.count, startedAfter: start?.name, window: window)
            report.erasedDeliveries = walk.erased.sorted()
            return report
        }
    }

    /// Walks the events after the walk's trusted heads (all of them in a full run), page by page:
    /// while one page's hashes are recomputed (``hashing``), the next page is read.
    func walkEvents(_ walk: inout Walk, in session: PostgresSession, readers: [PostgresSession] = []) async throws -> AuditBreak? {
        var events = try await AuditLog.page(after: (Self.lowerBound(walk.trustedThrough), AuditTimestamp(micros: 0)), limit: pageSize,
                                             in: session)  // events at the bound itself are trusted heads
        while let last = events.last {
            let trusted = walk.trustedThrough
            let fresh = trusted.isEmpty ? events : events.filter { $0.seq > (trusted[$0.chain] ?? 0) }
            async let hashes = hashing(fresh)
            let next = try await AuditLog.page(after: (last.seq, AuditTimestamp(micros: last.occurredAtMicros)), limit: pageSize, in: session)
            let proofs = try await proofDigests(for: fresh, in: session, readers: readers)
            let deliveries = try await deliveryDigests(for: fresh, in: session)
            let lifecycle = try await lifecycleDigests(for: fresh, in: session)
            let devices = try await deviceEvidence(for: fresh, digests: proofs.digests, in: session)
            let erased = try await erasedReferences(for: fresh, in: session)
            let recomputed = try await hashes
            for (index, event) in fresh.enumerated() {
                if let failure = check(event, walk: &walk, digests: proofs.digests, archived: proofs.archived, deliveries: deliveries,
                                       lifecycle: lifecycle, devices: devices, erased: erased,
                                       recomputed: recomputed.count == fresh.count ? recomputed[index] : nil) {
                    return failure
                }
                if walk.wanted[event.seq] != nil { walk.passed[event.seq] = AuditChainHead(chain: event.chain, seq: event.seq, hash: event.hash) }
                if let through = walk.witnessedThrough, event.seq > (through[event.chain] ?? 0) { walk.unwitnessed += 1 }
            }
            events = next
        }
        return nil
    }

    /// Runs `body` with `count` more sessions that see exactly what `session` sees: each a
    /// REPEATABLE READ, READ ONLY transaction on its own connection that imports `session`'s
    /// snapshot (`pg_export_snapshot`, valid while `session`'s transaction is open), so that proofs
    /// read through any of them belong to the same consistent state as the events being walked.
    func withSnapshotReaders<T: Sendable>(_ count: Int, of session: PostgresSession,
                                          _ body: ([PostgresSession]) async throws -> T) async throws -> T {
        guard count > 0 else { return try await body([]) }
        let snapshot = try await session.query("SELECT pg_export_snapshot() AS id").decode(String.self, row: 0, column: "id")
        // SET TRANSACTION SNAPSHOT takes no parameters: the id (hex digits and dashes) is written in.
        guard !snapshot.isEmpty, snapshot.utf8.allSatisfy({ $0 == UInt8(ascii: "-") || Character(Unicode.Scalar($0)).isHexDigit }) else {
            throw PostgresError(.decodingFailed, message: "pg_export_snapshot() returned \(snapshot.debugDescription)")
        }
        func open(_ readers: [PostgresSession]) async throws -> T {
            guard readers.count < count else { return try await body(readers) }
            return try await database.withTransaction(isolation: "REPEATABLE READ, READ ONLY") { reader in
                try await reader.execute("SET TRANSACTION SNAPSHOT '\(unescaped: snapshot)'")
                return try await open(readers + [reader])
            }
        }
        return try await open([])
    }

    /// The highest seq below which an incremental walk finds nothing to check: every chain's
    /// later events have a seq above its trusted head, so above the lowest of them.
    static func lowerBound(_ trustedThrough: [Int16: Int64]) -> Int64 {
        trustedThrough.values.min() ?? 0
    }

    /// Checks the stored checkpoints (in pages, oldest first) against the chains just verified.
    /// An incremental run passes `signedFrom`: only checkpoints signed from then on.
    func checkCheckpoints(walk: Walk, trusted: [Ed25519PublicKey], signedFrom: Int64 = 0, in session: PostgresSession) async throws -> AuditBreak? {
        var lastID: Int64 = 0
        while true {
            let rows = try await session.query("""
                SELECT id, \(unescaped: AuditCheckpointStore.columns) FROM audit_checkpoints
                WHERE id > \(lastID) AND signed_at >= \(AuditTimestamp(micros: signedFrom))
                ORDER BY id LIMIT \(pageSize)
                """).rows
            guard let lastRow = rows.last else { return nil }
            lastID = try lastRow.decode(Int64.self, "id")
            var checkpoints: [(Int64, AuditCheckpoint)] = []
            for row in rows {
                checkpoints.append((try row.decode(Int64.self, "id"), try AuditCheckpointStore.checkpoint(row)))
            }
            let seqs = Set(checkpoints.flatMap { $0.1.anchoredHeads.map(\.seq) }.filter { $0 > 0 })
            var events: [Int64: (chain: Int16, hash: [UInt8])] = [:]
            if !seqs.isEmpty {
                let found = try await session.query("""
                    SELECT seq, chain, hash FROM audit_events WHERE seq = ANY(string_to_array(\(seqs.map(String.init).joined(separator: ",")), ',')::bigint[])
                    """)
                for row in found.rows {
                    let (seq, chain, hash) = try row.decode((Int64, Int64, [UInt8]).self)
                    events[seq] = (Int16(chain), hash)
                }
            }
            for (id, checkpoint) in checkpoints {
                if let failure = check(checkpoint, id: id, walk: walk, events: events, trusted: trusted) { return failure }
            }
        }
    }

    func check(_ checkpoint: AuditCheckpoint, id: Int64, walk: Walk, events: [Int64: (chain: Int16, hash: [UInt8])],
               trusted: [Ed25519PublicKey]) -> AuditBreak? {
        let subject = "checkpoint:\(id)"
        if !checkpoint.hasValidSignature {
            return AuditBreak(seq: checkpoint.seq, kind: .checkpointSignatureInvalid, expected: "a valid Ed25519 signature",
                              found: checkpoint.signature.hexString, subject: subject)
        }
        if !trusted.isEmpty, !trusted.contains(where: { $0.rawRepresentation == checkpoint.publicKey }) {
            return AuditBreak(seq: checkpoint.seq, kind: .checkpointUntrustedKey,
                              expected: "one of " + trusted.map(\.keyID).joined(separator: ", "),
                              found: "key \(checkpoint.keyID) (\(checkpoint.publicKey.hexString))", subject: subject)
        }
        for head in checkpoint.anchoredHeads {
            guard let chainEnd = walk.heads[head.chain] else {
                return AuditBreak(seq: head.seq, kind: .checkpointMismatch, expected: head.hash.hexString,
                                  found: "no chain \(head.chain)", subject: subject, chain: head.chain)
            }
            let found = head.seq == 0 ? (head.chain, AuditEvent.genesisHash) : events[head.seq]
            if let found, found.chain == head.chain, found.hash == head.hash { continue }
            let description = chainEnd.seq < head.seq ? "chain \(head.chain) ends at \(chainEnd.seq)"
                : found.map { $0.chain == head.chain ? $0.hash.hexString : "event \(head.seq) is on chain \($0.chain)" }
                ?? "no event \(head.seq)"
            return AuditBreak(seq: head.seq, kind: .checkpointMismatch, expected: head.hash.hexString, found: description,
                              subject: subject, chain: head.chain)
        }
        return nil
    }

    /// Checks one event against the walk so far and, when it holds, advances the walk.
    func check(_ event: AuditEvent, walk: inout Walk, digests: [UUID: ProofDigests], archived: Set<UUID> = [],
               deliveries: [UUID: BoundFacts] = [:], lifecycle: LifecycleDigests = LifecycleDigests(),
               devices: DeviceEvidence = DeviceEvidence(), erased: Set<String> = [], recomputed precomputed: [UInt8]? = nil) -> AuditBreak? {
        func failure(_ kind: AuditBreak.Kind, _ expected: String, _ found: String, seq: Int64? = nil) -> AuditBreak {
            AuditBreak(seq: seq ?? event.seq, kind: kind, expected: expected, found: found, subject: event.subject, chain: event.chain)
        }
        if event.seq == walk.lastSeq {
            return failure(.duplicateSeq, "one event \(event.seq)", "two or more")
        }
        guard let head = walk.heads[event.chain] else {
            return failure(.unknownChain, "a chain of audit_chains", String(event.chain))
        }
        switch event.encoding {
        case .v1:
            if event.chain != 0 || !walk.legacyOpen {
                return failure(.encodingInvalid, "countersign.audit/v2", "countersign.audit/v1 on chain \(event.chain)")
            }
            if event.seq != head.seq + 1 {
                return failure(.gap, String(head.seq + 1), String(event.seq), seq: head.seq + 1)
            }
        case .v2:
            if event.chain == 0 { walk.legacyOpen = false }
        }
        let recomputed = precomputed ?? event.recomputedHash
        if recomputed != event.hash {
            return failure(.hashMismatch, recomputed.hexString, event.hash.hexString)
        }
        if event.prevHash != head.hash {
            return failure(.prevMismatch, head.hash.hexString, event.prevHash.hexString)
        }
        walk.heads[event.chain] = AuditChainHead(chain: event.chain, seq: event.seq, hash: event.hash)
        walk.lastSeq = event.seq
        walk.count += 1
        if erased.contains(event.subject), Self.erasedFactActions.contains(event.action) {
            walk.erased.insert(String(event.subject.dropFirst("delivery:".count)))
            return event.action == AuditAction.proofRecorded.rawValue ? checkErasedProof(event, digests: digests) : nil
        }
        if event.action == AuditAction.deliveryCreated.rawValue { return checkDelivery(event, deliveries: deliveries) }
        if let failure = checkLifecycle(event, digests: lifecycle) { return failure }
        if event.subject.hasPrefix("device_key:") { return checkDeviceKeyEvent(event, evidence: devices) }
        guard event.action == AuditAction.proofRecorded.rawValue else { return nil }
        let details = event.details
        let proofText = details["proof_id"] ?? ""
        if let proofID = UUID(uuidString: proofText), digests[proofID] == nil, archived.contains(proofID) {
            walk.archived += 1
            return nil
        }
        guard let proofID = UUID(uuidString: proofText), let stored = digests[proofID] else {
            return AuditBreak(seq: event.seq, kind: .proofMissing, expected: proofText, found: "", subject: event.subject,
                              proofID: proofText, chain: event.chain)
        }
        let recordedBody = details["points_sha256"] ?? ""
        for found in [stored.storedBody.hexString, stored.body.hexString] where found != recordedBody {
            return AuditBreak(seq: event.seq, kind: .proofBodyMismatch, expected: recordedBody, found: found, subject: event.subject,
                              proofID: proofText, chain: event.chain)
        }
        let recordedPNG = details["png_sha256"] ?? ""
        for found in [stored.storedPNG.hexString, stored.png.hexString] where found != recordedPNG {
            return AuditBreak(seq: event.seq, kind: .proofPNGMismatch, expected: recordedPNG, found: found, subject: event.subject,
                              proofID: proofText, chain: event.chain)
        }
        return checkFacts(event, stored: stored, proofID: proofText) ?? checkDevice(event, stored: stored, proofID: proofText, evidence: devices)
    }
}
