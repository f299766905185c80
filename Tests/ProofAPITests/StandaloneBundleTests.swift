import Archive
import Cryptography
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Postgres
@testable import ProofAPI
@testable import ProofService
import ProofStore
import Testing
import TestSupport

/// Version 3 bundles stand alone (issue 19.6): each proof is checked against its own files, its
/// `proof_recorded` event, and the event against the signed checkpoint through the audit segment
/// the bundle carries. Every tampering is named by file; the exporter refuses to sign a proof that
/// does not verify.
@Suite("Standalone bundles", .needsDatabase)
struct StandaloneBundleTests {
    /// The entries of `bundle` re-packed (valid CRCs) after `change` edits, drops (nil) or keeps them.
    static func repack(_ bundle: [UInt8], _ change: (String, [UInt8]) throws -> [UInt8]?) throws -> [UInt8] {
        let archive = try ZipArchiveReader(bundle)
        var writer = ZipArchiveWriter()
        var out: [UInt8] = []
        for entry in try archive.entries {
            guard let contents = try change(entry.name, try archive.contents(of: entry)) else { continue }
            out += try writer.add(entry.name, contents: contents, modified: Date(), compress: true)
        }
        return out + (try writer.finish())
    }

    /// `contents` with the first `old` replaced by `new` (which must be there).
    static func replacing(_ contents: [UInt8], _ old: String, _ new: String) throws -> [UInt8] {
        let text = String(decoding: contents, as: UTF8.self)
        let range = try #require(text.range(of: old), "\(old) not found")
        return Array(text.replacingCharacters(in: range, with: new).utf8)
    }

    /// Runs `statement` on `table` as a superuser with its user triggers off: what an insider with
    /// the database's owner rights could do to the evidence.
    static func tamper(_ harness: APITestHarness, _ table: String, _ statement: String) async throws {
        try await harness.scratch.asSuperuser { admin in
            try await admin.withConnection { session in
                try await session.execute("ALTER TABLE \(unescaped: table) DISABLE TRIGGER USER")
                try await session.execute(statement)
                try await session.execute("ALTER TABLE \(unescaped: table) ENABLE TRIGGER USER")
            }
        }
    }

    /// The exporter, outside the HTTP route, so a test sees the error it throws.
    static func exporter(_ harness: APITestHarness) -> ProofExporter {
        ProofExporter(database: harness.database, key: harness.checkpointKey, dataKeys: TestDataKeys.provider, work: CPUWorkPool(queueLimit: 16, perKeyLimit: 16))
    }

