import NIOPosix
import ProofStore

/// Where `AuditVerifier` recomputes event hashes: on ``CPUWorkPool``'s threads (one per core),
/// never on the cooperative pool or an event loop.
public enum VerificationHashing {
    /// Hashing that cuts each page into `slices` parts hashed at once on the CPU pool's threads.
    /// `countersign verify` uses every core (the 16 chains' events are independent until their
    /// links are compared, which the walk does afterwards in order); the server uses one slice, so
    /// a verification requested over HTTP never takes more than one core from uploads.
    public static func offloaded(slices: Int) -> AuditVerifier.Hashing {
        let slices = max(1, slices)
        return { events in
            // Below this a page is hashed in one piece: splitting costs more than it saves.
            let size = events.count < 256 ? events.count : (events.count + slices - 1) / slices
            guard size > 0 else { return [] }
            return try await withThrowingTaskGroup(of: (Int, [[UInt8]]).self) { group in
                for start in stride(from: 0, to: events.count, by: size) {
                    let part = Array(events[start..<min(start + size, events.count)])
                    group.addTask { (start, try await CPUWorkPool.runOnThreads { part.map { $0.recomputedHash } }) }
                }
                var hashes = [[UInt8]](repeating: [], count: events.count)
                for try await (start, part) in group { hashes.replaceSubrange(start..<start + part.count, with: part) }
                return hashes
            }
        }
    }
}
