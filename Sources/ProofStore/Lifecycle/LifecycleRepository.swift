import Foundation
import Postgres

/// Stores what happens to a delivery besides its proof: failed attempts (append-only) and its
/// closing as `failed` or `cancelled`.
///
/// The writes take the caller's ``PostgresSession``, inside a transaction the caller opened with
/// ``transaction(_:)``: the use case appends the audit event (and, later, its webhook outbox row)
/// in that same transaction, so all of it commits or none does. Illegal transitions are refused by
/// the database (migration 0014) and come back as ``LifecycleError/invalidTransition(_:)``.
public struct LifecycleRepository: Sendable {
    let database: PostgresClient
    let sealer: ProofSealer

    /// Creates the repository over `database`; the commitments of a delivery's events are made with
    /// the salt of its data key, unwrapped with `dataKeys`.
    public init(database: PostgresClient, dataKeys: DataKeyProvider = DataKeyProvider(.unconfigured)) {
        self.database = database
        self.sealer = ProofSealer(keys: dataKeys)
    }

    /// Runs `body` in one READ COMMITTED transaction on the primary. `body` may run twice (a stale
    /// plan after a migration is retried), so it must do database work only.
    public func transaction<T: Sendable>(_ body: (PostgresSession) async throws -> T) async throws -> T {
        do {
            return try await database.withTransaction(retryingStalePlans: true, body)
        } catch let error as PostgresError {
            throw Self.refusal(error) ?? error
        }
    }

    /// What the lifecycle rules refused in `error`, if that is what it is: an illegal transition
    /// (0014), or a closing by a key that may not close or at a time that is not now (0023).
    static func refusal(_ error: PostgresError) -> LifecycleError? {
        guard error.kind == .checkViolation else { return nil }
        switch error.constraint {
        case LifecycleError.transitionConstraint: return .invalidTransition(error.message)
        case "closing_key_allowed": return .actorRefused(error.message)
        case "closing_time_now": return .clockSkew(error.message)
        default: return nil
        }
    }

    /// Stores `attempt` for the delivery `reference` and, with `idempotency`, completes that claim
    /// with its response. Returns the delivery's id and its commitment salt (nil for a delivery
    /// stored before data keys were made with the delivery). The insert's trigger refuses a
    /// delivery that is not pending (and waits for a concurrent upload or cancel of it to finish first).
    @discardableResult
    public func recordAttempt(_ attempt: NewAttempt, reference: String,
                              idempotency: (apiKeyID: UUID, key: String, response: IdempotentResponse)?,
                              in session: PostgresSession) async throws -> (deliveryID: UUID, salt: CommitmentSalt?) {
        let location = attempt.location, assessment = attempt.assessment
        let inserted: PostgresResult
        do {
            inserted = try await session.query("""
                WITH attempt AS (
                INSERT INTO delivery_attempts (id, delivery_id, outcome, reason, note, captured_at, captured_at_offset_min,
                    captured_at_text, received_at, location_lat, location_lon, location_accuracy_m, distance_to_destination_m,
                    geofence_radius_m, flags, recorded_by, idempotency_key)
                SELECT \(attempt.id), d.id, 'failed', \(attempt.reason.rawValue)::text, \(attempt.note)::text, \(attempt.capturedAt.date),
                    \(attempt.capturedAt.offsetMinutes)::int, \(attempt.capturedAt.text), \(attempt.receivedAt),
                    \(location?.point.lat)::float8, \(location?.point.lon)::float8, \(location?.accuracyMeters)::float8,
                    \(assessment.distanceToDestinationMeters)::float8, \(assessment.geofenceRadiusMeters),
                    string_to_array(\(assessment.flags.map(\.rawValue).joined(separator: ",")), ','),
                    \(attempt.recordedBy), \(attempt.idempotencyKey)::text
                FROM deliveries d WHERE d.reference = \(reference)::text
                RETURNING delivery_id
                )
                SELECT a.delivery_id, k.kek_id, k.wrapped_key FROM attempt a LEFT JOIN delivery_data_keys k ON k.delivery_id = a.delivery_id
                """)
        } catch let error as PostgresError {
            throw Self.refusal(error) ?? error
        }
        guard let row = inserted.first else { throw LifecycleError.deliveryNotFound }
        if let idempotency {
            try await IdempotencyRepository.complete(apiKeyID: idempotency.apiKeyID, key: idempotency.key,
                                                     response: idempotency.response, in: session)
        }
        return (try row.decode(UUID.self, "delivery_id"), try sealer.commitmentSalt(row, reference: reference))
    }

