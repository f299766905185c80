import ArgumentParser
import CountersignClient
import Foundation

/// `device`: makes this device's Ed25519 key (once) and registers its public half; an admin or a
/// dispatcher then approves it, and `queue --device-key` signs every proof with it.
struct DeviceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "device",
        abstract: "Make and register this device's signing key (approval: an admin or dispatcher, POST /v1/devices/{id}/approve)."
    )

    @Option(help: "The key file (made if missing; mode 0600).") var keyFile: String
    @Option(help: "The server's base URL, e.g. http://127.0.0.1:8080.") var server: String
    @Option(help: "The label the dispatcher sees.") var label = "courier-cli"

    func run() async throws {
        guard let token = ProcessInfo.processInfo.environment["COURIER_TOKEN"], !token.isEmpty else {
            throw ValidationError("COURIER_TOKEN must hold the courier's API key")
        }
        guard let baseURL = URL(string: server), baseURL.scheme != nil else { throw ValidationError("--server is not a URL") }
        var key = try DeviceKeyFile.load(keyFile) ?? DeviceSigningKey.generate()
        // Stored before registering, so a crash in between re-registers the same key (a retry: 200).
        try DeviceKeyFile.store(key, at: keyFile)
        let client = CourierClient(baseURL: baseURL, token: token)
        if key.keyID == nil {
            key = try await client.registerDevice(key, label: label)
            try DeviceKeyFile.store(key, at: keyFile)
        }
        let registered = try await client.device(id: key.keyID ?? "")
        print("device \(registered.id) \(registered.status)")
    }
}
