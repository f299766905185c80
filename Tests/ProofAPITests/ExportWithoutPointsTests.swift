import Archive
import Cryptography
import Foundation
import HummingbirdTesting
import ProofAPI
@testable import ProofService
import Testing
import TestSupport

/// `points=omit` leaves each proof's raw dynamics (biometric data) out of a bundle: its manifest
/// says so, `metadata.json` keeps their digests, and the bundle still verifies — while a bundle
/// that claims a file left out, or leaves one out unannounced, does not.
@Suite("Exports without the raw dynamics", .needsDatabase)
struct ExportWithoutPointsTests {
    @Test("points=omit: no points or ink in the bundle, the manifest and metadata.json say so, it verifies, the export event records it")
    func bundleWithoutPoints() async throws {
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                let references = try await ExportTests.seed(client, harness)
                let key = harness.checkpointKey.publicKey
                let response = try await ExportTests.export(client, harness, "format=zip&points=omit")
                try #require(response.status == .ok)
                let bundle = response.bytes
                let archive = try ZipArchiveReader(bundle)
                let names = try archive.entries.map(\.name)
                #expect(!names.contains { $0.hasSuffix("/points") || $0.hasSuffix("/ink") }, "no raw dynamics in \(names)")
                #expect(names.filter { $0.hasPrefix("deliveries/") }.count == 3 * references.count, "metadata, PNG and SVG of each proof")

                let manifestEntry = try #require(try archive.entries.first { $0.name == "manifest.json" })
                let manifest = try JSONSerialization.jsonObject(with: Data(try archive.contents(of: manifestEntry))) as? [String: Any]
                #expect(manifest?["proof_files"] as? [String] == ["metadata.json", "signature.png", "signature.svg"])
                let folder = "deliveries/\(references[0])/"
                let metadataEntry = try #require(try archive.entries.first { $0.name == folder + "metadata.json" })
                let metadata = try JSONSerialization.jsonObject(with: Data(try archive.contents(of: metadataEntry))) as? [String: Any]
                let files = try #require(metadata?["files"] as? [String: [String: Any]])
                #expect(files["points"]?["omitted"] as? Bool == true && files["ink"]?["omitted"] as? Bool == true)
                #expect(files["signature.png"]?["omitted"] == nil)
                #expect((files["points"]?["sha256"] as? String)?.count == 64, "the left-out file's digest is still listed")

                let report = ExportBundleVerifier.verify(bundle, trustedKey: key)
                #expect(report.isValid, "\(report.failures)")
                #expect(report.verifiedProofs == 3 && report.contents == .withoutPoints)

                // A full export of the same proofs says it holds every file.
                let full = try await ExportTests.export(client, harness, "format=zip&points=include")
                let fullReport = ExportBundleVerifier.verify(full.bytes, trustedKey: key)
                #expect(fullReport.isValid && fullReport.contents == .everything, "\(fullReport.failures)")

                let bad = try await ExportTests.export(client, harness, "format=zip&points=maybe")
                #expect(bad.status == .unprocessableContent)
                #expect((bad.json["errors"] as? [[String: Any]])?.first?["code"] as? String == "invalid_points")

                let events = try await client.execute(uri: "/v1/audit/events?action=proofs_exported", method: .get, headers: harness.headers(.auditor))
                let contents = (events.json["items"] as? [[String: Any]])?.map { ($0["details"] as? [String: String])?["contents"] }
                #expect(contents == ["without_points", nil], "the export without points is recorded as such; the full one adds nothing")
            }
        }
    }

    @Test("a left-out file's listed digest is still checked against the event; a file dropped from a full bundle is still missing")
    func omissionsAreChecked() async throws {
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                let references = try await ExportTests.seed(client, harness)
                let key = harness.checkpointKey.publicKey
                let folder = "deliveries/\(references[0])/"
                let lean = try await ExportTests.export(client, harness, "format=zip&points=omit").bytes

                // metadata.json naming another digest for the left-out points (its checksum line fixed too).
                let original = try Self.metadata(of: lean, folder)
                let points = try #require(((try JSONSerialization.jsonObject(with: Data(original)) as? [String: Any])?["files"]
                    as? [String: [String: Any]])?["points"]?["sha256"] as? String)
                let forgedDigest = String(repeating: "0", count: 64)
                let forged = try StandaloneBundleTests.replacing(original, points, forgedDigest)
                let swapped = try StandaloneBundleTests.repack(lean) { name, contents in
                    if name == folder + "metadata.json" { return forged }
                    return name.hasPrefix("checksums/") ? try StandaloneBundleTests.replacing(contents, SHA256.hex(original), SHA256.hex(forged)) : contents
                }
                let swappedReport = ExportBundleVerifier.verify(swapped, trustedKey: key)
                #expect(swappedReport.failures.contains { $0.file == folder + "points" && $0.reason.contains("points_sha256") }, "\(swappedReport.failures)")

                // The points file dropped from a full bundle (checksums fixed): missing, not "omitted".
                let full = try await ExportTests.export(client, harness).bytes
                let dropped = try StandaloneBundleTests.repack(full) { name, contents in
                    if name == folder + "points" { return nil }
                    guard name.hasPrefix("checksums/") else { return contents }
                    let lines = String(decoding: contents, as: UTF8.self).split(separator: "\n").filter { !$0.hasSuffix("  \(folder)points") }
                    return Array((lines.joined(separator: "\n") + "\n").utf8)
                }
                let droppedReport = ExportBundleVerifier.verify(dropped, trustedKey: key)
                #expect(droppedReport.failures.contains { $0.file == folder + "points" && $0.reason.contains("missing") }, "\(droppedReport.failures)")
            }
        }
    }

    /// The bytes of `folder`'s `metadata.json` in `bundle`.
    static func metadata(of bundle: [UInt8], _ folder: String) throws -> [UInt8] {
        let archive = try ZipArchiveReader(bundle)
        let entry = try #require(try archive.entries.first { $0.name == folder + "metadata.json" })
        return try archive.contents(of: entry)
    }
}
