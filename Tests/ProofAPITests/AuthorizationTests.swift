import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import ProofAPI
import ProofStore
import Testing
import TestSupport

@Suite("Authentication and roles", .needsDatabase)
struct AuthorizationTests {
    @Test("GET /v1/session names the key, its role and exactly what the role may do")
    func session() async throws {
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                let expected: [Role: [String]] = [
                    .courier: ["read_delivery", "upload_proof", "record_attempt", "register_device", "read_device"],
                    .dispatcher: ["create_delivery", "read_delivery", "upload_proof", "record_attempt", "close_delivery", "read_proof",
                                  "register_device", "approve_device", "read_device"],
                    .auditor: ["read_delivery", "read_proof", "read_points", "read_audit", "export", "read_device", "hold_delivery"],
                    .admin: ["create_delivery", "read_delivery", "upload_proof", "record_attempt", "close_delivery", "read_proof",
                             "read_points", "read_audit", "export", "manage_webhooks", "register_device", "approve_device", "read_device",
                             "erase_delivery", "hold_delivery"],
                ]
                for (role, permissions) in expected {
                    let response = try await client.execute(uri: "/v1/session", method: .get, headers: harness.headers(role))
                    #expect(response.status == .ok)
                    #expect(response.json["role"] as? String == role.rawValue)
                    #expect(response.json["key_id"] as? String == harness.actors[role]?.keyID.uuidString.lowercased())
                    #expect(response.json["name"] as? String == "test \(role.rawValue)")
                    #expect(response.json["permissions"] as? [String] == permissions)
                }
                #expect(try await client.execute(uri: "/v1/session", method: .get, headers: harness.headers(nil)).status == .unauthorized)
            }
        }
    }

    @Test("a courier reads back the PNG and SVG of its own upload, but not another key's, nor metadata or points")
    func courierReadsOwnImages() async throws {
        try await APITestHarness.with { harness in
            let other = try await APIKeyRepository(database: harness.database).create(name: "other courier", role: .courier)
            try await harness.application().test(.router) { client in
                let mine = try await harness.createDelivery(client)
                let upload = try await client.execute(uri: "/v1/deliveries/\(mine)/proof", method: .post, headers: harness.headers(.courier),
                                                      body: ByteBuffer(string: Samples.proofJSON()))
                #expect(upload.status == .created)
                var otherHeaders = harness.headers(nil)
                otherHeaders[.authorization] = "Bearer \(other.token)"
                for image in ["signature.png", "signature.svg"] {
                    let own = try await client.execute(uri: "/v1/deliveries/\(mine)/proof/\(image)", method: .get, headers: harness.headers(.courier))
                    #expect(own.status == .ok, "\(image)")
                    #expect(!own.bytes.isEmpty)
                    let theirs = try await client.execute(uri: "/v1/deliveries/\(mine)/proof/\(image)", method: .get, headers: otherHeaders)
                    #expect(theirs.status == .forbidden, "\(image) of another key's upload")
                }
                for path in ["", "/points"] {
                    let denied = try await client.execute(uri: "/v1/deliveries/\(mine)/proof\(path)", method: .get, headers: harness.headers(.courier))
                    #expect(denied.status == .forbidden, "proof\(path)")
                }
                let missing = try await client.execute(uri: "/v1/deliveries/NOPE-1/proof/signature.png", method: .get, headers: harness.headers(.courier))
                #expect(missing.status == .forbidden)
            }
        }
    }

    @Test("missing, malformed, unknown and revoked keys are 401 with WWW-Authenticate")
    func unauthenticated() async throws {
        try await APITestHarness.with { harness in
            let revoked = try await APIKeyRepository(database: harness.database).create(name: "old", role: .admin)
            try await APIKeyRepository(database: harness.database).revoke(id: revoked.key.id)
            try await harness.application().test(.router) { client in
                let cases: [HTTPFields] = [
                    [:],
                    [.authorization: "Basic abc"],
                    [.authorization: "Bearer"],
                    [.authorization: "Bearer cs_unknownunknownunknownunknownunknownunknown0"],
                    [.authorization: "Bearer \(revoked.token)"],
                ]
                for headers in cases {
                    try await client.execute(uri: "/v1/deliveries", method: .get, headers: headers) { response in
                        #expect(response.status == .unauthorized, "\(headers)")
                        #expect(response.headers[.contentType] == "application/problem+json")
                        #expect(response.headers[.wwwAuthenticate] == "Bearer")
                        #expect(response.problemCode == "unauthorized")
                    }
                }
            }
        }
    }

    @Test("each role gets exactly the operations it is granted; others are 403")
    func roleMatrix() async throws {
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                let reference = try await harness.createDelivery(client)
                let withProof = try await harness.createDelivery(client)
                let upload = try await client.execute(uri: "/v1/deliveries/\(withProof)/proof", method: .post,
                                                      headers: harness.headers(.admin), body: ByteBuffer(string: Samples.proofJSON()))
                #expect(upload.status == .created)

                struct Operation {
                    var name: String
                    var method: HTTPRequest.Method
                    var uri: String
                    var body: String?
                    var allowed: Set<Role>
                }
                let operations = [
                    Operation(name: "list", method: .get, uri: "/v1/deliveries", allowed: Set(Role.allCases)),
                    Operation(name: "show", method: .get, uri: "/v1/deliveries/\(reference)", allowed: Set(Role.allCases)),
                    Operation(name: "create", method: .post, uri: "/v1/deliveries",
                              body: Samples.deliveryJSON(reference: reference), allowed: [.dispatcher, .admin]),
                    Operation(name: "metadata", method: .get, uri: "/v1/deliveries/\(withProof)/proof", allowed: [.dispatcher, .auditor, .admin]),
                    Operation(name: "png", method: .get, uri: "/v1/deliveries/\(withProof)/proof/signature.png", allowed: [.dispatcher, .auditor, .admin]),
                    Operation(name: "svg", method: .get, uri: "/v1/deliveries/\(withProof)/proof/signature.svg", allowed: [.dispatcher, .auditor, .admin]),
                    Operation(name: "points", method: .get, uri: "/v1/deliveries/\(withProof)/proof/points", allowed: [.auditor, .admin]),
                ]
                for operation in operations {
                    for role in Role.allCases {
                        let response = try await client.execute(uri: operation.uri, method: operation.method, headers: harness.headers(role),
                                                                body: operation.body.map { ByteBuffer(string: $0) })
                        if operation.allowed.contains(role) {
                            #expect(response.status.code < 300, "\(operation.name) as \(role): \(response.status)")
                        } else {
                            #expect(response.status == .forbidden, "\(operation.name) as \(role): \(response.status)")
                            #expect(response.problemCode == "forbidden")
                        }
                    }
                }
                // Upload: the auditor may not; the others may (each on a fresh delivery).
                for role in Role.allCases {
                    let target = try await harness.createDelivery(client)
                    let response = try await client.execute(uri: "/v1/deliveries/\(target)/proof", method: .post, headers: harness.headers(role),
                                                            body: ByteBuffer(string: Samples.proofJSON()))
                    #expect(response.status == (role == .auditor ? .forbidden : .created), "upload as \(role)")
                }
            }
        }
    }
}
