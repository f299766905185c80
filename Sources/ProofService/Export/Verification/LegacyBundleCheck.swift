import Archive
import Cryptography

/// The file check of version 1 and 2 bundles (made before the audit segments): every file the
/// manifest lists must be there with its SHA-256 and size, and nothing else. These bundles carry
/// one manifest line per file, so the check holds the names in memory, as it always did.
enum LegacyBundleCheck {
    static func check(_ archive: ZipArchiveReader, manifest: ExportManifest, report: inout ExportBundleVerifier.Report) {
        func fail(_ file: String, _ reason: String) { report.add(.init(file: file, reason: reason)) }
        var entries: [String: ZipArchiveReader.Entry] = [:]
        do {
            try archive.forEachEntry { entry in
                if entries[entry.name] != nil, !BundleLayout.trailer.contains(entry.name) { fail(entry.name, "appears twice in the archive") }
                entries[entry.name] = entry
            }
        } catch {
            fail("bundle", error.message)
            return
        }
        var listed = Set<String>()
        for file in manifest.files ?? [] {
            listed.insert(file.path)
            guard let entry = entries[file.path] else {
                fail(file.path, "missing from the bundle")
                continue
            }
            let contents: [UInt8]
            do {
                contents = try archive.contents(of: entry)
            } catch {
                fail(file.path, error.message)
                continue
            }
            let digest = SHA256.hex(contents)
            if contents.count != file.bytes || digest != file.sha256 {
                fail(file.path, "SHA-256 \(digest) (\(contents.count) bytes) differs from the manifest's \(file.sha256) (\(file.bytes) bytes)")
            } else {
                report.verifiedFiles += 1
            }
        }
        for name in entries.keys.sorted() where !listed.contains(name) && !BundleLayout.trailer.contains(name) {
            fail(name, "is not listed in the manifest")
        }
    }
}
