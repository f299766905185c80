import Cryptography
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Postgres
@testable import ProofAPI
import ProofStore
import Testing
import TestSupport

@Suite("Signed checkpoints and exports", .enabled(if: ScratchDatabase.isAvailable, Comment(rawValue: ScratchDatabase.unavailableReason)))
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

    @Test("GET /v1/audit/checkpoint signs the head, reuses it while the head stands, and needs auditor or admin")
    func checkpoint() async throws {
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                _ = try await AuditTests.deliver(client, harness)
                let first = try await client.execute(uri: "/v1/audit/checkpoint", method: .get, headers: harness.headers(.auditor))
                #expect(first.status == .ok)
                let json = first.json
                let head = try await harness.database.query("SELECT seq, hash FROM audit_events ORDER BY seq DESC LIMIT 1")
                #expect(json["seq"] as? Int == Int(try head.decode(Int64.self, row: 0, column: 0)))
                #expect(json["head_hash"] as? String == (try head.decode([UInt8].self, row: 0, column: 1)).hexString)
                #expect(json["public_key"] as? String == harness.checkpointKey.publicKey.rawRepresentation.hexString)
                #expect(json["algorithm"] as? String == "Ed25519")
                let checkpoint = AuditCheckpoint(
                    seq: Int64(json["seq"] as? Int ?? -1), headHash: Hex.decode(json["head_hash"] as? String ?? "") ?? [],
                    signedAtMicros: Int64(json["signed_at_us"] as? Int ?? 0), publicKey: Hex.decode(json["public_key"] as? String ?? "") ?? [],
                    signature: Hex.decode(json["signature"] as? String ?? "") ?? [])
                #expect(checkpoint.hasValidSignature)
                var forged = checkpoint
                forged.seq += 1
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

    @Test("a checkpoint exposes a truncated tail: deleting the newest events is named by verify")
    func truncatedTail() async throws {
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                _ = try await AuditTests.deliver(client, harness)
                let checkpoint = try await client.execute(uri: "/v1/audit/checkpoint", method: .get, headers: harness.headers(.auditor))
                let seq = try #require(checkpoint.json["seq"] as? Int)
                #expect(try await AuditTests.verify(client, harness)["status"] as? String == "ok")
                try await AuditTests.asSuperuser(harness) { admin in
                    try await admin.withConnection { session in
                        try await session.execute("ALTER TABLE audit_events DISABLE TRIGGER USER")
                        try await session.execute("DELETE FROM audit_events WHERE seq >= $1", [Int64(seq)])
                        try await session.execute("ALTER TABLE audit_events ENABLE TRIGGER USER")
                    }
                }
                // Without the checkpoint this chain would look intact: it is a prefix of the real one.
                let result = try await AuditTests.verify(client, harness)
                #expect(result["status"] as? String == "broken")
                #expect(result["kind"] as? String == "checkpoint_mismatch")
                #expect(result["seq"] as? Int == seq)
            }
        }
    }

    @Test("a ZIP export verifies offline; one flipped byte in any file fails naming it; a wrong key fails")
    func zipBundle() async throws {
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                let references = try await Self.seed(client, harness)
                let response = try await Self.export(client, harness)
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "application/zip")
                #expect(response.headers[.contentDisposition]?.hasPrefix("attachment; filename=\"countersign-proofs-") == true)
                let bundle = response.bytes
                let key = harness.checkpointKey.publicKey
                let report = ExportBundleVerifier.verify(bundle, trustedKey: key)
                #expect(report.isValid, "\(report.failures)")
                #expect(report.proofCount == 3)
                #expect(report.verifiedFiles == 12)

                // Every file of every delivery is there, and `points` is the body byte for byte.
                let archive = try ZipArchiveReader(bundle)
                let names = Set(archive.entries.map(\.name))
                for reference in references {
                    for file in ["metadata.json", "signature.png", "signature.svg", "points"] {
                        #expect(names.contains("deliveries/\(reference)/\(file)"))
                    }
                    let points = try archive.contents(of: try #require(archive.entries.first { $0.name == "deliveries/\(reference)/points" }))
                    let stored = try #require(try await ProofRepository(database: harness.database).body(reference: reference))
                    #expect(points == stored.bytes)
                    let png = try archive.contents(of: try #require(archive.entries.first { $0.name == "deliveries/\(reference)/signature.png" }))
                    let served = try await client.execute(uri: "/v1/deliveries/\(reference)/proof/signature.png", method: .get,
                                                          headers: harness.headers(.auditor))
                    #expect(png == served.bytes)
                }
                let manifest = try JSONSerialization.jsonObject(with: Data(try archive.contents(of: archive.entries.first { $0.name == "manifest.json" }!))) as? [String: Any]
                // The checkpoint is the head of the export's snapshot: its own `proofs_exported` event, nothing later.
                let head = try await harness.database.query("SELECT max(seq) FROM audit_events WHERE action = 'proofs_exported'")
                    .decode(Int64.self, row: 0, column: 0)
                #expect((manifest?["checkpoint"] as? [String: Any])?["seq"] as? Int == Int(head))

                // In place: a flipped byte in the data of any entry is named (CRC-32 and SHA-256 both catch it).
                for entry in archive.entries {
                    var damaged = bundle
                    let header = Int(entry.localHeaderOffset)
                    let start = header + 30 + Int(damaged[header + 26]) + Int(damaged[header + 27]) << 8
                        + Int(damaged[header + 28]) + Int(damaged[header + 29]) << 8
                    damaged[start + Int(entry.compressedSize) / 2] ^= 0x20
                    let failed = ExportBundleVerifier.verify(damaged, trustedKey: key)
                    #expect(!failed.isValid)
                    #expect(failed.failures.contains { $0.description.contains(entry.name) }, "\(entry.name): \(failed.failures)")
                }

                // Re-packed with valid CRCs: the manifest's digests and signature still name the file.
                func repack(_ change: (String, inout [UInt8]) -> Void) throws -> [UInt8] {
                    var writer = ZipArchiveWriter()
                    var out: [UInt8] = []
                    for entry in archive.entries {
                        var contents = try archive.contents(of: entry)
                        change(entry.name, &contents)
                        out += writer.add(entry.name, contents: contents, modified: Date(), compress: false)
                    }
                    return out + writer.finish()
                }
                let target = "deliveries/\(references[1])/signature.svg"
                let repacked = try repack { name, contents in if name == target { contents[contents.count / 2] ^= 0x01 } }
                let svgFailure = ExportBundleVerifier.verify(repacked, trustedKey: key)
                #expect(svgFailure.failures.map(\.file) == [target])
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
