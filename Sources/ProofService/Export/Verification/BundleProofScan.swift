import Archive
import Foundation
import ProofStore

/// The second half of verifying a version 3 bundle: one pass over the central directory, in
/// order. Each file is read, hashed and added to the running checksum lines; each
/// `checksums/*.sha256` file must be the signed manifest's and list exactly the files since the
/// previous one; each `deliveries/<reference>/` folder (five consecutive files) is checked by
/// ``BundleProofCheck`` against the proof's event from ``BundleAuditIndex`` (which it takes out
/// of the index, so a proof appearing twice is found). Holds one folder, one checksum file's
/// lines and one batch of entries at a time: a batch is read, inflated, hashed and its
/// `metadata.json` files parsed on all cores (``BundleParallelMap``), then applied in order.
/// Files are read without their ZIP CRC-32: every byte of each is checked against a signed
/// SHA-256 (its checksums file's, signed through `manifest.json`), which the CRC could only repeat
/// less strongly (docs/decisions/0036-verifier-trusts-sha256-over-crc32.md).
enum BundleProofScan {
    /// One entry as the parallel part read it: no file's contents are kept (a checksums file is
    /// left to the serial part), so a batch holds digests and parsed metadata only.
    struct ReadEntry: Sendable {
        var bytes: Int
        var sha256: Digest32
        /// For a `metadata.json`: the document read and its facts digest.
        var metadata: BundleProofCheck.Metadata? = nil
    }

    /// Entries up to this size are read in parallel (a proof's files and a checksums file are far smaller).
    static let parallelEntryLimit: UInt64 = 1 << 20

    /// Whether the parallel part reads `entry` (else the serial part reads it when applied).
    static func readsInParallel(_ entry: ZipArchiveReader.Entry) -> Bool { entry.size <= parallelEntryLimit && !isChecksums(entry) }

    static func isChecksums(_ entry: ZipArchiveReader.Entry) -> Bool { entry.name.hasPrefix(BundleLayout.checksumsPrefix) }

    /// Entries one parallel task reads, with one read of the archive when they lie together
    /// (``ZipArchiveReader/contents(ofRun:limit:)``): about two proofs' folders.
    static let entriesPerRead = 10

    /// Largest file of a proof read (the largest request body the service can be set to accept).
    static let entryLimit = 256 << 20
    /// Largest `metadata.json` parsed (ours are a few kilobytes): a parsed document takes several
    /// times its size in memory.
    static let metadataLimit = 1 << 20
    /// Largest checksums file read (ours list ``BundleLayout/checksumLines`` files, about 100 KB).
    static let checksumsLimit = 16 << 20
    /// Most files held between two checksums files (ours: about ``BundleLayout/checksumLines``).
    /// Past it the files are reported, not kept: a forged bundle without checksums files would
    /// otherwise grow the verifier's memory with its size.
    static let pendingLimit = 50 * BundleLayout.checksumLines

    static func read(_ archive: ZipArchiveReader, _ entry: ZipArchiveReader.Entry) -> Result<ReadEntry, ZipArchiveReader.Failure> {
        found(entry, Result { () throws(ZipArchiveReader.Failure) in
            ArraySlice(try archive.contents(of: entry, limit: entryLimit, checkingCRC: false))
        })
    }

    /// `entries` read as ``read(_:_:)`` reads each, nil for those left to the serial part (large
    /// entries and checksums files), the others read together; those in `known` (the audit
    /// segments, read while indexing) are not read again.
    static func read(_ archive: ZipArchiveReader, _ entries: ArraySlice<ZipArchiveReader.Entry>,
                     known: [UInt64: (entry: ZipArchiveReader.Entry, read: ReadEntry)]) -> [Result<ReadEntry, ZipArchiveReader.Failure>?] {
        // Looked up once per entry, by index first: most entries are not known, and copying a
        // found value out (an entry and its name) for each showed in the workers' profile.
        let already = entries.map { entry -> ReadEntry? in
            guard let index = known.index(forKey: entry.localHeaderOffset) else { return nil }
            let found = known.values[index]
            return found.entry == entry ? found.read : nil
        }
        let readHere = zip(entries, already).map { Self.readsInParallel($0) && $1 == nil }
        // Every entry of a batch of proofs is read here: then the slice itself is the run.
        let parallel = readHere.allSatisfy { $0 } ? entries : ArraySlice(zip(entries, readHere).filter(\.1).map(\.0))
        var contents = zip(parallel, archive.contents(ofRun: parallel, limit: entryLimit, checkingCRC: false)).makeIterator()
        return zip(already, readHere).map { already, readHere in
            if let already { return .success(already) }
            guard readHere, let (read, bytes) = contents.next() else { return nil }
            return found(read, bytes)
        }
    }

