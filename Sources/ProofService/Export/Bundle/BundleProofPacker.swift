import Archive
import Foundation
import ProofStore
import SignatureKit
import SignatureRender

/// Packs one proof for a version 3 bundle: renders its SVG, writes its `metadata.json`, checks the
/// folder against its audit event (``BundleProofCheck``, exactly as the verifier will), checksums
/// and deflates its five files (three when the export leaves the raw dynamics out, ``ExportContents``). Pure CPU work: the exporter runs it on the CPU work pool.
struct BundleProofPacker: Sendable {
    /// A proof ready to be written: its entries in order and their checksum lines.
    struct Packed: Sendable {
        var entries: [ZipArchiveWriter.PreparedEntry]
        var checksumLines: [UInt8]
        var modified: Date
    }

    let renderOptions: RenderOptions
    /// The files left out of each proof's folder (listed in `metadata.json` as omitted).
    var contents: ExportContents = .everything

    func pack(_ proof: ExportedProof) throws -> Packed {
        let reference = proof.metadata.deliveryReference
        let folder = BundleLayout.folder(reference)
        let svg: [UInt8]
        do {
            svg = try SignatureRenderer.renderSVGBytes(try InkParser().parse(proof.ink, format: .ink),
                                                       options: StoredRenderOptions.options(proof.metadata.renderOptionsJSON, base: renderOptions))
        } catch {
            throw ExportError.unreadableInk(reference: reference, message: "\(error)")
        }
        // name, bytes, whether deflating is worth trying (a gzip body and a PNG are compressed already)
        let others: [(String, [UInt8], Bool)] = [("signature.png", proof.png, false), ("signature.svg", svg, true),
                                                 ("points", proof.body, proof.metadata.bodyContentEncoding == nil), ("ink", proof.ink, true)]
        let omitted = contents.omittedFiles
        var facts = BundleProofCheck.Files()
        var digests: [BundleProofDocument.FileDigest] = []
        var written: [(String, [UInt8], Bool, Digest32)] = []
        for (name, bytes, compress) in others {
            let digest = Digest32.of(bytes)
            let leftOut = omitted.contains(name)
            if !leftOut {
                facts[name] = BundleProofCheck.FileFacts(bytes: bytes.count, sha256: digest)
                written.append((name, bytes, compress, digest))
            }
            digests.append(BundleProofDocument.FileDigest(name: name, bytes: bytes.count, sha256: digest.description, omitted: leftOut))
        }
        let metadata = BundleProofDocument.encode(proof, files: digests)
        let recorded = proof.event.flatMap(RecordedEventDigests.of)
        let outcome = BundleProofCheck.check(folder: folder, metadata: metadata, files: facts, omitted: omitted) { id, _ in
            recorded.flatMap { $0.0 == id ? $0.1 : nil }
        }
        if !outcome.failures.isEmpty { throw ExportError.proofFailsVerification(reference: reference, failures: outcome.failures) }
        var entries: [ZipArchiveWriter.PreparedEntry] = [ZipArchiveWriter.prepare(folder + "metadata.json", contents: metadata, compress: true)]
        var lines = Array(Digest32.of(metadata).description.utf8) + Array(("  " + folder + "metadata.json\n").utf8)
        for (name, bytes, compress, digest) in written {
            entries.append(ZipArchiveWriter.prepare(folder + name, contents: bytes, compress: compress))
            lines += Array(digest.description.utf8) + Array(("  " + folder + name + "\n").utf8)
        }
        return Packed(entries: entries, checksumLines: lines, modified: proof.metadata.receivedAt)
    }
}
