import Foundation
import Logging

/// Log output: `json` (one object per line, for collectors) or `text` (for people).
enum LogFormat: String {
    case json, text

    /// `LOG_FORMAT` if set, else text on a terminal and JSON otherwise.
    static func fromEnvironment() -> LogFormat {
        if let raw = ProcessInfo.processInfo.environment["LOG_FORMAT"], let format = LogFormat(rawValue: raw.lowercased()) {
            return format
        }
        return isatty(STDOUT_FILENO) == 1 ? .text : .json
    }
}

/// Bootstraps swift-log once for the process.
enum LoggingSetup {
    static func bootstrap(level: Logger.Level, format: LogFormat = .fromEnvironment()) {
        LoggingSystem.bootstrap { label in
            var handler: any LogHandler
            switch format {
            case .json: handler = JSONLogHandler(label: label)
            case .text: handler = StreamLogHandler.standardOutput(label: label)
            }
            handler.logLevel = level
            return handler
        }
    }
}

/// Writes each log event as one JSON object per line on standard output.
struct JSONLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]
    private static let lock = NSLock()

    init(label: String) { self.label = label }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var merged = metadata
        if let extra = event.metadata { merged.merge(extra) { $1 } }
        var object: [String: Any] = [
            "ts": Self.timestamp(),
            "level": event.level.rawValue,
            "logger": label,
            "msg": event.message.description,
        ]
        for (key, value) in merged { object[key] = Self.plain(value) }
        guard var line = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else { return }
        line.append(0x0A)
        Self.lock.lock()
        FileHandle.standardOutput.write(line)
        Self.lock.unlock()
    }

    private static func plain(_ value: Logger.Metadata.Value) -> Any {
        switch value {
        case .string(let string): return string
        case .stringConvertible(let convertible): return convertible.description
        case .array(let array): return array.map(plain)
        case .dictionary(let dictionary): return dictionary.mapValues(plain)
        }
    }

    private static func timestamp() -> String {
        Date().formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true).timeZone(separator: .omitted))
    }
}
