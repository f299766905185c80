import ArgumentParser
import CountersignClient
import Foundation
import SignatureKit

/// `queue`: a signature file becomes a proof in the offline queue, without touching the network.
struct QueueCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "queue",
        abstract: "Capture a signature from a file (ink/v1, signature_pad, InkML, SVC2004) and queue its proof."
    )

    @Option(help: "The queue folder.") var queue: String
    @Option(help: "The delivery reference.") var reference: String
    @Option(help: "The recipient's name.") var signer: String
    @Option(help: "ink, signature-pad, inkml or svc (default: detected from the first byte).") var format: String?
    @Option(help: "The canvas of signature_pad data, WIDTHxHEIGHT in CSS px.") var canvas: String?
    @Option(help: "Capture time, RFC 3339 with offset (default: now, local offset).") var capturedAt: String?
    @Option(help: "Latitude of the capture.") var lat: Double?
    @Option(help: "Longitude of the capture.") var lon: Double?
    @Option(help: "Accuracy of the location in metres.") var accuracy: Double?
    @Option(help: "The device id sent with the proof.") var deviceID = "courier-cli"
    @Flag(help: "Send plain JSON instead of gzip.") var noGzip = false
    @Option(help: "Sign the proof with this device key file (made and registered by `device`).") var deviceKey: String?
    @Argument(help: "The signature file.") var file: String

    func run() async throws {
        guard let bytes = FileManager.default.contents(atPath: file) else {
            throw ValidationError("cannot read \(file)")
        }
        let ink = try capture(Array(bytes))
        let location = (lat != nil || lon != nil) ? try locationGiven() : nil
        let submission = ProofSubmission(
            reference: reference, signerName: signer,
            capturedAt: capturedAt ?? ProofSubmission.timestamp(Date()),
            location: location,
            device: .init(id: deviceID, model: "courier-cli", os: "Linux", app: "courier-cli/1"),
            ink: ink)
        var prepared = try PreparedProof(submission, compress: !noGzip)
        if let deviceKey {
            // Signed before it is queued: the signature travels in the queue file, so every retry
            // sends the same bytes with the same signature.
            guard let key = try DeviceKeyFile.load(deviceKey), key.keyID != nil else {
                throw ValidationError("\(deviceKey) holds no registered device key: run `courier-cli device` first")
            }
            prepared = try prepared.signed(by: key)
        }
        let item = try await ProofQueue(folder: queue).enqueue(prepared)
        print("queued \(item.fileName) reference=\(reference) idempotency-key=\(item.proof.idempotencyKey)")
    }

    /// Parses the file as the server would, then replays its points through ``InkRecorder``, the
    /// path a live capture takes, so the CLI exercises what an app does.
    private func capture(_ bytes: [UInt8]) throws -> CapturedInk {
        let parsed: InkDocument
        do { parsed = try InkParser().parse(bytes, format: try inkFormat()) } catch let error as InkError {
            throw ValidationError("the signature is not acceptable: \(error)")
        }
        var recorder = InkRecorder(canvas: parsed.canvas)
        for stroke in parsed.strokes {
            recorder.beginStroke()
            for point in stroke.points { recorder.add(x: point.x, y: point.y, t: point.t, pressure: point.pressure) }
            recorder.endStroke()
        }
        do { return try recorder.finish() } catch {
            throw ValidationError("the signature is not acceptable: \(error)")
        }
    }

    private func inkFormat() throws -> InkFormat? {
        guard let format else { return canvas == nil ? nil : .signaturePad(canvas: try canvasSize()) }
        switch InkFormatKind(rawValue: format) {
        case .ink: return .ink
        case .signaturePad: return .signaturePad(canvas: try canvasSize())
        case .inkml: return .inkml
        case .svc2004: return .svc2004
        case nil: throw ValidationError("--format is one of ink, signature-pad, inkml, svc")
        }
    }

    private func canvasSize() throws -> CanvasSize {
        let parts = (canvas ?? "").split(separator: "x").compactMap { Double($0) }
        guard parts.count == 2 else { throw ValidationError("--canvas WIDTHxHEIGHT is needed for signature_pad data") }
        return CanvasSize(width: parts[0], height: parts[1])
    }

    private func locationGiven() throws -> ProofSubmission.Location {
        guard let lat, let lon else { throw ValidationError("--lat and --lon go together") }
        return ProofSubmission.Location(lat: lat, lon: lon, accuracyMeters: accuracy)
    }
}
