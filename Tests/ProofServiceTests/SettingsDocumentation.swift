import Foundation
import ProofService

/// Reading the docs and sources for ``DocumentedSettingsTests``.
enum SettingsDocumentation {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func text(_ relative: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(relative), encoding: .utf8)
    }

    /// The defaults the code starts with, by variable: taken from the configuration values
    /// themselves, so a changed default in code shows up here without editing this test.
    static func codeDefaults() -> [String: String] {
        let configuration = ServiceConfiguration()
        let policy = configuration.policy
        let cacheSeconds = Double(policy.authenticationCacheTTL.components.seconds)
            + Double(policy.authenticationCacheTTL.components.attoseconds) / 1e18
        return [
            "HOST": configuration.host,
            "PORT": String(configuration.port),
            "DATABASE_URL": configuration.databaseURL,
            "DB_POOL_SIZE": String(configuration.poolSize),
            "BODY_LIMIT": String(configuration.bodyLimit),
            "LOG_LEVEL": configuration.logLevel.rawValue,
            "MIGRATE_ON_START": String(configuration.migrateOnStart),
            "PUBLIC_DIR": configuration.publicDirectory,
            "DATA_DIR": configuration.dataDirectory,
            "CHECKPOINT_KEY_GENERATE": String(configuration.generateCheckpointKey),
            "DATA_KEY_GENERATE": String(configuration.generateDataKey),
            "IDLE_TIMEOUT_SECONDS": String(configuration.idleTimeoutSeconds),
            "REQUEST_TIMEOUT_SECONDS": String(configuration.requestTimeoutSeconds),
            "HSTS_MAX_AGE_SECONDS": String(configuration.hstsMaxAgeSeconds),
            "GEOFENCE_RADIUS_M": String(policy.geofenceRadiusMeters),
            "AUTH_CACHE_SECONDS": String(cacheSeconds),
            "RATE_LIMIT_PER_SECOND": String(policy.rateLimitPerSecond),
            "RATE_LIMIT_BURST": String(policy.rateLimitBurst),
            "PNG_CACHE_MB": String(policy.pngCacheBytes >> 20),
            "AUTH_FAILURE_RATE_PER_SECOND": String(policy.authenticationFailureRatePerSecond),
            "AUTH_FAILURE_BURST": String(policy.authenticationFailureBurst),
            "CPU_QUEUE_LIMIT": String(policy.cpuQueueLimit),
            "CPU_PER_KEY_LIMIT": String(policy.cpuPerKeyLimit),
            "CPU_SHARE_PER_KEY": String(policy.cpuSharePerKey),
            // Follows the machine: the docs state the rule, not one machine's figure.
            "CPU_HEAVY_SHARE": policy.cpuHeavyShare == 0.05 * Double(CPUWorkPool.cores) ? "a twentieth of the cores" : String(policy.cpuHeavyShare),
        ]
    }

    /// Environment variables named in the sources where they are read: a string literal of capitals
    /// given to `environment[…]` or to a configuration reader (`value`, `integer`, `boolean`,
    /// `number`, `count`, …) — the shapes ServiceConfiguration, APIPolicy and the commands use.
    static func variablesReadBySources() throws -> Set<String> {
        let pattern = try NSRegularExpression(
            pattern: #"(?:environment\[|\b(?:value|integer|boolean|number|count|seconds|string|flag|list|duration)\()\s*"([A-Z][A-Z0-9_]{2,})""#)
        var names = Set<String>()
        let sources = root.appendingPathComponent("Sources")
        let files = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)
        while let file = files?.nextObject() as? URL {
            guard file.pathExtension == "swift", let text = try? String(contentsOf: file, encoding: .utf8) else { continue }
            let range = NSRange(text.startIndex..., in: text)
            for match in pattern.matches(in: text, range: range) {
                if let name = Range(match.range(at: 1), in: text) { names.insert(String(text[name])) }
            }
            // Constants such as `static let environmentVariable = "COUNTERSIGN_TRUSTED_KEYS"`.
            let constant = try NSRegularExpression(pattern: #"environmentVariable\s*=\s*"([A-Z][A-Z0-9_]{2,})""#)
            for match in constant.matches(in: text, range: range) {
                if let name = Range(match.range(at: 1), in: text) { names.insert(String(text[name])) }
            }
        }
        // The process environment the code consults that is not ours to document.
        return names.subtracting(["PATH", "TMPDIR", "HOME"])
    }

    /// A markdown table whose first column names variables and whose column headed "default"
    /// gives their defaults; a row naming several variables gives their defaults in order.
    static func table(in relative: String) throws -> [String: String] {
        var result: [String: String] = [:]
        var defaultColumn: Int?
        for line in try text(relative).split(separator: "\n", omittingEmptySubsequences: false) {
            guard line.hasPrefix("|") else { defaultColumn = nil; continue }
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).dropFirst().dropLast()
                .map { $0.trimmingCharacters(in: .whitespaces) }
            if let index = cells.firstIndex(where: { $0.lowercased() == "default" }),
               cells.first?.lowercased() == "variable" {
                defaultColumn = index
                continue
            }
            guard let column = defaultColumn, column < cells.count, !cells[0].hasPrefix("---") else { continue }
            let names = backticked(cells[0])
            let defaults = names.count > 1 ? backticked(cells[column]) : [cells[column]]
            for (offset, name) in names.enumerated() where offset < defaults.count {
                result[name] = defaults[offset]
            }
        }
        return result
    }

    struct ProseDefault {
        var file: String
        var variable: String
        var value: String
    }

    /// "`NAME` … default N [KiB|MiB]" within one clause, anywhere in docs/*.md and deploy/README.md.
    static func proseDefaults() throws -> [ProseDefault] {
        let pattern = try NSRegularExpression(
            pattern: #"`([A-Z][A-Z0-9_]{2,})`[^`.;|\n]{0,40}?\bdefault(?:s to|:)?\s+`?(\d[\d_,.]*(?:\s?(?:KiB|MiB|GiB))?)"#)
        var files = ["deploy/README.md"]
        let docs = root.appendingPathComponent("docs")
        for name in try FileManager.default.contentsOfDirectory(atPath: docs.path) where name.hasSuffix(".md") {
            files.append("docs/\(name)")
        }
        var found: [ProseDefault] = []
        for file in files {
            let body = try text(file)
            for match in pattern.matches(in: body, range: NSRange(body.startIndex..., in: body)) {
                guard let name = Range(match.range(at: 1), in: body), let value = Range(match.range(at: 2), in: body) else { continue }
                found.append(ProseDefault(file: file, variable: String(body[name]), value: String(body[value])))
            }
        }
        return found
    }

    static func backticked(_ cell: String) -> [String] {
        cell.split(separator: "`", omittingEmptySubsequences: false).enumerated()
            .filter { $0.offset % 2 == 1 }.map { String($0.element) }
    }

    /// Whether a documented default means the code's value: numbers compare as numbers (with
    /// KiB/MiB/GiB), paths without a leading `./`, and "(image: …)" remarks are ignored.
    static func same(_ documented: String, _ code: String) -> Bool {
        var text = documented
        if let remark = text.range(of: "(") { text = String(text[..<remark.lowerBound]) }
        text = text.replacingOccurrences(of: "`", with: "").trimmingCharacters(in: .whitespaces)
        if text.hasSuffix(",") { text.removeLast() }
        if let number = quantity(text), let value = Double(code) { return number == value }
        func path(_ value: String) -> String { value.hasPrefix("./") ? String(value.dropFirst(2)) : value }
        return path(text) == path(code)
    }

    static func quantity(_ text: String) -> Double? {
        let units: [(String, Double)] = [("KiB", 1024), ("MiB", 1_048_576), ("GiB", 1_073_741_824)]
        var number = text.replacingOccurrences(of: ",", with: "").replacingOccurrences(of: "_", with: "")
        var scale = 1.0
        for (unit, factor) in units where number.hasSuffix(unit) {
            number = String(number.dropLast(unit.count)).trimmingCharacters(in: .whitespaces)
            scale = factor
        }
        return Double(number).map { $0 * scale }
    }
}
