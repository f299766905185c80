import CountersignClient
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import TestSupport

/// The SDK's device key against the real server with `DEVICE_KEYS=required`: registered, approved
/// by a dispatcher, and every upload signed — through the offline queue too, whose stored request
/// carries the signature; an unsigned upload and one signed before approval are refused.
@Suite("Device keys through the SDK", .needsDatabase)
struct DeviceKeyLiveTests {
    /// `POST /v1/devices/{id}/approve` as `token` (the SDK is the courier's: approving is a dispatcher's console action).
    static func approve(_ server: LiveServer, id: String, token: String) async throws -> Int {
        var request = URLRequest(url: server.baseURL.appendingPathComponent("v1/devices/\(id)/approve"))
        request.httpMethod = "POST"
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        let (_, response) = try await URLSession.shared.data(for: request)
        return (response as? HTTPURLResponse)?.statusCode ?? 0
    }

    @Test("generate, register, approve, sign each upload (queued ones too); unsigned and unapproved uploads are refused")
    func signedUploads() async throws {
        try await Samples.withFolder { folder in
            let scratch = try await ScratchDatabase.create(prefix: "sdkdev")
            let server = try await LiveServer(scratch: scratch, settings: ["DEVICE_KEYS": "required"])
            defer { server.stop() }
            let dispatcherToken = try server.createKey(role: "dispatcher")
            let dispatcher = CourierClient(baseURL: server.baseURL, token: dispatcherToken)
            let courier = CourierClient(baseURL: server.baseURL, token: try server.createKey(role: "courier"))
            for reference in ["DEV-1", "DEV-2", "DEV-3"] { _ = try await dispatcher.createDelivery(LiveServerTests.delivery(reference)) }

            // The stored seed gives back the same key (what the Keychain keeps).
            let generated = DeviceSigningKey.generate()
            #expect(try DeviceSigningKey(rawRepresentation: generated.rawRepresentation).publicKeyBase64 == generated.publicKeyBase64)
            let device = try await courier.registerDevice(generated, label: "van 12 handheld")
            let id = try #require(device.keyID)
            #expect(try await courier.device(id: id).status == "registered")

            let unsigned = try PreparedProof(try Samples.submission(reference: "DEV-1"))
            #expect(await LiveServerTests.problemCode { () async throws(CountersignClientError) in _ = try await courier.upload(unsigned) }
                    == "device_signature_required")
            let early = try unsigned.signed(by: device)
            #expect(await LiveServerTests.problemCode { () async throws(CountersignClientError) in _ = try await courier.upload(early) }
                    == "device_key_not_approved")

            #expect(try await Self.approve(server, id: id, token: dispatcherToken) == 200)
            #expect(try await courier.device(id: id).status == "approved")
            let receipt = try await courier.upload(try PreparedProof(try Samples.submission(reference: "DEV-1")).signed(by: device))
            #expect(receipt.reference == "DEV-1")

            // The queue keeps the signed request: a drain after a restart sends the same signature.
            let queue = try ProofQueue(folder: folder)
            let signed = try PreparedProof(try Samples.submission(reference: "DEV-2")).signed(by: device)
            try await queue.enqueue(signed)
            let stored = try #require(try await ProofQueue(folder: folder).pending().first)
            #expect(stored.proof.deviceSignature == signed.deviceSignature && stored.proof.deviceKeyID == id)
            let report = try await ProofQueue(folder: folder).drain(with: courier)
            #expect(report.sent.map(\.reference) == ["DEV-2"] && report.rejected.isEmpty)

            // The signed request re-targeted at another delivery (body and signature kept) is refused by the server.
            var retargeted = signed
            retargeted.reference = "DEV-3"
            retargeted.idempotencyKey = UUID().uuidString.lowercased()
            #expect(await LiveServerTests.problemCode { () async throws(CountersignClientError) in _ = try await courier.upload(retargeted) }
                    == "device_signature_invalid")
            server.stop()
            await scratch.drop()
        }
    }
}
