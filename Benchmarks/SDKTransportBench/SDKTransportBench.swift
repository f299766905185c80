import AsyncHTTPClient
import CountersignClient
import Foundation
import SignatureKit

/// Uploads through the SDK with URLSession (FoundationNetworking on Linux) and with
/// AsyncHTTPClient, alternating rounds against the same live server, and prints the latency of
/// each: the measurement behind docs/decisions/0022-courier-sdk-urlsession.md.
///
///     sdk-transport-bench URL COURIER_TOKEN DISPATCHER_TOKEN [UPLOADS_PER_ROUND] [ROUNDS]
@main
struct SDKTransportBench {
    static func main() async throws {
        let arguments = CommandLine.arguments
        guard arguments.count >= 4, let baseURL = URL(string: arguments[1]) else {
            print("usage: sdk-transport-bench URL COURIER_TOKEN DISPATCHER_TOKEN [UPLOADS_PER_ROUND] [ROUNDS]")
            exit(2)
        }
        let perRound = arguments.count > 4 ? Int(arguments[4]) ?? 50 : 50
        let rounds = arguments.count > 5 ? Int(arguments[5]) ?? 4 : 4
        let ink = try sampleInk()
        let dispatcher = CourierClient(baseURL: baseURL, token: arguments[3])
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        let transports: [(String, any HTTPTransport)] = [("URLSession", URLSessionTransport()),
                                                         ("AsyncHTTPClient", AsyncHTTPClientTransport(client: http))]
        var samples: [String: [Double]] = [:]
        let run = UInt32.random(in: 0...UInt32.max)
        for round in 0..<rounds {
            for (name, transport) in round % 2 == 0 ? transports : transports.reversed() {
                let courier = CourierClient(baseURL: baseURL, token: arguments[2], transport: transport,
                                            retryPolicy: RetryPolicy(maxAttempts: 1))
                for index in 0..<perRound {
                    let reference = "BENCH-\(run)-\(name)-\(round)-\(index)"
                    _ = try await dispatcher.createDelivery(NewDelivery(reference: reference, recipientName: "Bench", address: "1 Main St"))
                    let proof = try PreparedProof(ProofSubmission(reference: reference, signerName: "Bench",
                                                                  capturedAt: "2026-11-25T05:00:00.000Z", ink: ink))
                    let started = ContinuousClock.now
                    _ = try await courier.upload(proof)
                    let elapsed = ContinuousClock.now - started
                    samples[name, default: []].append(Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000)
                }
            }
        }
        try await http.shutdown()
        print("transport        uploads  median_ms  p90_ms  mean_ms")
        for (name, _) in transports {
            let sorted = (samples[name] ?? []).sorted()
            guard !sorted.isEmpty else { continue }
            let median = sorted[sorted.count / 2], p90 = sorted[min(sorted.count - 1, sorted.count * 9 / 10)]
            let mean = sorted.reduce(0, +) / Double(sorted.count)
            print(name.padding(toLength: 16, withPad: " ", startingAt: 0), String(sorted.count).padding(toLength: 8, withPad: " ", startingAt: 0),
                  String(format: "%9.2f %7.2f %8.2f", median, p90, mean))
        }
    }

    /// The worked example's signature (docs/examples/proof-upload.json), 4 strokes, 214 points.
    static func sampleInk() throws -> CapturedInk {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("docs/examples/proof-upload.json").path
        guard let data = FileManager.default.contents(atPath: path),
              let object = try JSONSerialization.jsonObject(with: data) as? [String: Any], let ink = object["ink"] else {
            throw CountersignClientError.storage("cannot read \(path)")
        }
        return try CapturedInk(importing: Array(try JSONSerialization.data(withJSONObject: ink)))
    }
}
