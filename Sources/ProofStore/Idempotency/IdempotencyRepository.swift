import Foundation
import Postgres

/// Idempotency records for retried uploads, scoped per API key.
///
/// A request first claims its key (`in_flight`, committed on its own so concurrent repeats see
/// it); the proof transaction completes the record with the response. A failed request releases
/// its claim so a retry can run again. A claim older than ``abandonAfter`` (a crashed process) is
/// taken over; so is, at once, a claim of this repository's own ``owner`` that none of its running
/// requests holds (its release was lost, e.g. to a database outage).
///
/// Call ``finished(apiKeyID:key:)`` when a request that got `.claimed` ends, however it ends.
public struct IdempotencyRepository: Sendable {
    let database: PostgresClient
    /// When another process's `in_flight` claim is considered abandoned.
    public var abandonAfter: Duration
    /// Who claims: one id per repository (a service process has one).
    public let owner: UUID
    private let running: RunningClaims

    /// Creates the repository over `database`.
    public init(database: PostgresClient, abandonAfter: Duration = .seconds(60), owner: UUID = UUID()) {
        self.database = database
        self.abandonAfter = abandonAfter
        self.owner = owner
        self.running = RunningClaims()
    }

    /// Claims `key` for a request whose fingerprint is `requestSHA256`.
    public func claim(apiKeyID: UUID, key: String, requestSHA256: [UInt8]) async throws -> IdempotencyClaim {
        // A repeat of a request this process is running right now is never a takeover: it can only
        // be in flight, a mismatch or (if the first just finished) a replay.
        let ours = running.insert(apiKeyID, key)
        if ours {
            let claimed: PostgresResult
            do {
                let seconds = Double(abandonAfter.components.seconds) + Double(abandonAfter.components.attoseconds) / 1e18
                claimed = try await database.query("""
                    INSERT INTO idempotency_records (api_key_id, idempotency_key, request_sha256, state, owner)
                    VALUES (\(apiKeyID), \(key), \(PostgresBytes(requestSHA256)), 'in_flight', \(owner))
                    ON CONFLICT (api_key_id, idempotency_key) DO UPDATE
                        SET request_sha256 = EXCLUDED.request_sha256, created_at = now(), owner = EXCLUDED.owner
                        WHERE idempotency_records.state = 'in_flight'
                          AND (idempotency_records.created_at < now() - make_interval(secs => \(seconds))
                               OR idempotency_records.owner = \(owner))
                    RETURNING 1
                    """)
            } catch {
                running.remove(apiKeyID, key)
                throw error
            }
            if claimed.rowCount == 1 { return .claimed }
            running.remove(apiKeyID, key)
        }
        let existing = try await database.query("""
            SELECT request_sha256, state, response_status, response_type, response_location, response_body
            FROM idempotency_records WHERE api_key_id = \(apiKeyID) AND idempotency_key = \(key)
            """)
        guard let row = existing.first else {
            // Our own running request has not written its claim yet: in flight. Otherwise it was
            // released between our insert and select: try once more.
            if !ours { return .inFlight }
            return try await claim(apiKeyID: apiKeyID, key: key, requestSHA256: requestSHA256)
        }
        guard try row.decode([UInt8].self, "request_sha256") == requestSHA256 else { return .mismatch }
        guard try row.decode(String.self, "state") == "completed" else { return .inFlight }
        return .replay(IdempotentResponse(status: try row.decode("response_status"), contentType: try row.decode("response_type"),
                                          location: try row.decode("response_location"), body: try row.decode("response_body")))
    }

    /// The request that claimed `key` has ended (stored, failed or released): a claim of ours left
    /// `in_flight` in the database from now on is stale and the next request takes it over.
    public func finished(apiKeyID: UUID, key: String) {
        running.remove(apiKeyID, key)
    }

    /// Releases an `in_flight` claim after the request failed, so a retry runs afresh.
    public func release(apiKeyID: UUID, key: String) async throws {
        // The runtime role has no DELETE: the SECURITY DEFINER function (0012) removes in-flight claims only.
        try await database.query("SELECT countersign_release_idempotency(\(apiKeyID), \(key)::text)")
    }

    /// Completes the claim on `key` with `response` inside the caller's transaction, so the answer
    /// is stored exactly when the change it reports commits (used by requests other than proof
    /// uploads, whose one statement does this itself).
    public static func complete(apiKeyID: UUID, key: String, response: IdempotentResponse, in session: PostgresSession) async throws {
        try await session.query("""
            UPDATE idempotency_records SET state = 'completed', completed_at = now(), response_status = \(response.status)::int,
                response_type = \(response.contentType), response_location = \(response.location)::text,
                response_body = \(PostgresBytes(response.body))
            WHERE api_key_id = \(apiKeyID) AND idempotency_key = \(key)::text
            """)
    }
}
