/// The names inside an export bundle of format version 3 (docs/audit.md, "Export bundles"):
///
/// - `deliveries/<reference>/metadata.json`, `signature.png`, `signature.svg`, `points`, `ink` per
///   proof, the five consecutive, in export order;
/// - `audit/chain-<CC>/<first seq, 20 digits>.ndjson`: the audit chain segments, by chain and seq;
/// - `checksums/<NNNNNN>.sha256`: `sha256sum` lines of every file above, in archive order, each
///   file covering the files since the previous one;
/// - `manifest.json` (lists the checksum files), `manifest.sig`, `public_key.pem`.
enum BundleLayout {
    /// The files of one proof, in the order they are written.
    static let proofFiles = ["metadata.json", "signature.png", "signature.svg", "points", "ink"]
    static let deliveriesPrefix = "deliveries/"
    static let auditPrefix = "audit/"
    static let checksumsPrefix = "checksums/"
    static let trailer: Set<String> = ["manifest.json", "manifest.sig", "public_key.pem"]
    /// Lines per checksum file (about 100 KB): bounds what the writer and the verifier hold.
    static let checksumLines = 1000
    /// Events per audit segment file.
    static let eventsPerFile = 1000

    /// The folder of `reference`: references are `A-Z a-z 0-9 . _ : -`, so only `:` (not allowed
    /// in Windows file names) needs escaping, as `%3A`.
    static func folder(_ reference: String) -> String {
        deliveriesPrefix + ExportManifest.pathComponent(reference) + "/"
    }

    /// `audit/chain-07/00000000000000012345.ndjson`: sorting the names sorts by chain, then seq.
    static func segmentFile(chain: Int16, firstSeq: Int64) -> String {
        let chainText = String(chain), seqText = String(firstSeq)
        return auditPrefix + "chain-" + String(repeating: "0", count: max(0, 2 - chainText.count)) + chainText + "/"
            + String(repeating: "0", count: max(0, 20 - seqText.count)) + seqText + ".ndjson"
    }

    /// `checksums/000001.sha256`.
    static func checksumFile(_ number: Int) -> String {
        let text = String(number)
        return checksumsPrefix + String(repeating: "0", count: max(0, 6 - text.count)) + text + ".sha256"
    }
}
