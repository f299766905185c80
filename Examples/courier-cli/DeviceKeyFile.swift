import ArgumentParser
import CountersignClient
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where the CLI keeps its device key: a JSON file `{"seed": base64, "key_id": id}` readable by its
/// owner only. An app keeps the same two values in the Keychain (docs/courier-guide.md §7); a file
/// is this example's stand-in.
struct DeviceKeyFile: Codable {
    var seed: String
    var keyID: String?

    enum CodingKeys: String, CodingKey {
        case seed
        case keyID = "key_id"
    }

    /// The key stored at `path`, or nil when there is no file.
    static func load(_ path: String) throws -> DeviceSigningKey? {
        guard let bytes = FileManager.default.contents(atPath: path) else { return nil }
        let file = try JSONDecoder().decode(DeviceKeyFile.self, from: bytes)
        guard let seed = Data(base64Encoded: file.seed) else { throw ValidationError("\(path): the seed is not base64") }
        return try DeviceSigningKey(rawRepresentation: seed, keyID: file.keyID)
    }

    /// Writes `key` to `path` (a temporary file renamed over it, mode 0600).
    static func store(_ key: DeviceSigningKey, at path: String) throws {
        let bytes = try JSONEncoder().encode(DeviceKeyFile(seed: key.rawRepresentation.base64EncodedString(), keyID: key.keyID))
        let temporary = path + ".tmp"
        guard FileManager.default.createFile(atPath: temporary, contents: bytes, attributes: [.posixPermissions: 0o600]) else {
            throw ValidationError("cannot write \(temporary)")
        }
        guard rename(temporary, path) == 0 else { throw ValidationError("cannot rename \(temporary): \(String(cString: strerror(errno)))") }
    }
}
