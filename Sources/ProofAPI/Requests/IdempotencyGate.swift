import Cryptography
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import ProofStore

/// The `Idempotency-Key` header of an upload: a repeat with the same key and body gets the first
/// answer again; the same key with another body, or while the first is still running, is refused.
struct IdempotencyGate: Sendable {
    let records: IdempotencyRepository

    /// What the gate decided for one request.
    enum Decision {
        /// Go on; with a key, the caller now owns it and must call ``finished(_:actor:)``.
        case proceed(claimedKey: String?)
        /// Answer with the stored response of the earlier request.
        case replay(Response)
    }

    /// Claims the request's key (if it sent one) for a body with digest `bodySHA256`.
    func admit(_ request: Request, actor: Actor, encoding: String?, bodySHA256: [UInt8]) async throws -> Decision {
        guard let key = request.headers[.idempotencyKey] else { return .proceed(claimedKey: nil) }
        guard (1...255).contains(key.utf8.count), key.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw Problem.badRequest("Idempotency-Key must be 1 to 255 visible ASCII characters.", code: "invalid_idempotency_key")
        }
        let fingerprint = SHA256.hash(Array("POST \(request.uri.path)\n\(encoding ?? "")\n".utf8) + bodySHA256)
        switch try await records.claim(apiKeyID: actor.keyID, key: key, requestSHA256: fingerprint) {
        case .claimed:
            return .proceed(claimedKey: key)
        case .replay(let stored):
            var headers: HTTPFields = [.idempotentReplayed: "true"]
            if let location = stored.location { headers[.location] = location }
            headers[.contentType] = stored.contentType
            return .replay(Response(status: .init(code: stored.status), headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: stored.body))))
        case .inFlight:
            throw Problem(.conflict, code: "idempotency_key_in_flight",
                          detail: "A request with this Idempotency-Key is still being processed; retry shortly.",
                          headers: [.retryAfterHeader: "1"])
        case .mismatch:
            throw Problem(.unprocessableContent, code: "idempotency_key_reused",
                          detail: "This Idempotency-Key was already used with a different request body.",
                          errors: [.init(field: "Idempotency-Key", message: "already used with another body", code: "idempotency_key_reused")])
        }
    }

    /// Gives the key back after a failed request, so a retry runs again.
    func release(_ key: String, actor: Actor, logger: Logger) async {
        do { try await records.release(apiKeyID: actor.keyID, key: key) } catch {
            logger.warning("could not release idempotency key", metadata: ["error": "\(error)"])
        }
    }

    /// Ends this process's hold on a claimed key, however the request ended.
    func finished(_ key: String, actor: Actor) {
        records.finished(apiKeyID: actor.keyID, key: key)
    }
}