    /// What the parallel part keeps of `entry`, whose contents were read as `contents`.
    private static func found(_ entry: ZipArchiveReader.Entry, _ contents: Result<ArraySlice<UInt8>, ZipArchiveReader.Failure>) -> Result<ReadEntry, ZipArchiveReader.Failure> {
        contents.map { contents in
            let name = entry.name
            let isMetadata = name.hasPrefix(BundleLayout.deliveriesPrefix) && name.hasSuffix("/metadata.json")
            guard isMetadata else { return ReadEntry(bytes: contents.count, sha256: Digest32.of(contents)) }
            let metadata = contents.count <= metadataLimit ? BundleProofCheck.Metadata.read(contents)
                : BundleProofCheck.Metadata(document: .failure(BundleJSONError("it is larger than \(metadataLimit) bytes")))
            return ReadEntry(bytes: contents.count, sha256: Digest32.of(contents), metadata: metadata)
        }
    }

    /// Whether `contents` is exactly the checksum lines of `files`, in order: the case of every
    /// intact bundle, checked without building the lookup tables the general comparison needs.
    static func listsExactly(_ contents: [UInt8], _ files: [(name: String, sha256: Digest32)]) -> Bool {
        // Compared in place (memchr, memcmp): a checksums file is a thousand lines, and this is the serial thread.
        contents.withUnsafeBufferPointer { lines in
            var start = 0
            for file in files {
                guard start < lines.count, let newline = memchr(lines.baseAddress! + start, 0x0A, lines.count - start) else { return false }
                let end = lines.baseAddress!.distance(to: newline.assumingMemoryBound(to: UInt8.self))
                guard end - start > 66, lines[start + 64] == 0x20, lines[start + 65] == 0x20,
                      Digest32(hexDigits: UnsafeBufferPointer(rebasing: lines[start..<start + 64])) == file.sha256 else { return false }
                var name = file.name
                let sameName = name.withUTF8 { name in
                    name.count == end - start - 66 && memcmp(name.baseAddress!, lines.baseAddress! + start + 66, name.count) == 0
                }
                guard sameName else { return false }
                start = end + 1
            }
            return start == lines.count
        }
    }

    struct State {
        var folder: String?
        var metadata: BundleProofCheck.Metadata?
        var files = BundleProofCheck.Files()
        /// Files read since the last checksum file: name and digest, in order.
        var pending: [(name: String, sha256: Digest32)] = []
    }

