import CZlib
import Cryptography
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import Postgres
import ProofAPI
import ProofService
import ProofStore
import TestSupport
import Webhooks

/// A scratch database with one API key per role and the application built over it.
struct APITestHarness: Sendable {
    let scratch: ScratchDatabase
    let database: PostgresClient
    let tokens: [Role: String]
    let actors: [Role: Actor]
    /// The key that signs this harness's checkpoints and export manifests (never written to disk).
    let checkpointKey: Ed25519PrivateKey

    /// Runs `body` against a fresh database with keys for every role.
    static func with<T: Sendable>(poolSize: Int = 4, _ body: (APITestHarness) async throws -> T) async throws -> T {
        try await ScratchDatabase.with(prefix: "api", poolSize: poolSize) { scratch, database in
            let keys = APIKeyRepository(database: database)
            var tokens: [Role: String] = [:]
            var actors: [Role: Actor] = [:]
            for role in Role.allCases {
                let (key, token) = try await keys.create(name: "test \(role.rawValue)", role: role)
                tokens[role] = token
                actors[role] = key.actor
            }
            return try await body(APITestHarness(scratch: scratch, database: database, tokens: tokens, actors: actors,
                                                 checkpointKey: try Ed25519PrivateKey.generate()))
        }
    }

    /// The application (body limit 1 MiB unless given).
    func application(bodyLimit: Int = 1 << 20, policy: APIPolicy = APIPolicy(), readDatabase: PostgresClient? = nil,
                     webhooks: WebhookSettings = WebhookSettings(),
                     dataKeys: DataKeyProvider = TestDataKeys.provider) -> some ApplicationProtocol {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        var configuration = ServiceConfiguration(databaseURL: scratch.url, bodyLimit: bodyLimit)
        configuration.webhooks = webhooks
        let router = Router(context: AppRequestContext.self)
        router.add(middleware: RequestIDMiddleware())
        router.add(middleware: ProblemMiddleware())
        APIRoutes(configuration: configuration, database: database, logger: logger, policy: policy,
                  checkpointKeys: CheckpointKeyProvider(key: checkpointKey), dataKeys: dataKeys,
                  readDatabase: readDatabase).register(on: router)
        return Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)), logger: logger)
    }

    /// Headers with `Authorization: Bearer` for `role` (plus JSON content type).
    func headers(_ role: Role?, _ extra: HTTPFields = [:]) -> HTTPFields {
        var fields = extra
        if let role { fields[.authorization] = "Bearer \(tokens[role]!)" }
        if fields[.contentType] == nil { fields[.contentType] = "application/json" }
        return fields
    }

    /// Creates a delivery as a dispatcher and returns its reference.
    @discardableResult
    func createDelivery(_ client: some TestClientProtocol, reference: String = "REF-\(UInt32.random(in: 0...UInt32.max))",
                        lat: Double? = 52.52, lon: Double? = 13.405) async throws -> String {
        let body = Samples.deliveryJSON(reference: reference, lat: lat, lon: lon)
        let status = try await client.execute(uri: "/v1/deliveries", method: .post, headers: headers(.dispatcher),
                                              body: ByteBuffer(string: body)) { $0.status }
        precondition(status == .created, "delivery creation failed: \(status)")
        return reference
    }

    /// Creates a delivery and uploads `body` (the sample proof by default) to it as a courier;
    /// returns the reference and the upload's response.
    func createDeliveryWithProof(_ client: some TestClientProtocol,
                                 body: String = Samples.proofJSON()) async throws -> (reference: String, upload: TestResponse) {
        let reference = try await createDelivery(client)
        let upload = try await client.execute(uri: "/v1/deliveries/\(reference)/proof", method: .post, headers: headers(.courier),
                                              body: ByteBuffer(string: body))
        return (reference, upload)
    }
}

/// Test inputs.
enum Samples {
    static func deliveryJSON(reference: String, name: String = "Ada Lovelace", address: String = "1 Main St",
                             lat: Double? = 52.52, lon: Double? = 13.405) -> String {
        var fields = [#""reference":"\#(reference)""#, #""recipient":{"name":"\#(name)"}"#, #""address":"\#(address)""#]
        if let lat, let lon { fields.append(#""destination":{"lat":\#(lat),"lon":\#(lon)}"#) }
        return "{" + fields.joined(separator: ",") + "}"
    }

    /// A plausible three-stroke signature in countersign.ink/v1 on a 600×200 canvas.
    static func inkJSON(seed: Double = 0) -> String {
        var strokes: [String] = []
        for s in 0..<3 {
            var points: [String] = []
            for i in 0..<40 {
                let x = 60 + Double(s) * 170 + Double(i) * 3.5
                let y = 100 + 50 * sin(Double(i) / 5 + Double(s) + seed)
                let t = Double(s * 600 + i * 12)
                points.append("[\(String(format: "%.2f", x)),\(String(format: "%.2f", y)),\(t),0.5]")
            }
            strokes.append("[" + points.joined(separator: ",") + "]")
        }
        return #"{"canvas":{"width":600,"height":200},"strokes":[\#(strokes.joined(separator: ","))]}"#
    }

    /// A full proof body.
    static func proofJSON(signer: String = "Ada Lovelace", capturedAt: String = "2025-03-01T14:05:09.250+01:00",
                          location: String? = #"{"lat":52.5201,"lon":13.4051,"accuracy_m":8}"#,
                          ink: String = Samples.inkJSON(), signatureMember: String = "ink") -> String {
        var fields = [#""signer":{"name":"\#(signer)"}"#, #""captured_at":"\#(capturedAt)""#,
                      #""device":{"id":"dev-1","model":"Pixel 8","os":"Android 15","app":"courier/3.2"}"#]
        if let location { fields.append(#""location":\#(location)"#) }
        fields.append(#""\#(signatureMember)":\#(ink)"#)
        return "{" + fields.joined(separator: ",") + "}"
    }

    /// gzip of `bytes` (zlib, level 6).
    static func gzip(_ bytes: [UInt8]) -> [UInt8] {
        var stream = z_stream()
        precondition(deflateInit2_(&stream, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION,
                                   Int32(MemoryLayout<z_stream>.size)) == Z_OK)
        defer { deflateEnd(&stream) }
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, UInt(bytes.count))) + 64)
        var input = bytes
        let produced: Int = input.withUnsafeMutableBufferPointer { source in
            output.withUnsafeMutableBufferPointer { target in
                stream.next_in = source.baseAddress
                stream.avail_in = UInt32(source.count)
                stream.next_out = target.baseAddress
                stream.avail_out = UInt32(target.count)
                precondition(deflate(&stream, Z_FINISH) == Z_STREAM_END)
                return target.count - Int(stream.avail_out)
            }
        }
        return Array(output[0..<produced])
    }

    /// The repository's sibling `shared/corpus` folder, when present.
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("shared/corpus")
}

extension TestResponse {
    /// The body as bytes.
    var bytes: [UInt8] { Array(body.readableBytesView) }
    /// The body as a JSON object.
    var json: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any] ?? [:]
    }
    /// The problem code of a problem+json body.
    var problemCode: String? { json["code"] as? String }
}
