import Foundation

/// The Countersign API for a courier app: typed requests and answers, retries with backoff,
/// problems decoded into ``CountersignClientError``.
///
/// ```swift
/// let client = CourierClient(baseURL: URL(string: "https://pod.example.com")!, token: token)
/// let receipt = try await client.upload(PreparedProof(submission))
/// ```
/// For uploads that must survive the app being killed, go through ``ProofQueue`` instead.
public struct CourierClient: Sendable {
    public let baseURL: URL
    private let token: String
    public let transport: any HTTPTransport
    public let retryPolicy: RetryPolicy
    /// Waits between attempts (injected so tests need not sleep).
    private let sleep: @Sendable (Double) async -> Void

    public init(baseURL: URL, token: String, transport: any HTTPTransport = URLSessionTransport(),
                retryPolicy: RetryPolicy = RetryPolicy(),
                sleep: @escaping @Sendable (Double) async -> Void = { seconds in
                    try? await Task.sleep(nanoseconds: UInt64(max(0, seconds) * 1_000_000_000))
                }) {
        self.baseURL = baseURL
        self.token = token
        self.transport = transport
        self.retryPolicy = retryPolicy
        self.sleep = sleep
    }

    // MARK: Proofs

    /// Uploads a prepared proof with its Idempotency-Key, retrying per ``retryPolicy``. A
    /// replayed answer (an earlier attempt had stored it) is a success with `replayed` set.
    public func upload(_ proof: PreparedProof) async throws(CountersignClientError) -> ProofReceipt {
        var headers = ["Content-Type": "application/json", "Idempotency-Key": proof.idempotencyKey]
        if let encoding = proof.contentEncoding { headers["Content-Encoding"] = encoding }
        if let keyID = proof.deviceKeyID, let signature = proof.deviceSignature {
            headers["Countersign-Device-Key"] = keyID
            headers["Countersign-Device-Signature"] = signature
        }
        let response = try await send("POST", path: "/v1/deliveries/\(try Self.pathSegment(proof.reference))/proof",
                                      headers: headers, body: Array(proof.body))
        var receipt = try Self.decode(ProofReceipt.self, response)
        receipt.replayed = response.header("Idempotent-Replayed") == "true"
        return receipt
    }

    // MARK: Device keys

    /// Registers `device`'s public key under `label` (`POST /v1/devices`) and returns it with the
    /// id the server gave it (status `registered` until an admin or dispatcher approves it).
    /// Store the id with the key: ``DeviceSigningKey/keyID``.
    public func registerDevice(_ device: DeviceSigningKey, label: String) async throws(CountersignClientError) -> DeviceSigningKey {
        let body: [UInt8]
        do { body = Array(try JSONEncoder().encode(["public_key": device.publicKeyBase64, "label": label])) } catch {
            throw .encoding(String(describing: error))
        }
        let registered = try Self.decode(RegisteredDevice.self, try await send("POST", path: "/v1/devices",
                                                                              headers: ["Content-Type": "application/json"], body: body))
        var key = device
        key.keyID = registered.id
        return key
    }

    /// `GET /v1/devices/{id}`: whether the key is approved yet.
    public func device(id: String) async throws(CountersignClientError) -> RegisteredDevice {
        try Self.decode(RegisteredDevice.self, try await send("GET", path: "/v1/devices/\(try Self.pathSegment(id))"))
    }

    // MARK: Deliveries

    /// `GET /v1/deliveries/{reference}`.
    public func delivery(reference: String) async throws(CountersignClientError) -> Delivery {
        try Self.decode(Delivery.self, try await send("GET", path: "/v1/deliveries/\(try Self.pathSegment(reference))"))
    }

    /// `POST /v1/deliveries` (dispatcher or admin keys). Creating the same delivery twice is a 200, so it is safe to retry.
    public func createDelivery(_ delivery: NewDelivery) async throws(CountersignClientError) -> Delivery {
        let body: [UInt8]
        do { body = Array(try JSONEncoder().encode(delivery)) } catch { throw .encoding(String(describing: error)) }
        return try Self.decode(Delivery.self, try await send("POST", path: "/v1/deliveries",
                                                              headers: ["Content-Type": "application/json"], body: body))
    }

    // MARK: The exchange

    /// One request with retries: the 2xx answer, or the error that ended it.
    func send(_ method: String, path: String, headers: [String: String] = [:], body: [UInt8]? = nil)
        async throws(CountersignClientError) -> HTTPResponseData {
        guard let url = URL(string: path, relativeTo: baseURL)?.absoluteURL else {
            throw .encoding("cannot form a URL from \(baseURL) and \(path)")
        }
        var request = HTTPRequestData(method: method, url: url, headers: headers, body: body)
        request.headers["Authorization"] = "Bearer \(token)"
        request.headers["Accept"] = "application/json"
        var attempt = 0
        while true {
            attempt += 1
            let outcome: RetryPolicy.Outcome
            let failure: CountersignClientError
            do {
                let response = try await transport.send(request)
                if (200..<300).contains(response.status) { return response }
                let problem = Problem.decode(status: response.status, body: response.body)
                outcome = .answer(status: response.status, retryAfter: RetryAfter.seconds(response.header("Retry-After")),
                                  code: problem.code)
                failure = .problem(problem)
            } catch {
                outcome = .noAnswer
                failure = error
            }
            guard case .retry(let delay) = retryPolicy.decide(after: attempt, outcome) else { throw failure }
            await sleep(delay)
        }
    }

    /// A reference as one path segment: the server allows only `A-Z a-z 0-9 . _ : -`, anything
    /// else is percent-encoded so it can never leave the segment.
    static func pathSegment(_ reference: String) throws(CountersignClientError) -> String {
        let allowed = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")
        // "." and ".." would be dot segments, which URL resolution removes: another path.
        guard !reference.isEmpty, reference != ".", reference != "..", let encoded = reference.addingPercentEncoding(withAllowedCharacters: allowed) else {
            throw .encoding("empty or unencodable delivery reference")
        }
        return encoded
    }

    static func decode<T: Decodable>(_ type: T.Type, _ response: HTTPResponseData) throws(CountersignClientError) -> T {
        do {
            return try ResponseDecoding.decoder.decode(type, from: Data(response.body))
        } catch {
            throw .unexpectedResponse(status: response.status, detail: "cannot read \(type): \(error)")
        }
    }
}