    /// Scans the proofs against `events`, which it seals (``BundleAuditIndex/seal(_:report:)``)
    /// just before the first proof is applied: the first batches are read meanwhile.
    /// `omitted`: the proof files the signed manifest says this export leaves out.
    static func scan(_ archive: ZipArchiveReader, checksums: [ExportManifest.File], omitted: Set<String> = [], events: inout BundleEventIndex,
                     report: inout ExportBundleVerifier.Report) {
        var sealed = false
        func sealOnce() {
            guard !sealed else { return }
            sealed = true
            BundleAuditIndex.seal(&events, report: &report)
        }
        func fail(_ file: String, _ reason: String) { report.add(.init(file: file, reason: reason)) }
        let signedChecksums = Dictionary(checksums.map { ($0.path, $0) }, uniquingKeysWith: { first, _ in first })
        var seenChecksums = Set<String>()
        var state = State()
        var proofs = 0
        var verifiedFiles = 0
        func finishFolder() {
            guard let folder = state.folder else { return }
            if let metadata = state.metadata {
                let outcome = BundleProofCheck.check(folder: folder, metadata: metadata, files: state.files, omitted: omitted) {
                    events.take($0, actual: $1)
                }
                report.add(contentsOf: outcome.failures)
                proofs += 1
            } else {
                fail(folder + "metadata.json", "missing from the bundle")
            }
            state.folder = nil
            state.metadata = nil
            state.files = BundleProofCheck.Files()
        }
        func compareChecksums(_ name: String, _ contents: [UInt8]) {
            seenChecksums.insert(name)
            if let signed = signedChecksums[name] {
                if signed.bytes != contents.count || Digest32(hex: signed.sha256) != Digest32.of(contents) {
                    fail(name, "differs from the SHA-256 manifest.json signs for it")
                }
            } else {
                fail(name, "is not listed in manifest.json")
            }
            if listsExactly(contents, state.pending) {
                verifiedFiles += state.pending.count
                state.pending = []
                return
            }
            var listed: [String: Digest32] = [:]
            var order: [String] = []
            for line in contents.split(separator: 0x0A) {
                let start = line.startIndex
                guard line.count > 66, line[start + 64] == 0x20, line[start + 65] == 0x20,
                      let digest = Digest32(hexDigits: line[start..<start + 64]) else {
                    fail(name, "a line is not `SHA256  PATH`")
                    continue
                }
                let path = String(decoding: line[(start + 66)...], as: UTF8.self)
                listed[path] = digest
                order.append(path)
            }
            let read = state.pending.map(\.name)
            for (file, digest) in state.pending {
                guard let expected = listed[file] else {
                    fail(file, "is not listed in \(name)")
                    continue
                }
                if expected != digest { fail(file, "SHA-256 \(digest) differs from \(expected) in \(name)") } else { verifiedFiles += 1 }
            }
            let present = Set(read)
            for path in order where !present.contains(path) { fail(path, "is listed in \(name) but missing from the bundle") }
            if read.count == order.count, read != order { fail(name, "lists the files in another order than the archive holds them") }
            state.pending = []
        }
        /// Applies one entry, in archive order: `read` is what the parallel part found (nil: read it
        /// now, as for a checksums file, which is needed whole and so is read only here).
        func apply(_ entry: ZipArchiveReader.Entry, _ read: Result<ReadEntry, ZipArchiveReader.Failure>?) {
            let name = entry.name
            if Self.isChecksums(entry) {
                finishFolder()
                do {
                    compareChecksums(name, try archive.contents(of: entry, limit: checksumsLimit))
                } catch {
                    fail(name, "\(error)")
                }
                return
            }
            let found: ReadEntry
            switch read ?? Self.read(archive, entry) {
            case .failure(let error):
                fail(name, "\(error)")
                return
            case .success(let entry): found = entry
            }
            if state.pending.count < Self.pendingLimit {
                state.pending.append((name: name, sha256: found.sha256))
            } else {
                fail(name, "is not listed in a checksums file within \(Self.pendingLimit) files of the one before (a bundle has one every "
                     + "\(BundleLayout.checksumLines) files)")
            }
            // Split on the UTF-8 bytes: Character search and slicing showed in this thread's profile.
            if name.hasPrefix(BundleLayout.deliveriesPrefix), let slash = name.utf8.lastIndex(of: UInt8(ascii: "/")) {
                let file = String(name[name.utf8.index(after: slash)...])
                // The folder is compared in place and kept only when it changes (once per proof).
                if state.folder.map({ !$0.utf8.elementsEqual(name.utf8[...slash]) }) ?? true {
                    finishFolder()
                    state.folder = String(name[...slash])
                }
                if file == "metadata.json" {
                    if state.metadata != nil { fail(name, "appears twice in the archive") }
                    state.metadata = found.metadata
                } else if !BundleLayout.proofFiles.contains(file) {
                    // Reported here, not kept: a forged folder of a million files would grow `state.files`.
                    fail(name, "is not a file of a proof")
                } else {
                    if state.files[file] != nil { fail(name, "appears twice in the archive") }
                    state.files[file] = BundleProofCheck.FileFacts(bytes: found.bytes, sha256: found.sha256)
                }
            } else {
                finishFolder()
                if !name.hasPrefix(BundleLayout.auditPrefix) { fail(name, "is not a file of a version 3 bundle") }
            }
        }
        var batch: [ZipArchiveReader.Entry] = []
        // One batch is read on all cores while the one before it is applied here: at most two
        // batches are held.
        var reading: (entries: [ZipArchiveReader.Entry], results: BundleParallelMap.Pending<[Result<ReadEntry, ZipArchiveReader.Failure>?]>)?
        func applyRead() {
            guard let (entries, pending) = reading else { return }
            reading = nil
            sealOnce()
            // Large entries (none in a bundle we wrote) are read when applied, one at a time, so a
            // hostile batch cannot hold a thousand of them at once.
            for (entry, result) in zip(entries, pending.wait().joined()) { apply(entry, result) }
        }
        func flush() {
            let entries = batch
            batch.removeAll(keepingCapacity: true)
            let per = Self.entriesPerRead
            let known = events.segmentDigests
            let started = BundleParallelMap.start((entries.count + per - 1) / per) {
                Self.read(archive, entries[($0 * per)..<min(entries.count, ($0 + 1) * per)], known: known)
            }
            applyRead()
            reading = (entries, started)
        }
        do {
            try archive.forEachEntry { entry in
                // Nearly every entry is a proof's file: its prefix rules out the trailer without hashing the name.
                if !entry.name.hasPrefix(BundleLayout.deliveriesPrefix), BundleLayout.trailer.contains(entry.name) { return }
                batch.append(entry)
                if batch.count >= BundleParallelMap.batchSize { flush() }
            }
        } catch {
            flush()
            applyRead()
            fail("bundle", "\(error)")
        }
        flush()
        applyRead()
        sealOnce()
        finishFolder()
        for (file, _) in state.pending { fail(file, "is not covered by any checksums file") }
        for file in checksums where !seenChecksums.contains(file.path) { fail(file.path, "missing from the bundle") }
        report.verifiedProofs = proofs
        report.verifiedFiles += verifiedFiles
    }
}
