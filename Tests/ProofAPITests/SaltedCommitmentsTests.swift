import Archive
import Cryptography
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Postgres
@testable import ProofService
@testable import ProofStore
import Testing
import TestSupport

/// Events bind salted commitments to a delivery's guessable facts (docs/audit.md, "Salted
/// commitments"): while the data exists every fact is checked as before; once the delivery is
/// erased, nothing the service keeps — nor a bundle exported after — confirms a guessed name or
/// address.
@Suite("Salted commitments", .needsDatabase)
struct SaltedCommitmentsTests {
    @Test("events bind commitments, which verification checks; after erasure no digest or commitment in the database or a later bundle matches the candidate name and address")
    func theChainRevealsNothingOnceErased() async throws {
        let tag = String(UInt32.random(in: 0...UInt32.max), radix: 36)
        let (name, address) = ("Grace Guessable \(tag)", "12 Known Street \(tag)")
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                let reference = "SALT-\(tag)"
                let base = "/v1/deliveries/\(reference)"
                let created = try await ErasureTests.post(client, harness, "/v1/deliveries", as: .dispatcher,
                                                          Samples.deliveryJSON(reference: reference, name: name, address: address, lat: 52.52, lon: 13.405))
                try #require(created.status == .created)
                let attempt = try await ErasureTests.post(client, harness, base + "/attempts", as: .courier,
                                                          DeliveryLifecycleTests.attemptJSON(note: "Nobody home \(tag)"))
                try #require(attempt.status == .created)
                let upload = try await client.execute(uri: base + "/proof", method: .post, headers: harness.headers(.courier),
                                                      body: ByteBuffer(string: Samples.proofJSON(signer: name)))
                try #require(upload.status == .created)

                // Each event binds a commitment and no plain digest of the facts.
                let events = try await client.execute(uri: "/v1/audit/events?subject=delivery:\(reference)", method: .get,
                                                      headers: harness.headers(.auditor))
                let details = Dictionary(((events.json["items"] as? [[String: Any]]) ?? []).compactMap { item in
                    (item["action"] as? String).map { ($0, item["details"] as? [String: Any] ?? [:]) }
                }, uniquingKeysWith: { first, _ in first })
                for (action, name) in [("delivery_created", "delivery"), ("proof_recorded", "metadata"), ("delivery_attempt_recorded", "attempt")] {
                    #expect(details[action]?[name + "_commitment"] is String, "\(action) binds \(name)_commitment: \(details[action] ?? [:])")
                    #expect(details[action]?[name + "_sha256"] == nil, "\(action) binds no plain \(name)_sha256")
                }
                let verifier = AuditVerifier(database: harness.database, dataKeys: TestDataKeys.provider)
                let intact = try await verifier.verify(trustedPublicKeys: [], witnessed: [], incremental: false)
                guard case .ok = intact.result else { Issue.record("\(intact.result)"); return }

                // While the data exists, a changed fact breaks its commitment (the owner may edit
                // the recipient: only the event guards it), and changed back, the chain holds again.
                _ = try await harness.scratch.asSuperuser { admin in
                    try await admin.query("UPDATE deliveries SET recipient_name = 'Someone Else' WHERE reference = \(reference)::text")
                }
                let edited = try await verifier.verify(trustedPublicKeys: [], witnessed: [], incremental: false)
                guard case .broken(let failure) = edited.result else { Issue.record("an edited recipient went unnoticed"); return }
                #expect(failure.kind == .deliveryMismatch && failure.subject == "delivery:\(reference)", "\(failure)")
                _ = try await harness.scratch.asSuperuser { admin in
                    try await admin.query("UPDATE deliveries SET recipient_name = \(name) WHERE reference = \(reference)::text")
                }

                // A bundle exported now carries the salt and checks the proof's commitment.
                let before = try await ExportTests.export(client, harness)
                try #require(before.status == .ok)
                let beforeReport = ExportBundleVerifier.verify(before.bytes, trustedKey: harness.checkpointKey.publicKey)
                #expect(beforeReport.isValid, "\(beforeReport.failures)")
                let archive = try ZipArchiveReader(before.bytes)
                let metadataEntry = try #require(try archive.entries.first { $0.name == "deliveries/\(reference)/metadata.json" })
                let document = try BundleProofReading.parse(try archive.contents(of: metadataEntry))
                let salt = try #require(document.commitmentSalt, "the bundle states the delivery's salt")

                // What a guesser who knows the name and address (and everything else) would test.
                let candidates: [(String, [UInt8])] = [
                    ("delivery facts", DeliveryFacts.digest(reference: reference, recipientName: name, address: address,
                                                            destination: GeoPoint(lat: 52.52, lon: 13.405))),
                    ("proof facts", document.factsDigest.bytes),
                ]
                let committed = try candidates.map { try salt.commit($0.1).hexString }
                #expect(committed[0] == details["delivery_created"]?["delivery_commitment"] as? String,
                        "the candidate is right: with the salt it gives the event's commitment")
                #expect(committed[1] == details["proof_recorded"]?["metadata_commitment"] as? String)

