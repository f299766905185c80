import CountersignClient
import Foundation
import Synchronization

/// An ``HTTPTransport`` that answers from a script and records every request, so retry and
/// queue behaviour is tested without a network.
final class ScriptedTransport: HTTPTransport {
    enum Step: Sendable {
        case answer(HTTPResponseData)
        case noAnswer
    }

    private let state: Mutex<(script: [Step], requests: [HTTPRequestData])>

    init(_ script: [Step]) {
        state = Mutex((script, []))
    }

    var requests: [HTTPRequestData] { state.withLock { $0.requests } }

    func send(_ request: HTTPRequestData) async throws(CountersignClientError) -> HTTPResponseData {
        let step: Step = state.withLock { state in
            state.requests.append(request)
            return state.script.isEmpty ? .noAnswer : state.script.removeFirst()
        }
        switch step {
        case .answer(let response): return response
        case .noAnswer: throw .transport("connection refused (scripted)")
        }
    }

    static func problem(_ status: Int, _ code: String, retryAfter: String? = nil, errors: String = "[]") -> Step {
        var headers = ["Content-Type": "application/problem+json"]
        if let retryAfter { headers["Retry-After"] = retryAfter }
        let body = #"{"type":"urn:countersign:problem:\#(code)","title":"T","status":\#(status),"code":"\#(code)","detail":"D","request_id":"r1","errors":\#(errors)}"#
        return .answer(HTTPResponseData(status: status, headers: headers, body: Array(body.utf8)))
    }

    static func created(reference: String = "TRK-1", replayed: Bool = false) -> Step {
        let body = #"{"distance_to_destination_m":null,"flags":["no_location"],"links":{},"png_sha256":"ab","points_sha256":"cd","proof_id":"p-1","received_at":"2026-01-01T00:00:00.000Z","reference":"\#(reference)"}"#
        var headers = ["Content-Type": "application/json"]
        if replayed { headers["Idempotent-Replayed"] = "true" }
        return .answer(HTTPResponseData(status: 201, headers: headers, body: Array(body.utf8)))
    }
}

/// Records the waits a client asked for instead of sleeping.
final class RecordedSleeps: Sendable {
    private let waits = Mutex<[Double]>([])
    var all: [Double] { waits.withLock { $0 } }
    var sleep: @Sendable (Double) async -> Void {
        { [self] seconds in waits.withLock { $0.append(seconds) } }
    }
}
