import Foundation

/// A durable offline queue of proofs: one file per proof in a folder the app owns.
///
/// A proof is written (``DurableFile``: temp file, fsync, rename, fsync folder) before
/// ``enqueue(_:)`` returns, so it survives the app being killed or the phone dying. ``drain(with:onAnswer:)``
/// sends the items oldest first and removes each only after the server's definitive answer: a
/// success (also a replay) removes it; a definitive refusal (a 4xx such as
/// `proof_already_recorded`; not 401/403, which are about the API key and leave every item queued) moves it to `rejected/` with the problem beside it, for a person
/// to look at, since a proof is evidence and is never thrown away silently; no answer, a 5xx or a
/// 429 after the retries leaves it queued for the next drain. A crash between the server storing
/// the proof and the file's removal is harmless: the next drain sends the same bytes with the
/// same Idempotency-Key, and the server answers with the stored proof instead of storing another.
///
/// One drain runs at a time per folder, also across processes (an advisory `flock` on
/// `drain.lock`, released by the kernel if the process dies).
public actor ProofQueue {
    /// The queue's folder; `pending/` and `rejected/` live inside it.
    public nonisolated let folder: String
    nonisolated var pendingFolder: String { folder + "/pending" }
    nonisolated var rejectedFolder: String { folder + "/rejected" }
    private var draining = false
    /// The newest stamp this queue named a file with (read from `pending/` on first use), so names
    /// keep the order queued within one millisecond.
    private var lastStamp: UInt64?

    /// Opens (creating if needed) the queue in `folder`.
    public init(folder: String) throws(CountersignClientError) {
        self.folder = folder
        for path in [folder, folder + "/pending", folder + "/rejected"] {
            do { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) } catch {
                throw .storage("cannot create \(path): \(error)")
            }
        }
    }

    // MARK: Adding

    /// Stores `proof` durably and returns its item. The proof's Idempotency-Key goes into the
    /// file with it, so every later attempt reuses it.
    @discardableResult
    public func enqueue(_ proof: PreparedProof, now: Date = Date()) throws(CountersignClientError) -> QueuedProof {
        guard Self.isValidIdempotencyKey(proof.idempotencyKey) else {
            throw .encoding("an Idempotency-Key is 1–255 visible ASCII characters")
        }
        if lastStamp == nil { lastStamp = try names(in: pendingFolder).compactMap(QueuedProof.stamp(ofFileName:)).max() }
        let item = QueuedProof(proof: proof, now: now, after: lastStamp)
        lastStamp = QueuedProof.stamp(ofFileName: item.fileName)
        try DurableFile.write(try item.encoded(), to: item.fileName, in: pendingFolder)
        return item
    }

    // MARK: Reading

    /// The waiting proofs, oldest first. Leftover temporary files of an interrupted write are
    /// removed, never read.
    public func pending() throws(CountersignClientError) -> [QueuedProof] {
        var items: [QueuedProof] = []
        for name in try names(in: pendingFolder) {
            if name.hasSuffix(DurableFile.temporarySuffix) {
                try DurableFile.remove(name, in: pendingFolder)
                continue
            }
            guard name.hasSuffix(QueuedProof.fileSuffix), let bytes = try DurableFile.read(pendingFolder + "/" + name) else { continue }
            items.append(try QueuedProof.decode(fileName: name, bytes: bytes))
        }
        return items
    }

    /// The file names in `rejected/` of proofs the server refused (each with a `.problem.json`).
    public func rejected() throws(CountersignClientError) -> [String] {
        try names(in: rejectedFolder).filter { $0.hasSuffix(QueuedProof.fileSuffix) && !$0.hasSuffix(ProofQueue.problemSuffix) }
    }

    // MARK: Sending

    /// Sends every waiting proof through `client`, oldest first, and stops at the first one that
    /// got no definitive answer (the network is down; the rest would fail the same way).
    /// `onAnswer` runs after the server's answer and before the file is removed: a hook for tests
    /// of a crash at exactly that point.
    public func drain(with client: CourierClient,
                      onAnswer: @Sendable (QueuedProof, ProofReceipt) -> Void = { _, _ in }) async throws(CountersignClientError) -> DrainReport {
        var report = DrainReport()
        guard !draining, let lock = try FolderLock(path: folder + "/drain.lock") else {
            report.busy = true
            return report
        }
        draining = true
        defer {
            draining = false
            lock.release()
        }
        let items = try pending()
        for (index, item) in items.enumerated() {
            do {
                let receipt = try await client.upload(item.proof)
                onAnswer(item, receipt)
                try DurableFile.remove(item.fileName, in: pendingFolder)
                report.sent.append(receipt)
            } catch .problem(let problem) where problem.status == 401 || problem.status == 403 {
                // About the API key, not the proof: keep everything until the app has a valid key.
                report.stoppedBy = .problem(problem)
                report.remaining = items.count - index
                return report
            } catch .problem(let problem) where !RetryPolicy.isRetryable(.answer(status: problem.status, retryAfter: nil, code: problem.code)) {
                try reject(item, problem)
                report.rejected.append(RejectedProof(item: item, problem: problem))
            } catch .storage(let message) {
                throw .storage(message)
            } catch {
                // No answer, a 5xx or 429 after every retry, or a 2xx the SDK could not read: keep it.
                report.stoppedBy = error
                report.remaining = items.count - index
                return report
            }
        }
        return report
    }

    static let problemSuffix = ".problem.json"

    /// Moves a refused item to `rejected/`, its problem written beside it first.
    private func reject(_ item: QueuedProof, _ problem: Problem) throws(CountersignClientError) {
        let name = String(item.fileName.dropLast(QueuedProof.fileSuffix.count)) + Self.problemSuffix
        let text = "{\"status\":\(problem.status),\"code\":\(Self.jsonString(problem.code)),\"detail\":\(Self.jsonString(problem.detail ?? ""))}"
        try DurableFile.write(Array(text.utf8), to: name, in: rejectedFolder)
        try DurableFile.move(item.fileName, from: pendingFolder, to: rejectedFolder)
    }

    private nonisolated func names(in path: String) throws(CountersignClientError) -> [String] {
        do { return try FileManager.default.contentsOfDirectory(atPath: path).sorted() } catch {
            throw .storage("cannot list \(path): \(error)")
        }
    }

    static func jsonString(_ text: String) -> String {
        let data = (try? JSONEncoder().encode(text)) ?? Data("\"\"".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    /// The server's rule: 1–255 visible ASCII characters (0x21…0x7E).
    public static func isValidIdempotencyKey(_ key: String) -> Bool {
        (1...255).contains(key.utf8.count) && key.utf8.allSatisfy { $0 >= 0x21 && $0 <= 0x7E }
    }
}

/// What one ``ProofQueue/drain(with:onAnswer:)`` did.
public struct DrainReport: Sendable {
    /// Stored (or found already stored: `replayed`) proofs, in the order sent.
    public var sent: [ProofReceipt] = []
    /// Refused definitively; moved to `rejected/`.
    public var rejected: [RejectedProof] = []
    /// Why the drain stopped early (no answer, or the retries ran out); `nil` when it finished.
    public var stoppedBy: CountersignClientError?
    /// Items still queued when it stopped.
    public var remaining = 0
    /// Another drain held the queue; nothing was sent.
    public var busy = false
}

/// A proof the server refused, and why.
public struct RejectedProof: Sendable {
    public var item: QueuedProof
    public var problem: Problem
}
