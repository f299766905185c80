import Cryptography
import Foundation

/// The key-encryption keys of a deployment, read from `DATA_KEY_FILE`: they wrap each delivery's
/// data key (AES-256-GCM, the delivery's reference as associated data) and are never stored in
/// the database, so a dump, a replica or a backup alone opens nothing.
///
/// The file holds one key per line, `<id> <32 bytes in base64>` (`#` starts a comment); ids are 1
/// to 32 of `A-Z a-z 0-9 . _ -`. The last key wraps new data keys; the others still unwrap the keys
/// they wrapped, so rotating is appending a line (and keeping the old ones while data they wrapped
/// is stored). Every replica gets the same file.
public struct DataKeyring: DataKeyWrapping, CustomStringConvertible {
    /// The keys by id.
    let keys: [String: [UInt8]]
    /// The id of the key that wraps new data keys.
    public let activeKeyID: String

    /// A keyring of `keys` (id, 32 bytes), the last one active.
    public init(keys: [(id: String, key: [UInt8])]) throws(SealingError) {
        guard let last = keys.last else { throw .invalidKeyFile(path: "(given)", reason: "it holds no key") }
        var byID: [String: [UInt8]] = [:]
        for (id, key) in keys {
            guard Self.isValidID(id) else { throw .invalidKeyFile(path: "(given)", reason: "key id \(id.debugDescription) is not 1 to 32 of A-Z a-z 0-9 . _ -") }
            guard key.count == AESGCM.keyByteCount else { throw .invalidKeyFile(path: "(given)", reason: "key \(id) is not 32 bytes") }
            guard byID.updateValue(key, forKey: id) == nil else { throw .invalidKeyFile(path: "(given)", reason: "key id \(id) appears twice") }
        }
        self.keys = byID
        self.activeKeyID = last.id
    }

    /// The keyring in the text of a key file (see the type's description); errors name the line.
    public init(fileText text: String, path: String) throws(SealingError) {
        var found: [(id: String, key: [UInt8])] = []
        for (index, rawLine) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let line = rawLine.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            if fields.isEmpty { continue }
            guard fields.count == 2 else {
                throw .invalidKeyFile(path: path, reason: "line \(index + 1) is not `<id> <base64 key>`")
            }
            guard let key = Data(base64Encoded: String(fields[1])), key.count == AESGCM.keyByteCount else {
                throw .invalidKeyFile(path: path, reason: "line \(index + 1): the key is not 32 bytes of base64")
            }
            found.append((String(fields[0]), Array(key)))
        }
        guard !found.isEmpty else { throw .invalidKeyFile(path: path, reason: "it holds no key") }
        do {
            try self.init(keys: found)
        } catch .invalidKeyFile(_, let reason) {
            throw .invalidKeyFile(path: path, reason: reason)
        } catch {
            throw error
        }
    }

    /// A keyring of one fresh random key named `id`.
    public static func generate(id: String) throws(SealingError) -> DataKeyring {
        try DataKeyring(keys: [(id, try DataKey.random().bytes)])
    }

    /// The key file's text for this keyring, the active key last.
    public var fileText: String {
        let others = keys.keys.filter { $0 != activeKeyID }.sorted()
        return (others + [activeKeyID]).map { "\($0) \(Data(keys[$0]!).base64EncodedString())\n" }.joined()
    }

    /// The ids it holds, sorted.
    public var keyIDs: [String] { keys.keys.sorted() }

    /// Key ids, never key material.
    public var description: String { "DataKeyring(active: \(activeKeyID), keys: \(keyIDs.joined(separator: ", ")))" }

    public func wrap(_ key: DataKey, for reference: String) throws(SealingError) -> (keyID: String, wrapped: [UInt8]) {
        do {
            return (activeKeyID, try AESGCM.seal(key.bytes, key: keys[activeKeyID]!, associatedData: Self.binding(reference)))
        } catch {
            throw .sealingFailed(error.description)
        }
    }

    public func unwrap(_ wrapped: [UInt8], keyID: String, for reference: String) throws(SealingError) -> DataKey {
        guard let encrypting = keys[keyID] else { throw .unknownKey(keyID) }
        guard let bytes = try? AESGCM.open(wrapped, key: encrypting, associatedData: Self.binding(reference)),
              bytes.count == AESGCM.keyByteCount else {
            throw .wrongKey(keyID: keyID, reference: reference)
        }
        return DataKey(bytes: bytes)
    }

    /// `countersign-data-key/v1:<reference>` (docs/audit.md, "Sealed proofs").
    static func binding(_ reference: String) -> [UInt8] { Array("countersign-data-key/v1:\(reference)".utf8) }

    static func isValidID(_ id: String) -> Bool {
        (1...32).contains(id.utf8.count) && id.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"): true
            default: false
            }
        }
    }
}
