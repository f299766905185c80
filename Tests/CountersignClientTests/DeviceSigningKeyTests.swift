#if canImport(CryptoKit)
import CryptoKit
#else
import Crypto
#endif
import CountersignClient
import Foundation
import Testing

/// The SDK's device key offline: the message it signs is the documented one, byte by byte; a key
/// without its registration id cannot sign; queue files from before device keys read as unsigned.
@Suite struct DeviceSigningKeyTests {
    @Test("the signature covers tag, reference, key id and the body's SHA-256, laid out as docs/api.md says")
    func messageLayout() throws {
        let keyID = "0b0f1c0e-5f43-4c5e-9a57-3f1e8f0e2b11"
        let device = try DeviceSigningKey(rawRepresentation: Data(repeating: 7, count: 32), keyID: keyID)
        let proof = PreparedProof(reference: "PARCEL-1042", idempotencyKey: "k", body: Data("{}".utf8), contentEncoding: nil)
        let signed = try proof.signed(by: device)
        #expect(signed.deviceKeyID == keyID)
        func text(_ value: String) -> [UInt8] {
            let utf8 = Array(value.utf8)
            return [1] + withUnsafeBytes(of: UInt32(utf8.count).bigEndian, Array.init) + utf8
        }
        let message = text("countersign.device-upload/v1") + text("PARCEL-1042") + text(keyID) + Array(SHA256.hash(data: Data("{}".utf8)))
        let publicKeyBytes = try #require(Data(base64Encoded: device.publicKeyBase64))
        let publicKey = try Curve25519.Signing.PublicKey(rawRepresentation: publicKeyBytes)
        let signatureText = try #require(signed.deviceSignature)
        let signature = try #require(Data(base64Encoded: signatureText))
        #expect(signature.count == 64)
        #expect(publicKey.isValidSignature(signature, for: Data(message)))
        // Another reference, another message: the same signature does not verify for it.
        let other = text("countersign.device-upload/v1") + text("PARCEL-1043") + text(keyID) + Array(SHA256.hash(data: Data("{}".utf8)))
        #expect(!publicKey.isValidSignature(signature, for: Data(other)))
    }

    @Test("an unregistered key cannot sign; a wrong-sized seed is refused")
    func refusals() throws {
        let proof = PreparedProof(reference: "R", idempotencyKey: "k", body: Data("{}".utf8), contentEncoding: nil)
        #expect(throws: CountersignClientError.self) { _ = try proof.signed(by: DeviceSigningKey.generate()) }
        #expect(throws: CountersignClientError.self) { _ = try DeviceSigningKey(rawRepresentation: Data(count: 31)) }
    }

    @Test("a prepared proof stored before device keys decodes as unsigned; a signed one round-trips with its signature")
    func queueFormat() throws {
        let old = #"{"reference":"R","idempotency_key":"k","body":"e30=","content_encoding":null}"#
        let decoded = try JSONDecoder().decode(PreparedProof.self, from: Data(old.utf8))
        #expect(decoded.deviceKeyID == nil && decoded.deviceSignature == nil && decoded.body == Data("{}".utf8))
        let device = try DeviceSigningKey(rawRepresentation: Data(repeating: 1, count: 32), keyID: UUID().uuidString.lowercased())
        let signed = try decoded.signed(by: device)
        #expect(try JSONDecoder().decode(PreparedProof.self, from: try JSONEncoder().encode(signed)) == signed)
    }
}