    /// A fresh export's bundle of three seeded proofs and the key that signed it, given to `body`.
    static func withBundle(_ body: @escaping @Sendable ([UInt8], Ed25519PublicKey) throws -> Void) async throws {
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                _ = try await ExportTests.seed(client, harness)
                let response = try await ExportTests.export(client, harness)
                #expect(response.status == .ok)
                try body(response.bytes, harness.checkpointKey.publicKey)
            }
        }
    }

    /// `bundle`'s entries re-packed with `files` (stored) inserted after its first entry.
    static func inserting(_ files: [(name: String, contents: [UInt8])], into bundle: [UInt8]) throws -> [UInt8] {
        let archive = try ZipArchiveReader(bundle)
        var writer = ZipArchiveWriter()
        var out: [UInt8] = []
        for (index, entry) in try archive.entries.enumerated() {
            if index == 1 {
                for file in files { out += try writer.add(file.name, contents: file.contents, modified: Date(), compress: false) }
            }
            out += try writer.add(entry.name, contents: try archive.contents(of: entry), modified: Date(), compress: true)
        }
        return out + (try writer.finish())
    }

    @Test("a v3 bundle verifies alone; a changed PNG byte, metadata field, event, a removed proof or a re-signed manifest is named")
    func tampering() async throws {
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                let references = try await ExportTests.seed(client, harness)
                let response = try await ExportTests.export(client, harness)
                #expect(response.status == .ok)
                let bundle = response.bytes
                let key = harness.checkpointKey.publicKey
                let report = ExportBundleVerifier.verify(bundle, trustedKey: key)
                #expect(report.isValid, "\(report.failures)")
                #expect(report.format == "countersign.export/v3" && report.verifiedProofs == 3)
                // The three proof events, the export's own event and every other event since the first proof's, per chain.
                #expect(report.auditEvents >= 3)
                let folder = "deliveries/\(references[0])/"

                // A changed PNG byte: named by the PNG (against metadata.json, the event and the checksums).
                let png = try Self.repack(bundle) { name, contents in
                    guard name == folder + "signature.png" else { return contents }
                    var changed = contents
                    changed[changed.count / 2] ^= 0x01
                    return changed
                }
                let pngReport = ExportBundleVerifier.verify(png, trustedKey: key)
                #expect(pngReport.failures.contains { $0.file == folder + "signature.png" && $0.reason.contains("png_sha256") }, "\(pngReport.failures)")

                // A changed metadata field (the signer), with metadata.json's checksum line fixed too: the
                // facts no longer hash to the event's metadata_sha256.
                var newDigest = ""
                var oldDigest = ""
                let signerChanged = try Self.repack(bundle) { name, contents in
                    guard name == folder + "metadata.json" else { return contents }
                    let changed = try Self.replacing(contents, "\"signer\":{\"name\":\"Ada\"}", "\"signer\":{\"name\":\"Eve\"}")
                    oldDigest = SHA256.hex(contents)
                    newDigest = SHA256.hex(changed)
                    return changed
                }
                let fixedChecksums = try Self.repack(signerChanged) { name, contents in
                    name.hasPrefix("checksums/") ? try Self.replacing(contents, oldDigest, newDigest) : contents
                }
                let metadataReport = ExportBundleVerifier.verify(fixedChecksums, trustedKey: key)
                #expect(metadataReport.failures.contains { $0.file == folder + "metadata.json" && $0.reason.contains("metadata_commitment") },
                        "\(metadataReport.failures)")

                // A checksums line without the two spaces of `SHA256  PATH` (sha256sum's binary-mode
                // star instead): refused as a line, not read as the path it almost names.
                let starred = try Self.repack(bundle) { name, contents in
                    name.hasPrefix("checksums/") && String(decoding: contents, as: UTF8.self).contains("  \(folder)ink\n")
                        ? try Self.replacing(contents, "  \(folder)ink\n", " *\(folder)ink\n") : contents
                }
                let starredReport = ExportBundleVerifier.verify(starred, trustedKey: key)
                #expect(starredReport.failures.contains { $0.file.hasPrefix("checksums/") && $0.reason.contains("SHA256  PATH") },
                        "\(starredReport.failures)")
                #expect(starredReport.failures.contains { $0.file == folder + "ink" && $0.reason.contains("is not listed") },
                        "\(starredReport.failures)")

                // A removed proof: its five files are named as listed but missing, and the count differs.
                let removed = try Self.repack(bundle) { name, contents in name.hasPrefix(folder) ? nil : contents }
                let removedReport = ExportBundleVerifier.verify(removed, trustedKey: key)
                #expect(removedReport.failures.contains { $0.file == folder + "signature.png" && $0.reason.contains("missing") }, "\(removedReport.failures)")
                #expect(removedReport.failures.contains { $0.file == "manifest.json" && $0.reason.contains("2") })

                // A manifest re-signed with another key: refused by the pinned key, naming public_key.pem.
                let stranger = try Ed25519PrivateKey.generate()
                let archive = try ZipArchiveReader(bundle)
                let manifestBytes = try archive.contents(of: try #require(try archive.entries.first { $0.name == "manifest.json" }))
                let resigned = try Self.repack(bundle) { name, contents in
                    switch name {
                    case "manifest.sig": try stranger.signature(for: manifestBytes)
                    case "public_key.pem": Array(try stranger.publicKey.pemRepresentation().utf8)
                    default: contents
                    }
                }
                let resignedReport = ExportBundleVerifier.verify(resigned, trustedKey: key)
                #expect(resignedReport.failures.contains { $0.file == "public_key.pem" && $0.reason.contains("not trusted") }, "\(resignedReport.failures)")

                // An altered event (its subject) in the audit segment: its hash no longer holds, named by the segment file.
                let altered = try Self.repack(bundle) { name, contents in
                    guard name.hasPrefix("audit/"), String(decoding: contents, as: UTF8.self).contains("delivery:\(references[1])") else {
                        return contents
                    }
                    return try Self.replacing(contents, "\"subject\":\"delivery:\(references[1])\"", "\"subject\":\"delivery:\(references[1])X\"")
                }
                let alteredReport = ExportBundleVerifier.verify(altered, trustedKey: key)
                #expect(alteredReport.failures.contains { $0.file.hasPrefix("audit/chain-") && $0.reason.contains("altered") }, "\(alteredReport.failures)")

                // Read from a file through the central directory, the same bundle verifies.
                let path = FileManager.default.temporaryDirectory.appendingPathComponent("bundle-\(UUID().uuidString).zip").path
                #expect(FileManager.default.createFile(atPath: path, contents: Data(bundle)))
                defer { try? FileManager.default.removeItem(atPath: path) }
                var trusted = TrustedKeys()
                trusted.add(key)
                #expect(try ExportBundleVerifier.verify(file: path, trusting: trusted).isValid)
            }
        }
    }

    @Test("the exporter refuses to sign a bundle whose proof no longer matches its audit event")
    func refusesToSign() async throws {
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                let (reference, _) = try await AuditTests.deliver(client, harness)
                try await Self.tamper(harness, "proofs", "UPDATE proofs SET signer_name = 'Mallory'")
                var written = 0
                await #expect {
                    _ = try await Self.exporter(harness).export(format: .zip, since: nil, until: nil) { written += $0.count }
                } throws: { error in
                    guard case ExportError.proofFailsVerification(let failing, let failures) = error else { return false }
                    return failing == reference && failures.contains { $0.file.hasSuffix("metadata.json") }
                }
                // Nothing signed went out: the stream stopped before the manifest.
                #expect(written == 0)
            }
        }
    }

    @Test("a bundle failing thousands of times lists the first 1,000 failures and counts the rest")
    func failuresAreBounded() async throws {
        try await Self.withBundle { bundle, key in
            // 1,500 files that no checksums file covers and that are not files of a version 3 bundle.
            let junk = (0..<1500).map { (name: "junk/\($0)", contents: Array("junk \($0)".utf8)) }
            let report = ExportBundleVerifier.verify(try Self.inserting(junk, into: bundle), trustedKey: key)
            #expect(!report.isValid)
            #expect(report.failures.count == ExportBundleVerifier.Report.failureLimit)
            #expect(report.failures.count + report.omittedFailures >= 3000, "\(report.omittedFailures)")
            #expect(report.failures.contains { $0.file.hasPrefix("junk/") })
        }
    }

    /// A forged bundle must not grow the verifier's memory with its size (issue 23): one
    /// `proof_recorded` event repeated thousands of times is named, then counted; files that no
    /// checksums file covers are held only up to ``BundleProofScan/pendingLimit``, then reported;
    /// segment files past ``BundleAuditIndex/segmentFileLimit`` are not listed.
    @Test("a repeated proof event and a flood of files without checksums are reported, not held")
    func forgedRepetitionIsBounded() async throws {
        try await Self.withBundle { bundle, key in
            var done = false
            let repeated = try Self.repack(bundle) { name, contents in
                guard name.hasPrefix("audit/"), !done else { return contents }
                let lines = contents.split(separator: 0x0A)
                guard let event = lines.first(where: { String(decoding: $0, as: UTF8.self).contains("\"proof_recorded\"") }) else {
                    return contents
                }
                done = true
                return contents + Array(repeating: Array(event) + [0x0A], count: 600).flatMap { $0 }
            }
            let report = ExportBundleVerifier.verify(repeated, trustedKey: key)
            let twice = report.failures.filter { $0.reason.contains("has two proof_recorded events") }
            #expect(!twice.isEmpty && twice.allSatisfy { $0.file.hasPrefix("audit/chain-") }, "\(report.failures.prefix(5))")
            #expect(report.failures.count == ExportBundleVerifier.Report.failureLimit)
            // Each copy breaks the chain's links (600 failures) and repeats the proof (600 more).
            #expect(report.failures.count + report.omittedFailures >= 1200)

            // More files since the last checksums file than a bundle ever holds: empty segment
            // files of chain 15 (which fail nothing else), after the first entry. Those past the
            // limit are reported as they come, and the memory they would take is not held.
            // More segment files than a bundle can hold, too: those past the limit are not listed.
            let flood = (0..<(max(BundleProofScan.pendingLimit, BundleAuditIndex.segmentFileLimit) + 10)).map {
                (name: BundleLayout.segmentFile(chain: 15, firstSeq: 1 << 40 + Int64($0)), contents: [UInt8]())
            }
            let flooded = ExportBundleVerifier.verify(try Self.inserting(flood, into: bundle), trustedKey: key)
            let past = flooded.failures.filter { $0.reason.hasPrefix("is not listed in a checksums file within \(BundleProofScan.pendingLimit) files") }
            #expect(past.first?.file == BundleLayout.segmentFile(chain: 15, firstSeq: 1 << 40 + Int64(BundleProofScan.pendingLimit - 1)),
                    "\(flooded.failures.prefix(3))")
            #expect(past.count >= 9)
            let unlisted = flooded.failures.filter { $0.reason.hasPrefix("is past the \(BundleAuditIndex.segmentFileLimit) audit segment files") }
            #expect(unlisted.first?.file == BundleLayout.segmentFile(chain: 15, firstSeq: 1 << 40 + Int64(BundleAuditIndex.segmentFileLimit)))
        }
    }

    /// An old period's bundle carries its chains only up to the stored checkpoint just after its
    /// proofs (the scheduled one, seen by witnesses), not every event recorded since; a period
    /// that no stored checkpoint covers ends at the export's own snapshot, as before.
    @Test("an old period's segments end at the stored checkpoint covering its proofs, not at today's heads")
    func endsAtStoredCheckpoint() async throws {
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                _ = try await ExportTests.seed(client, harness)
                let stored = try await client.execute(uri: "/v1/audit/checkpoint", method: .get, headers: harness.headers(.auditor))
                #expect(stored.status == .ok)
                let storedJSON = stored.json
                // The period ends at the next whole second; two more proofs come after it.
                let until = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.up))
                while Date() <= until { try await Task.sleep(for: .milliseconds(20)) }
                for signer in ["Later One", "Later Two"] { _ = try await AuditTests.deliver(client, harness, signer: signer) }
                let newest = try await harness.database.query("SELECT max(seq) FROM audit_events").decode(Int64.self, row: 0, column: 0)
                let key = harness.checkpointKey.publicKey

                let old = try await ExportTests.export(client, harness, "format=zip&until=\(ISO8601DateFormatter().string(from: until))")
                #expect(old.status == .ok)
                let report = ExportBundleVerifier.verify(old.bytes, trustedKey: key)
                #expect(report.isValid, "\(report.failures.prefix(5))")
                #expect(report.verifiedProofs == 3)
                #expect(report.checkpointSeq == Int64(storedJSON["seq"] as? Int ?? -1))
                #expect(report.checkpointHeads.map { ["chain": String($0.chain), "head_seq": String($0.seq), "head_hash": $0.hash.hexString] }
                        == AuditTests.chains(storedJSON))
                #expect((report.checkpointSeq ?? .max) < newest, "the later proofs' events are not carried")

                let all = try await ExportTests.export(client, harness, "format=zip")
                let whole = ExportBundleVerifier.verify(all.bytes, trustedKey: key)
                #expect(whole.isValid, "\(whole.failures.prefix(5))")
                #expect(whole.verifiedProofs == 5)
                #expect((whole.checkpointSeq ?? 0) >= newest, "no stored checkpoint covers the later proofs: the export's snapshot")
                #expect(whole.auditEvents > report.auditEvents)
            }
        }
    }

    /// A stored checkpoint is older than the export: if a chain was rewritten since, its segment no
    /// longer reaches the signed head, and the exporter refuses to sign rather than hand out a
    /// bundle that cannot verify (or sign the rewritten chain afresh).
    @Test("an export refuses to sign when a chain no longer reaches its stored checkpoint's head")
    func refusesARewrittenChain() async throws {
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                _ = try await ExportTests.seed(client, harness)
                let stored = try await client.execute(uri: "/v1/audit/checkpoint", method: .get, headers: harness.headers(.auditor))
                let heads = AuditTests.chains(stored.json)
                let chain = try await harness.database.query("""
                    SELECT chain FROM audit_events WHERE action = 'proof_recorded' ORDER BY seq DESC LIMIT 1
                    """).decode(Int.self, row: 0, column: 0)
                let head = try #require(heads.first { $0["chain"] == String(chain) }?["head_seq"].flatMap { Int64($0) })
                try await Self.tamper(harness, "audit_events", "UPDATE audit_events SET hash = sha256('rewritten') WHERE seq = \(head)")
                var written: [UInt8] = []
                await #expect {
                    _ = try await Self.exporter(harness).export(format: .zip, since: nil, until: nil) { written += $0 }
                } throws: { error in
                    guard case ExportError.segmentMissesCheckpoint(let failing, let seq) = error else { return false }
                    return failing == Int16(chain) && seq == head
                }
                // Nothing signed went out: the stream stopped before the manifest.
                #expect(!String(decoding: written, as: UTF8.self).contains("manifest.json"))
            }
        }
    }

    /// A segment file holds at most 1,000 events of a few hundred bytes: a forged one with a huge
    /// line or more lines is reported without parsing them, so it cannot grow the verifier's memory.
    @Test("a segment line over 1 MiB and lines past the 1,000th are reported, not parsed")
    func segmentLimits() async throws {
        try await Self.withBundle { bundle, key in
            var done = false, original = 0
            let forged = try Self.repack(bundle) { name, contents in
                guard name.hasPrefix("audit/"), !done else { return contents }
                done = true
                original = contents.split(separator: 0x0A).count
                let first = Array(contents.prefix { $0 != 0x0A })
                let long = Array(#"{"action":""#.utf8) + Array(repeating: UInt8(ascii: "x"), count: 1 << 20) + Array(#""}"#.utf8)
                return long + [0x0A] + contents + Array(repeating: first + [0x0A], count: 1200).flatMap { $0 }
            }
            let report = ExportBundleVerifier.verify(forged, trustedKey: key)
            #expect(!report.isValid)
            #expect(report.failures.contains { $0.reason == "a line is longer than \(BundleAuditIndex.lineLimit) bytes" }, "\(report.failures.prefix(5))")
            let more = original + 1201 - BundleLayout.eventsPerFile
            #expect(report.failures.contains { $0.reason == "holds \(more) lines more than the \(BundleLayout.eventsPerFile) events a segment file holds" },
                    "\(report.failures.filter { $0.reason.hasPrefix("holds") })")
        }
    }
}
