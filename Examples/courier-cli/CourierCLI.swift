import ArgumentParser

/// A courier app without a screen: captures a signature from a file, queues the proof durably,
/// and sends the queue through the CountersignClient SDK when the server can be reached.
///
/// ```
/// COURIER_TOKEN=… courier-cli device --key-file ~/.courier-device.json --server http://127.0.0.1:8080
/// courier-cli queue --queue ~/.courier --reference TRK-1 --signer "Ada Lovelace" [--device-key ~/.courier-device.json] signature.json
/// COURIER_TOKEN=… courier-cli send --queue ~/.courier --server http://127.0.0.1:8080 --until-empty
/// courier-cli status --queue ~/.courier
/// ```
@main
struct CourierCLI: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "courier-cli",
        abstract: "Capture, queue and upload proofs of delivery through the CountersignClient SDK.",
        subcommands: [QueueCommand.self, SendCommand.self, StatusCommand.self, DeviceCommand.self]
    )
}
