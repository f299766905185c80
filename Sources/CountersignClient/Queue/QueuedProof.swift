import Foundation

/// One proof waiting in a ``ProofQueue``: its file name (which orders the queue) and the
/// prepared upload, Idempotency-Key included, exactly as it will be sent.
public struct QueuedProof: Sendable, Equatable {
    /// `<milliseconds since 1970, 15 digits>-<uuid>.json`: names sort in the order queued.
    public let fileName: String
    public let queuedAt: Date
    public let proof: PreparedProof

    /// The file's format: a small JSON document, body base64-encoded.
    struct File: Codable {
        var version: Int
        var queuedAt: Date
        var proof: PreparedProof

        enum CodingKeys: String, CodingKey {
            case version, proof
            case queuedAt = "queued_at"
        }
    }

    static let fileSuffix = ".json"

    /// A new item for `proof`, named for `now`, or for `after + 1` ms when `now` is not later than
    /// `after` (the newest stamp already queued): two proofs queued in one millisecond must still
    /// sort in the order queued, which the name's random part alone would not give.
    init(proof: PreparedProof, now: Date, after: UInt64? = nil) {
        let clock = UInt64(max(0, now.timeIntervalSince1970 * 1000))
        let milliseconds = after.map { max(clock, $0 + 1) } ?? clock
        let stamp = String(milliseconds)
        fileName = String(repeating: "0", count: max(0, 15 - stamp.count)) + stamp + "-" + UUID().uuidString.lowercased() + Self.fileSuffix
        // Whole milliseconds, as the file stores it, so an item reads back equal to the one written.
        queuedAt = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
        self.proof = proof
    }

    /// The milliseconds a file name of the queue starts with (nil for any other name).
    static func stamp(ofFileName name: String) -> UInt64? {
        guard let dash = name.firstIndex(of: "-") else { return nil }
        return UInt64(name[..<dash])
    }

    init(fileName: String, file: File) {
        self.fileName = fileName
        self.queuedAt = file.queuedAt
        self.proof = file.proof
    }

    /// The file's bytes.
    func encoded() throws(CountersignClientError) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .millisecondsSince1970
        encoder.outputFormatting = [.sortedKeys]
        do { return Array(try encoder.encode(File(version: 1, queuedAt: queuedAt, proof: proof))) } catch {
            throw .encoding("queue item: \(error)")
        }
    }

    /// Reads an item file; a file that does not decode (not written by this SDK) is a storage error.
    static func decode(fileName: String, bytes: [UInt8]) throws(CountersignClientError) -> QueuedProof {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .millisecondsSince1970
        do {
            let file = try decoder.decode(File.self, from: Data(bytes))
            guard file.version == 1 else { throw CountersignClientError.storage("\(fileName): unknown version \(file.version)") }
            return QueuedProof(fileName: fileName, file: file)
        } catch let error as CountersignClientError {
            throw error
        } catch {
            throw .storage("\(fileName): not a queue item (\(error))")
        }
    }
}