    /// The details of an attempt's `delivery_attempt_recorded` event: its id, its reason and the
    /// commitment to its facts (``AttemptFacts``) under the delivery's `salt` — or, for a delivery
    /// without a data key, their plain digest (`attempt_sha256`, as before salts).
    public static func attemptDetails(_ attempt: NewAttempt, reference: String, deliveryID: UUID,
                                      salt: CommitmentSalt?) throws(SealingError) -> [String: String] {
        var details = ["attempt_id": attempt.id.uuidString.lowercased(), "delivery_id": deliveryID.uuidString.lowercased(),
                       "reason": attempt.reason.rawValue]
        let digest = AttemptFacts(attempt, reference: reference).digest
        if let salt { details["attempt_commitment"] = try salt.commit(digest).hexString } else { details["attempt_sha256"] = digest.hexString }
        return details
    }

    /// Closes the pending delivery `reference` as `status` (`failed` or `cancelled`) through the
    /// SECURITY DEFINER function `countersign_close_delivery`, as the key `credential` belongs to
    /// (the function finds it; migration 0023); returns the delivery's id, that key's, and the
    /// delivery's commitment salt (nil for a delivery without a data key).
    public func close(reference: String, as status: DeliveryStatus, reason: String, credential: ActorCredential?, at closedAt: Date,
                      in session: PostgresSession) async throws -> (deliveryID: UUID, closedBy: UUID, salt: CommitmentSalt?) {
        let closed: PostgresResult
        do {
            closed = try await session.query("""
                SELECT c.id, c.closed_by, k.kek_id, k.wrapped_key
                FROM countersign_close_delivery(\(reference)::text, \(status.rawValue)::text, \(reason)::text,
                    \(credential?.token)::text, \(closedAt)) c
                LEFT JOIN delivery_data_keys k ON k.delivery_id = c.id
                """)
        } catch let error as PostgresError {
            throw Self.refusal(error) ?? error
        }
        guard let row = closed.first else { throw LifecycleError.deliveryNotFound }
        return (try row.decode(UUID.self, "id"), try row.decode(UUID.self, "closed_by"), try sealer.commitmentSalt(row, reference: reference))
    }

    /// The details of a `delivery_failed` / `delivery_cancelled` event: the delivery's id and the
    /// commitment to how it was closed (``ClosureFacts``) under the delivery's `salt` — or, for a
    /// delivery without a data key, its plain digest (`closure_sha256`).
    public static func closureDetails(reference: String, deliveryID: UUID, status: DeliveryStatus, reason: String, by keyID: UUID,
                                      at closedAt: Date, salt: CommitmentSalt?) throws(SealingError) -> [String: String] {
        let digest = ClosureFacts.digest(reference: reference, status: status.rawValue, reason: reason,
                                         closedAtMicros: PostgresEpoch.unixMicros(closedAt), closedBy: keyID)
        var details = ["delivery_id": deliveryID.uuidString.lowercased()]
        if let salt { details["closure_commitment"] = try salt.commit(digest).hexString } else { details["closure_sha256"] = digest.hexString }
        return details
    }

    /// The attempts of the delivery `deliveryID`, oldest first.
    public func attempts(deliveryID: UUID) async throws -> [DeliveryAttempt] {
        let result = try await database.query("""
            SELECT a.id, a.reason::text AS reason, a.note, a.captured_at, a.captured_at_text, a.received_at,
                a.location_lat::float8 AS location_lat, a.location_lon::float8 AS location_lon,
                a.location_accuracy_m::float8 AS location_accuracy_m, a.distance_to_destination_m::float8 AS distance_to_destination_m,
                array_to_string(a.flags, ',') AS flags, k.id AS key_id, k.name AS key_name, k.role AS key_role
            FROM delivery_attempts a JOIN api_keys k ON k.id = a.recorded_by
            WHERE a.delivery_id = \(deliveryID) ORDER BY a.seq
            """)
        return try result.rows.map(Self.attempt)
    }

    /// Decodes one row of ``attempts(deliveryID:)``, by name.
    static func attempt(_ row: PostgresRow) throws -> DeliveryAttempt {
        var location: CaptureLocation?
        if let point = GeoPoint.stored(lat: try row.decode("location_lat"), lon: try row.decode("location_lon")) {
            location = CaptureLocation(point: point, accuracyMeters: try row.decode("location_accuracy_m"))
        }
        let flags: String = try row.decode("flags")
        return DeliveryAttempt(
            id: try row.decode("id"), reason: AttemptReason(rawValue: try row.decode("reason")) ?? .other, note: try row.decode("note"),
            capturedAt: try row.decode("captured_at"), capturedAtText: try row.decode("captured_at_text"),
            receivedAt: try row.decode("received_at"), location: location,
            distanceToDestinationMeters: try row.decode("distance_to_destination_m"),
            flags: flags.isEmpty ? [] : flags.split(separator: ",").map(String.init),
            recordedBy: Actor(keyID: try row.decode("key_id"), name: try row.decode("key_name"),
                              role: Role(rawValue: try row.decode("key_role")) ?? .courier))
    }
}
