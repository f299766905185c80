#!/usr/bin/env python3
"""Compares two export bundles of the same proofs entry by entry, byte for byte (issue 23).

    bundle_compare.py BEFORE.zip AFTER.zip

Every entry of a proof folder (`deliveries/…`) must have the same position, name, method, CRC-32,
sizes and stored (compressed) bytes in both: a faster writer must not change what it writes.
Audit segments and checksums files are compared the same way when their contents are the same
(a later export's segments may hold events appended in between, such as the earlier export's own
`proofs_exported` event); the manifest, its signature and the key carry the export's time and are
not compared. Prints a summary; exits 1 on the first difference.
"""
import sys
import zipfile


def raw(archive, handle, info):
    """The stored bytes of `info` (after its local header)."""
    handle.seek(info.header_offset)
    header = handle.read(30)
    name_length = int.from_bytes(header[26:28], "little")
    extra_length = int.from_bytes(header[28:30], "little")
    handle.seek(info.header_offset + 30 + name_length + extra_length)
    return handle.read(info.compress_size)


def main(before_path, after_path):
    with zipfile.ZipFile(before_path) as before, zipfile.ZipFile(after_path) as after, \
            open(before_path, "rb") as before_file, open(after_path, "rb") as after_file:
        old = [i for i in before.infolist() if i.filename.startswith("deliveries/")]
        new = [i for i in after.infolist() if i.filename.startswith("deliveries/")]
        if [i.filename for i in old] != [i.filename for i in new]:
            sys.exit("the bundles hold different proof files or another order")
        stored = {name: [i for i in archive.infolist() if not i.filename.startswith("deliveries/")] for name, archive in
                  (("before", before), ("after", after))}
        later = {i.filename: i for i in stored["after"]}
        pairs = list(zip(old, new)) + [(a, later[a.filename]) for a in stored["before"]
                                       if a.filename in later and a.filename.startswith(("audit/", "checksums/"))
                                       and before.read(a) == after.read(later[a.filename])]
        for a, b in pairs:
            if (a.compress_type, a.CRC, a.file_size, a.compress_size) != (b.compress_type, b.CRC, b.file_size, b.compress_size) \
                    or raw(before, before_file, a) != raw(after, after_file, b):
                sys.exit(f"{a.filename}: stored bytes differ")
        print(f"{len(old)} proof files and {len(pairs) - len(old)} segment/checksums files with the same contents: byte-identical")

if __name__ == "__main__":
    main(*sys.argv[1:3])