                let erased = try await ErasureTests.post(client, harness, base + "/erase", as: .admin, #"{"reason":"GDPR-17"}"#)
                try #require(erased.status == .ok)
                let after = try await ExportTests.export(client, harness)
                try #require(after.status == .ok)
                let afterReport = ExportBundleVerifier.verify(after.bytes, trustedKey: harness.checkpointKey.publicKey)
                #expect(afterReport.isValid, "\(afterReport.failures)")
                let report = try await verifier.verify(trustedPublicKeys: [], witnessed: [], incremental: false)
                guard case .ok = report.result else { Issue.record("\(report.result)"); return }
                #expect(report.erasedDeliveries.contains(reference))

                // Every table, as the superuser reads it (bytea as hex): the plain digests of the
                // candidates, and the salt that would turn them into the events' commitments, are
                // nowhere; the commitments themselves are in the chain (the scan sees the chain).
                let searched = (candidates.map { ($0.0, $0.1.hexString) } + [("salt", salt.bytes.hexString)])
                try await harness.scratch.asSuperuser { admin in
                    let tables = try await admin.query("""
                        SELECT format('%I.%I', table_schema, table_name) AS name FROM information_schema.tables
                        WHERE table_schema = 'public' AND table_type = 'BASE TABLE'
                        """).rows.map { try $0.decode(String.self, "name") }
                    #expect(tables.contains("public.audit_events") || tables.contains { $0.hasPrefix("public.audit_events") })
                    for (what, hex) in searched + [("the delivery's commitment", committed[0])] {
                        var places: [String] = []
                        for table in tables {
                            let hits = try await admin.query("SELECT count(*) AS n FROM \(unescaped: table) t WHERE strpos(t::text, \(hex)) > 0")
                            if try hits.rows[0].decode(Int.self, "n") > 0 { places.append(table) }
                        }
                        if what == "the delivery's commitment" {
                            #expect(!places.isEmpty, "the scan finds what is there")
                        } else {
                            #expect(places.isEmpty, "\(what) found in \(places)")
                        }
                    }
                }
                // The bundle exported after the erasure, every file of it, as text and as bytes.
                let afterArchive = try ZipArchiveReader(after.bytes)
                for entry in try afterArchive.entries {
                    let bytes = try afterArchive.contents(of: entry)
                    let text = String(decoding: bytes, as: UTF8.self)
                    for (what, hex) in searched {
                        #expect(!text.contains(hex), "\(what) in \(entry.name)")
                    }
                    for (what, digest) in candidates {
                        #expect(Data(bytes).range(of: Data(digest)) == nil, "\(what) as bytes in \(entry.name)")
                    }
                }
            }
        }
    }
}
