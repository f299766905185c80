import SignatureKit

/// Every way an SDK call fails, typed so an app can act on each: show the ink problem to the
/// signer, keep the proof queued on a network error, tell the dispatcher on a refusal.
public enum CountersignClientError: Error, Sendable, Equatable {
    /// The ink fails the server's checks (same codes and limits as its 422), found before upload.
    case invalidInk(InkError)
    /// The server refused the request definitively (a 4xx, or a 5xx/429 after the last retry).
    case problem(Problem)
    /// No answer: DNS, connection refused or reset, timeout, TLS. Safe to retry with the same
    /// Idempotency-Key.
    case transport(String)
    /// The server answered 2xx with a body the SDK cannot read.
    case unexpectedResponse(status: Int, detail: String)
    /// A request body could not be built (a bug, not bad input).
    case encoding(String)
    /// The offline queue's folder could not be read or written.
    case storage(String)

    /// The server's machine-readable code, when it answered with one.
    public var problemCode: String? {
        if case .problem(let problem) = self { return problem.code }
        if case .invalidInk(let error) = self { return error.code.rawValue }
        return nil
    }
}
