import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import ProofAPI
import ProofStore
import Testing
import TestSupport

/// Issue 22 item 1 over HTTP: failed attempts, cancelling and giving up a delivery, the 409s the
/// database's transition rules give, strict intake (422), search and the audit chain.
@Suite("Delivery lifecycle", .needsDatabase)
struct DeliveryLifecycleTests {
    static func attemptJSON(reason: String = "recipient_absent", note: String? = "Nobody answered; card left",
                            capturedAt: String = "2025-03-01T10:15:00+01:00",
                            location: String? = #"{"lat":52.5201,"lon":13.4051,"accuracy_m":12}"#) -> String {
        var fields = [#""outcome":"failed""#, #""reason":"\#(reason)""#, #""captured_at":"\#(capturedAt)""#]
        if let note { fields.append(#""note":"\#(note)""#) }
        if let location { fields.append(#""location":\#(location)"#) }
        return "{" + fields.joined(separator: ",") + "}"
    }

    static func post(_ client: some TestClientProtocol, _ harness: APITestHarness, _ path: String, as role: Role = .courier,
                     _ body: String, headers extra: HTTPFields = [:]) async throws -> TestResponse {
        try await client.execute(uri: path, method: .post, headers: harness.headers(role, extra), body: ByteBuffer(string: body))
    }

    static func show(_ client: some TestClientProtocol, _ harness: APITestHarness, _ reference: String) async throws -> [String: Any] {
        let shown = try await client.execute(uri: "/v1/deliveries/\(reference)", method: .get, headers: harness.headers(.courier))
        #expect(shown.status == .ok)
        return shown.json
    }

    @Test("failed attempts are stored and shown, the delivery stays pending, then a proof delivers it and attempts stop")
    func attemptsThenDelivery() async throws {
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                let reference = try await harness.createDelivery(client)
                let first = try await Self.post(client, harness, "/v1/deliveries/\(reference)/attempts", Self.attemptJSON())
                #expect(first.status == .created)
                #expect(first.headers[.location] == "/v1/deliveries/\(reference)")
                #expect(first.json["reason"] as? String == "recipient_absent")
                #expect(first.json["captured_at"] as? String == "2025-03-01T10:15:00+01:00")
                #expect(first.json["flags"] as? [String] == [])
                // Far from the destination: flagged as a proof would be.
                let far = try await Self.post(client, harness, "/v1/deliveries/\(reference)/attempts", as: .dispatcher,
                                              Self.attemptJSON(reason: "access_denied", note: nil, location: #"{"lat":52.6,"lon":13.5}"#))
                #expect(far.status == .created)
                #expect(far.json["flags"] as? [String] == ["outside_geofence"])
                let noLocation = try await Self.post(client, harness, "/v1/deliveries/\(reference)/attempts",
                                                     Self.attemptJSON(reason: "other", location: nil))
                #expect(noLocation.json["flags"] as? [String] == ["no_location"])

                let shown = try await Self.show(client, harness, reference)
                #expect(shown["status"] as? String == "pending")
                let attempts = shown["attempts"] as? [[String: Any]] ?? []
                #expect(attempts.map { $0["reason"] as? String } == ["recipient_absent", "access_denied", "other"])
                #expect(attempts.first?["note"] as? String == "Nobody answered; card left")
                #expect((attempts.first?["recorded_by"] as? [String: Any])?["role"] as? String == "courier")

                let proof = try await Self.post(client, harness, "/v1/deliveries/\(reference)/proof", Samples.proofJSON())
                #expect(proof.status == .created)
                #expect(try await Self.show(client, harness, reference)["status"] as? String == "delivered")

                let late = try await Self.post(client, harness, "/v1/deliveries/\(reference)/attempts", Self.attemptJSON())
                #expect(late.status == .conflict)
                #expect(late.problemCode == "invalid_transition")
                let cancel = try await Self.post(client, harness, "/v1/deliveries/\(reference)/cancel", as: .dispatcher, #"{"reason":"too late"}"#)
                #expect(cancel.status == .conflict)
                #expect(cancel.problemCode == "invalid_transition")
                #expect(try await AuditTests.verify(client, harness)["status"] as? String == "ok")
            }
        }
    }

    @Test("cancel ends a delivery: no second cancel, no attempt, no proof, no giving up (409 invalid_transition)")
    func cancelIsFinal() async throws {
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                let reference = try await harness.createDelivery(client)
                let path = "/v1/deliveries/\(reference)"
                let byCourier = try await Self.post(client, harness, path + "/cancel", #"{"reason":"customer called"}"#)
                #expect(byCourier.status == .forbidden)
                let cancelled = try await Self.post(client, harness, path + "/cancel", as: .dispatcher, #"{"reason":" customer called "}"#)
                #expect(cancelled.status == .ok)
                #expect(cancelled.json["status"] as? String == "cancelled")
                #expect(cancelled.json["close_reason"] as? String == "customer called")
                #expect(cancelled.json["closed_at"] is String)

                for (route, role, body) in [("/cancel", Role.admin, #"{"reason":"again"}"#), ("/fail", .dispatcher, #"{"reason":"give up"}"#),
                                            ("/attempts", .courier, Self.attemptJSON()), ("/proof", .courier, Samples.proofJSON())] {
                    let refused = try await Self.post(client, harness, path + route, as: role, body)
                    #expect(refused.status == .conflict, "\(route)")
                    #expect(refused.problemCode == "invalid_transition", "\(route)")
                    #expect(refused.headers[.contentType] == "application/problem+json", "\(route)")
                }
                let shown = try await Self.show(client, harness, reference)
                #expect(shown["status"] as? String == "cancelled")
                #expect(shown["proof"] is NSNull)
                #expect(try await AuditTests.verify(client, harness)["status"] as? String == "ok")
            }
        }
    }

    @Test("a dispatcher gives a delivery up after failed attempts: failed, and final")
    func giveUp() async throws {
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                let reference = try await harness.createDelivery(client)
                let path = "/v1/deliveries/\(reference)"
                #expect(try await Self.post(client, harness, path + "/attempts", Self.attemptJSON(reason: "refused")).status == .created)
                let failed = try await Self.post(client, harness, path + "/fail", as: .admin, #"{"reason":"returned to sender"}"#)
                #expect(failed.status == .ok)
                #expect(failed.json["status"] as? String == "failed")
                #expect((failed.json["attempts"] as? [[String: Any]])?.count == 1)
                let proof = try await Self.post(client, harness, path + "/proof", Samples.proofJSON())
                #expect(proof.problemCode == "invalid_transition")
                let missing = try await Self.post(client, harness, "/v1/deliveries/NOPE-1/fail", as: .admin, #"{"reason":"x"}"#)
                #expect(missing.status == .notFound)
                #expect(missing.problemCode == "delivery_not_found")
            }
        }
    }

    @Test("attempt and cancel bodies are strict: 422 naming the field, 400 for broken JSON", arguments: [
        (#"{"outcome":"failed","reason":"refused","reason":"other","captured_at":"2025-03-01T10:15:00Z"}"#, "duplicate_member", "/reason"),
        (#"{"outcome":"failed","reason":"refused","note":"a\u0007b","captured_at":"2025-03-01T10:15:00Z"}"#, "invalid_character", "/note"),
        (#"{"outcome":"failed","reason":"refused","note":"\u202Eevil","captured_at":"2025-03-01T10:15:00Z"}"#, "invalid_character", "/note"),
        (#"{"outcome":"failed","reason":"lost","captured_at":"2025-03-01T10:15:00Z"}"#, "invalid_value", "/reason"),
        (#"{"outcome":"delivered","reason":"refused","captured_at":"2025-03-01T10:15:00Z"}"#, "invalid_value", "/outcome"),
        (#"{"reason":"refused","captured_at":"2025-03-01T10:15:00Z"}"#, "missing_field", "/outcome"),
        (#"{"outcome":"failed","reason":"refused","captured_at":"2025-03-01T10:15:00"}"#, "missing_offset", "/captured_at"),
        (#"{"outcome":"failed","reason":"refused"}"#, "missing_field", "/captured_at"),
        (#"{"outcome":"failed","reason":"refused","captured_at":"2025-03-01T10:15:00Z","location":{"lat":91,"lon":0}}"#, "out_of_range", "/location/lat"),
        (#"{"outcome":"failed","reason":7,"captured_at":"2025-03-01T10:15:00Z"}"#, "wrong_type", "/reason"),
    ])
    func strictAttempt(_ body: String, _ code: String, _ field: String) async throws {
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                let reference = try await harness.createDelivery(client)
                let refused = try await Self.post(client, harness, "/v1/deliveries/\(reference)/attempts", body)
                #expect(refused.status == .unprocessableContent)
                let errors = refused.json["errors"] as? [[String: Any]] ?? []
                #expect(errors.contains { $0["code"] as? String == code && $0["field"] as? String == field }, "\(errors)")
                #expect((try await Self.show(client, harness, reference)["attempts"] as? [Any])?.isEmpty == true)
            }
        }
    }

    @Test("cancel needs a reason without control characters; broken JSON is 400")
    func strictCancel() async throws {
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                let reference = try await harness.createDelivery(client)
                let path = "/v1/deliveries/\(reference)/cancel"
                for (body, code) in [("{}", "missing_field"), (#"{"reason":"   "}"#, "invalid_length"), (#"{"reason":"a\u0000b"}"#, "invalid_character"),
                                     (#"{"reason":"a","reason":"b"}"#, "duplicate_member")] {
                    let refused = try await Self.post(client, harness, path, as: .dispatcher, body)
                    #expect(refused.status == .unprocessableContent, "\(body)")
                    #expect((refused.json["errors"] as? [[String: Any]])?.first?["code"] as? String == code, "\(body)")
                }
                #expect(try await Self.post(client, harness, path, as: .dispatcher, "{nope").status == .badRequest)
                #expect(try await Self.show(client, harness, reference)["status"] as? String == "pending")
            }
        }
    }

    @Test("an attempt with an Idempotency-Key is stored once; a replay gets the same answer, another body 422")
    func idempotentAttempt() async throws {
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                let reference = try await harness.createDelivery(client)
                let path = "/v1/deliveries/\(reference)/attempts"
                let key: HTTPFields = [.init("Idempotency-Key")!: "attempt-1"]
                let first = try await Self.post(client, harness, path, Self.attemptJSON(), headers: key)
                let again = try await Self.post(client, harness, path, Self.attemptJSON(), headers: key)
                #expect(first.status == .created)
                #expect(again.status == .created)
                #expect(again.bytes == first.bytes)
                #expect(again.headers[.init("Idempotent-Replayed")!] == "true")
                let other = try await Self.post(client, harness, path, Self.attemptJSON(reason: "refused"), headers: key)
                #expect(other.status == .unprocessableContent)
                #expect(other.problemCode == "idempotency_key_reused")
                #expect((try await Self.show(client, harness, reference)["attempts"] as? [Any])?.count == 1)
            }
        }
    }

    @Test("search filters by all four statuses and by attempt reason")
    func search() async throws {
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                let pending = try await harness.createDelivery(client, reference: "S-PENDING")
                let refused = try await harness.createDelivery(client, reference: "S-REFUSED")
                let cancelled = try await harness.createDelivery(client, reference: "S-CANCELLED")
                let failed = try await harness.createDelivery(client, reference: "S-FAILED")
                let (delivered, _) = try await harness.createDeliveryWithProof(client)
                _ = try await Self.post(client, harness, "/v1/deliveries/\(refused)/attempts", Self.attemptJSON(reason: "refused"))
                _ = try await Self.post(client, harness, "/v1/deliveries/\(failed)/attempts", Self.attemptJSON(reason: "damaged"))
                _ = try await Self.post(client, harness, "/v1/deliveries/\(cancelled)/cancel", as: .dispatcher, #"{"reason":"x"}"#)
                _ = try await Self.post(client, harness, "/v1/deliveries/\(failed)/fail", as: .dispatcher, #"{"reason":"y"}"#)
                func references(_ query: String) async throws -> Set<String> {
                    let page = try await client.execute(uri: "/v1/deliveries?\(query)", method: .get, headers: harness.headers(.auditor))
                    #expect(page.status == .ok, "\(query)")
                    return Set((page.json["items"] as? [[String: Any]] ?? []).compactMap { $0["reference"] as? String })
                }
                #expect(try await references("status=pending") == [pending, refused])
                #expect(try await references("status=delivered") == [delivered])
                #expect(try await references("status=cancelled") == [cancelled])
                #expect(try await references("status=failed") == [failed])
                #expect(try await references("reason=refused") == [refused])
                #expect(try await references("reason=damaged&status=failed") == [failed])
                let bad = try await client.execute(uri: "/v1/deliveries?reason=lost", method: .get, headers: harness.headers(.auditor))
                #expect(bad.status == .unprocessableContent)
            }
        }
    }

    @Test("an attempt's facts or a cancellation changed afterwards, or an attempt inserted behind the service, is named by verification")
    func tamperingIsFound() async throws {
        let cases: [(table: String, sql: String, kind: String)] = [
            ("delivery_attempts", "UPDATE delivery_attempts SET note = 'edited'", "attempt_mismatch"),
            ("delivery_attempts", "UPDATE delivery_attempts SET reason = 'refused'", "attempt_mismatch"),
            ("delivery_attempts", "DELETE FROM delivery_attempts", "attempt_mismatch"),
            ("deliveries", "UPDATE deliveries SET close_reason = 'edited' WHERE status = 'cancelled'", "closure_mismatch"),
            ("delivery_attempts", """
                INSERT INTO delivery_attempts (id, delivery_id, outcome, reason, captured_at, captured_at_offset_min, captured_at_text,
                    received_at, geofence_radius_m, recorded_by)
                SELECT gen_random_uuid(), delivery_id, outcome, reason, captured_at, captured_at_offset_min, captured_at_text, received_at,
                    geofence_radius_m, recorded_by FROM delivery_attempts LIMIT 1
                """, "attempt_without_event"),
        ]
        for (table, sql, kind) in cases {
            try await APITestHarness.with { harness in
                try await harness.application().test(.router) { client in
                    let attempted = try await harness.createDelivery(client)
                    let cancelled = try await harness.createDelivery(client)
                    _ = try await Self.post(client, harness, "/v1/deliveries/\(attempted)/attempts", Self.attemptJSON())
                    _ = try await Self.post(client, harness, "/v1/deliveries/\(cancelled)/cancel", as: .dispatcher, #"{"reason":"x"}"#)
                    #expect(try await AuditTests.verify(client, harness)["status"] as? String == "ok")
                    let result = try await BoundFactsTests.tamper(harness, client, table: table, sql)
                    #expect(result["status"] as? String == "broken", "\(sql)")
                    #expect(result["kind"] as? String == kind, "\(sql)")
                }
            }
        }
    }
}
