import Foundation
import Postgres

/// What an `Idempotency-Key` lookup found.
public enum IdempotencyClaim: Sendable, Equatable {
    /// The key is new (or its earlier attempt was abandoned): this request owns it now.
    case claimed
    /// The same key with the same request already completed: replay this response.
    case replay(IdempotentResponse)
    /// The same key is being processed by another request right now.
    case inFlight
    /// The same key was used with a different request.
    case mismatch
}

/// Idempotency records for retried uploads, scoped per API key.
///
/// A request first claims its key (`in_flight`, committed on its own so concurrent repeats see
/// it); the proof transaction completes the record with the response. A failed request releases
/// its claim so a retry can run again. A claim older than ``abandonAfter`` (a crashed process) is
/// taken over.
public struct IdempotencyRepository: Sendable {
    let database: PostgresClient
    /// When an `in_flight` claim is considered abandoned.
    public var abandonAfter: Duration

    /// Creates the repository over `database`.
    public init(database: PostgresClient, abandonAfter: Duration = .seconds(60)) {
        self.database = database
        self.abandonAfter = abandonAfter
    }

    /// Claims `key` for a request whose fingerprint is `requestSHA256`.
    public func claim(apiKeyID: UUID, key: String, requestSHA256: [UInt8]) async throws -> IdempotencyClaim {
        let seconds = Double(abandonAfter.components.seconds) + Double(abandonAfter.components.attoseconds) / 1e18
        let claimed = try await database.query("""
            INSERT INTO idempotency_records (api_key_id, idempotency_key, request_sha256, state)
            VALUES ($1, $2, $3, 'in_flight')
            ON CONFLICT (api_key_id, idempotency_key) DO UPDATE
                SET request_sha256 = EXCLUDED.request_sha256, created_at = now()
                WHERE idempotency_records.state = 'in_flight'
                  AND idempotency_records.created_at < now() - make_interval(secs => $4)
            RETURNING 1
            """, [apiKeyID, key, PostgresBytes(requestSHA256), seconds])
        if claimed.rowCount == 1 { return .claimed }
        let existing = try await database.query("""
            SELECT request_sha256, state, response_status, response_type, response_location, response_body
            FROM idempotency_records WHERE api_key_id = $1 AND idempotency_key = $2
            """, [apiKeyID, key])
        guard let row = existing.first else {
            // Released between our insert and select: try once more.
            return try await claim(apiKeyID: apiKeyID, key: key, requestSHA256: requestSHA256)
        }
        guard try row.decode([UInt8].self, 0) == requestSHA256 else { return .mismatch }
        guard try row.decode(String.self, 1) == "completed" else { return .inFlight }
        return .replay(IdempotentResponse(status: try row.decode(Int.self, 2), contentType: try row.decode(String.self, 3),
                                          location: try row.decode(String?.self, 4), body: try row.decode([UInt8].self, 5)))
    }

    /// Releases an `in_flight` claim after the request failed, so a retry runs afresh.
    public func release(apiKeyID: UUID, key: String) async throws {
        try await database.query(
            "DELETE FROM idempotency_records WHERE api_key_id = $1 AND idempotency_key = $2 AND state = 'in_flight'",
            [apiKeyID, key])
    }
}
