import Archive
import Cryptography
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Postgres
@testable import ProofAPI
import ProofService
import ProofStore
import Testing
import TestSupport

@Suite("Signed checkpoints and exports", .needsDatabase)
struct ExportTests {
    /// Three delivered proofs (one signer name is a spreadsheet formula); returns their references.
    static func seed(_ client: some TestClientProtocol, _ harness: APITestHarness) async throws -> [String] {
        var references: [String] = []
        for signer in ["Ada", "=HYPERLINK(\\\"http://evil\\\")", "Grace, \\\"Amazing\\\" Hopper"] {
            references.append(try await AuditTests.deliver(client, harness, signer: signer).0)
        }
        return references
    }

    static func export(_ client: some TestClientProtocol, _ harness: APITestHarness, _ query: String = "format=zip",
                       role: Role = .auditor) async throws -> TestResponse {
        try await client.execute(uri: "/v1/exports/proofs?\(query)", method: .get, headers: harness.headers(role))
    }

    @Test("GET /v1/audit/checkpoint signs every chain's head, reuses it while no head moves, and needs auditor or admin")
    func checkpoint() async throws {
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                _ = try await AuditTests.deliver(client, harness)
                let first = try await client.execute(uri: "/v1/audit/checkpoint", method: .get, headers: harness.headers(.auditor))
                #expect(first.status == .ok)
                let json = first.json
                let newest = try await harness.database.query("SELECT max(seq) FROM audit_events").decode(Int64.self, row: 0, column: 0)
                #expect(json["version"] as? Int == 2)
                #expect(json["seq"] as? Int == Int(newest))
                #expect(json["head_hash"] == nil)
                #expect(AuditTests.chains(json) == (try await AuditTests.chainHeads(harness.database)))
                #expect(AuditTests.chains(json).count == 16)
                #expect(json["public_key"] as? String == harness.checkpointKey.publicKey.rawRepresentation.hexString)
                #expect(json["algorithm"] as? String == "Ed25519")
                let checkpoint = try #require(try JSONDecoder().decode(CheckpointResource.self, from: Data(first.bytes)).checkpoint)
                #expect(checkpoint.version == 2 && checkpoint.heads.count == 16)
                #expect(checkpoint.hasValidSignature)
                var forged = checkpoint
                forged.heads[3].seq += 1
                #expect(!forged.hasValidSignature)

                let again = try await client.execute(uri: "/v1/audit/checkpoint", method: .get, headers: harness.headers(.admin))
                #expect(again.json["signature"] as? String == json["signature"] as? String)
                _ = try await AuditTests.deliver(client, harness)
                let moved = try await client.execute(uri: "/v1/audit/checkpoint", method: .get, headers: harness.headers(.auditor))
                #expect((moved.json["seq"] as? Int ?? 0) > (json["seq"] as? Int ?? 0))
                let stored = try await harness.database.query("SELECT count(*) FROM audit_checkpoints").decode(Int.self, row: 0, column: 0)
                #expect(stored == 2)

                for role in [Role.courier, .dispatcher] {
                    let denied = try await client.execute(uri: "/v1/audit/checkpoint", method: .get, headers: harness.headers(role))
                    #expect(denied.status == .forbidden)
                }
                #expect(try await client.execute(uri: "/v1/audit/checkpoint", method: .get, headers: harness.headers(nil)).status == .unauthorized)
            }
        }
    }

    @Test("a checkpoint exposes a truncated tail: deleting a chain's newest events is named by verify, even with its head rewound")
    func truncatedTail() async throws {
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                _ = try await AuditTests.deliver(client, harness)
                let checkpoint = try await client.execute(uri: "/v1/audit/checkpoint", method: .get, headers: harness.headers(.auditor))
                let seq = try #require(checkpoint.json["seq"] as? Int)
                #expect(try await AuditTests.verify(client, harness)["status"] as? String == "ok")
                // The newest event (seq) heads its chain; its predecessor there becomes the fake head.
                let chain = try await harness.database.query("SELECT chain FROM audit_events WHERE seq = $1", [Int64(seq)])
                    .decode(Int.self, row: 0, column: 0)
                let previous = try await harness.database.query("""
                    SELECT seq, hash FROM audit_events WHERE chain = $1::smallint AND seq < $2 ORDER BY seq DESC LIMIT 1
                    """, [Int16(chain), Int64(seq)])
                let previousSeq = previous.rowCount == 0 ? 0 : try previous.decode(Int64.self, row: 0, column: 0)
                let previousHash = previous.rowCount == 0 ? AuditEvent.genesisHash : try previous.decode([UInt8].self, row: 0, column: 1)
                try await harness.scratch.asSuperuser { admin in
                    try await admin.withConnection { session in
                        try await session.execute("ALTER TABLE audit_events DISABLE TRIGGER USER")
                        try await session.execute("DELETE FROM audit_events WHERE seq >= $1", [Int64(seq)])
                        try await session.execute("ALTER TABLE audit_events ENABLE TRIGGER USER")
                    }
                }
                // audit_chains still names the removed event.
                var result = try await AuditTests.verify(client, harness)
                #expect(result["kind"] as? String == "head_mismatch")
                #expect(result["chain"] as? Int == chain)
                // Rewinding the head too leaves a chain that is a valid prefix of the real one: only the checkpoint tells.
                try await harness.scratch.asSuperuser { admin in
                    try await admin.withConnection { session in
                        try await session.execute("ALTER TABLE audit_chains DISABLE TRIGGER USER")
                        try await session.execute("UPDATE audit_chains SET head_seq = $1, head_hash = $2 WHERE chain = $3::smallint",
                                                  [previousSeq, PostgresBytes(previousHash), Int16(chain)])
                        try await session.execute("ALTER TABLE audit_chains ENABLE TRIGGER USER")
                    }
                }
                result = try await AuditTests.verify(client, harness)
                #expect(result["status"] as? String == "broken")
                #expect(result["kind"] as? String == "checkpoint_mismatch")
                #expect(result["seq"] as? Int == seq)
                #expect(result["found"] as? String == "chain \(chain) ends at \(previousSeq)")
            }
        }
    }

    @Test("a ZIP export verifies offline; one flipped byte in any file fails naming it; a wrong key fails")
    func zipBundle() async throws {
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                let references = try await Self.seed(client, harness)
                let response = try await Self.export(client, harness)
                let headsAfterExport = try await AuditTests.chainHeads(harness.database)
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "application/zip")
                #expect(response.headers[.contentDisposition]?.hasPrefix("attachment; filename=\"countersign-proofs-") == true)
                let bundle = response.bytes
                let key = harness.checkpointKey.publicKey
                let report = ExportBundleVerifier.verify(bundle, trustedKey: key)
                #expect(report.isValid, "\(report.failures)")
                #expect(report.proofCount == 3)
                #expect(report.verifiedProofs == 3 && report.auditEvents >= 3)

                // Every file of every delivery is there, and `points` is the body byte for byte.
                let archive = try ZipArchiveReader(bundle)
                let entries = try archive.entries
                let names = Set(entries.map(\.name))
                for reference in references {
                    for file in ["metadata.json", "signature.png", "signature.svg", "points", "ink"] {
                        #expect(names.contains("deliveries/\(reference)/\(file)"))
                    }
                    let points = try archive.contents(of: try #require(entries.first { $0.name == "deliveries/\(reference)/points" }))
                    let stored = try #require(try await ProofRepository(database: harness.database, dataKeys: TestDataKeys.provider).body(reference: reference))
                    #expect(points == stored.bytes)
                    let png = try archive.contents(of: try #require(entries.first { $0.name == "deliveries/\(reference)/signature.png" }))
                    let served = try await client.execute(uri: "/v1/deliveries/\(reference)/proof/signature.png", method: .get,
                                                          headers: harness.headers(.auditor))
                    #expect(png == served.bytes)
                }
                let manifest = try JSONSerialization.jsonObject(with: Data(try archive.contents(of: entries.first { $0.name == "manifest.json" }!))) as? [String: Any]
                // The checkpoint signs every chain's head once the export's snapshot was open: its own
                // `proofs_exported` event included, and (nothing else running) exactly the heads now.
                #expect(manifest?["format"] as? String == "countersign.export/v3")
                let exported = try await harness.database.query("SELECT seq, chain FROM audit_events WHERE action = 'proofs_exported'")
                let signed = AuditTests.chains(manifest?["checkpoint"] as? [String: Any] ?? [:])
                #expect(signed == headsAfterExport)
                let exportedHead = ["chain": String(try exported.decode(Int.self, row: 0, column: 1)),
                                    "head_seq": String(try exported.decode(Int64.self, row: 0, column: 0))]
                #expect(signed.contains { $0["chain"] == exportedHead["chain"] && $0["head_seq"] == exportedHead["head_seq"] })
                #expect(report.checkpointVersion == 2 && report.checkpointHeads.count == 16)

                // In place: a flipped byte in the data of any entry is named (by the signed SHA-256s; the trailer by its CRC-32 or signature).
                for entry in entries {
                    var damaged = bundle
                    let header = Int(entry.localHeaderOffset)
                    let start = header + 30 + Int(damaged[header + 26]) + Int(damaged[header + 27]) << 8
                        + Int(damaged[header + 28]) + Int(damaged[header + 29]) << 8
                    damaged[start + Int(entry.compressedSize) / 2] ^= 0x20
                    // Rarely a flipped bit in a deflated stream still inflates to the same bytes (a
                    // match copied from an equal earlier run): no evidence changed, nothing to name.
                    if entry.method == 8, let same = try? ZipArchiveReader(damaged).contents(of: entry),
                       same == (try archive.contents(of: entry)) { continue }
                    let failed = ExportBundleVerifier.verify(damaged, trustedKey: key)
                    #expect(!failed.isValid)
                    #expect(failed.failures.contains { $0.description.contains(entry.name) }, "\(entry.name): \(failed.failures)")
                }

                // Re-packed with valid CRCs: the manifest's digests and signature still name the file.
                func repack(_ change: (String, inout [UInt8]) -> Void) throws -> [UInt8] {
                    var writer = ZipArchiveWriter()
                    var out: [UInt8] = []
                    for entry in entries {
                        var contents = try archive.contents(of: entry)
                        change(entry.name, &contents)
                        out += try writer.add(entry.name, contents: contents, modified: Date(), compress: false)
                    }
                    return out + (try writer.finish())
                }
                let target = "deliveries/\(references[1])/signature.svg"
                let repacked = try repack { name, contents in if name == target { contents[contents.count / 2] ^= 0x01 } }
                let svgFailure = ExportBundleVerifier.verify(repacked, trustedKey: key)
                #expect(!svgFailure.isValid && Set(svgFailure.failures.map(\.file)) == [target], "\(svgFailure.failures)")
                let manifestEdited = try repack { name, contents in if name == "manifest.json" { contents[contents.count / 3] ^= 0x01 } }
                #expect(ExportBundleVerifier.verify(manifestEdited, trustedKey: key).failures.contains { $0.file == "manifest.json" })
                #expect(ExportBundleVerifier.verify(try repack { _, _ in }, trustedKey: key).isValid)

                // Another key: pinned, the bundle fails; and a bundle re-signed by someone else fails against the real key.
                let stranger = try Ed25519PrivateKey.generate()
                #expect(!ExportBundleVerifier.verify(bundle, trustedKey: stranger.publicKey).isValid)
                let resigned = try repack { name, contents in
                    if name == "public_key.pem" { contents = Array(try! stranger.publicKey.pemRepresentation().utf8) }
                }
                let wrongKey = ExportBundleVerifier.verify(resigned, trustedKey: key)
                #expect(wrongKey.failures.contains { $0.file == "public_key.pem" })
                #expect(!ExportBundleVerifier.verify(resigned).isValid)

                // A bundle made before the chains (format v1, a version 1 checkpoint without `version`) still verifies.
                let legacy = try AuditCheckpoint.signLegacy(seq: 7, headHash: [UInt8](repeating: 9, count: 32), key: harness.checkpointKey)
                var oldManifest = manifest ?? [:]
                oldManifest["format"] = "countersign.export/v1"
                oldManifest["checksums"] = nil
                oldManifest["files"] = try entries.filter { !["manifest.json", "manifest.sig", "public_key.pem"].contains($0.name) }.map { entry in
                    let contents = try archive.contents(of: entry)
                    return ["path": entry.name, "bytes": contents.count, "sha256": SHA256.hex(contents)] as [String: Any]
                }
                oldManifest["checkpoint"] = ["seq": 7, "head_hash": legacy.headHash.hexString, "signed_at": "2025-03-01T13:00:00.000Z",
                                             "signed_at_us": legacy.signedAtMicros, "algorithm": "Ed25519",
                                             "public_key": legacy.publicKey.hexString, "signature": legacy.signature.hexString]
                let oldBytes = Array(try JSONSerialization.data(withJSONObject: oldManifest, options: [.sortedKeys]))
                let oldSignature = try harness.checkpointKey.signature(for: oldBytes)
                let old = try repack { name, contents in
                    if name == "manifest.json" { contents = oldBytes }
                    if name == "manifest.sig" { contents = oldSignature }
                }
                let oldReport = ExportBundleVerifier.verify(old, trustedKey: key)
                #expect(oldReport.isValid, "\(oldReport.failures)")
                #expect(oldReport.checkpointVersion == 1 && oldReport.checkpointSeq == 7)
                // … and its checkpoint is still checked: another head hash breaks its signature.
                oldManifest["checkpoint"] = (oldManifest["checkpoint"] as? [String: Any] ?? [:]).merging(["head_hash": String(repeating: "ab", count: 32)]) { $1 }
                let forgedBytes = Array(try JSONSerialization.data(withJSONObject: oldManifest, options: [.sortedKeys]))
                let forgedSignature = try harness.checkpointKey.signature(for: forgedBytes)
                let forged = try repack { name, contents in
                    if name == "manifest.json" { contents = forgedBytes }
                    if name == "manifest.sig" { contents = forgedSignature }
                }
                #expect(ExportBundleVerifier.verify(forged, trustedKey: key).failures.contains { $0.reason.contains("checkpoint's signature") })
            }
        }
    }

    @Test("CSV is RFC 4180 with formulas neutralised; NDJSON has a line per proof; the period filters; exports are audited")
    func csvAndNDJSON() async throws {
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                let references = try await Self.seed(client, harness)
                let csv = try await Self.export(client, harness, "format=csv")
                #expect(csv.status == .ok)
                #expect(csv.headers[.contentType] == "text/csv; charset=utf-8")
                let text = String(decoding: csv.bytes, as: UTF8.self)
                let lines = text.components(separatedBy: "\r\n").filter { !$0.isEmpty }
                #expect(lines.count == 4)
                #expect(lines[0].hasPrefix("proof_id,reference,recipient_name"))
                #expect(text.contains(#","'=HYPERLINK(""http://evil"")","#))
                #expect(text.contains(#","Grace, ""Amazing"" Hopper","#))
                #expect(!text.contains(",=HYPERLINK"))

                let ndjson = try await Self.export(client, harness, "format=ndjson")
                let objects = String(decoding: ndjson.bytes, as: UTF8.self).split(separator: "\n").map {
                    (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
                }
                #expect(objects.count == 3)
                #expect(Set(objects.compactMap { ($0?["delivery"] as? [String: Any])?["reference"] as? String }) == Set(references))

                let future = try await Self.export(client, harness, "format=ndjson&since=2999-01-01T00:00:00Z")
                #expect(future.status == .ok)
                #expect(future.bytes.isEmpty)
                let empty = try await Self.export(client, harness, "format=zip&until=2000-01-01T00:00:00Z")
                let report = ExportBundleVerifier.verify(empty.bytes, trustedKey: harness.checkpointKey.publicKey)
                #expect(report.isValid && report.proofCount == 0)

                let bad = try await Self.export(client, harness, "format=xlsx&since=yesterday")
                #expect(bad.status == .unprocessableContent)
                #expect(Set(((bad.json["errors"] as? [[String: Any]]) ?? []).compactMap { $0["field"] as? String }) == ["format", "since"])
                for role in [Role.courier, .dispatcher] {
                    #expect(try await Self.export(client, harness, role: role).status == .forbidden)
                }
                let events = try await AuditLog(database: harness.database).events(AuditQuery(action: "proofs_exported", limit: 50))
                #expect(events.events.count == 4)
                #expect(events.events.first?.details["format"] == "csv")
            }
        }
    }
}
