import Foundation
import Hummingbird
import Postgres
import ProofService
import ProofStore

/// `GET /v1/exports/proofs?since=&until=&format=zip|ndjson|csv&points=include|omit` (auditor,
/// admin): the proofs received in the period, streamed; `points=omit` leaves each proof's raw
/// dynamics out of a ZIP bundle (``ExportContents``). The export's audit event is committed before the first byte.
struct ExportRoutes: Sendable {
    let services: CountersignServices
    let slots: ExportSlots

    init(services: CountersignServices) {
        self.services = services
        self.slots = ExportSlots(limit: services.policy.maxConcurrentExports)
    }

    func register(on group: RouterGroup<AppRequestContext>) {
        group.get("exports/proofs") { request, context in try await export(request, context) }
    }

    func export(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        _ = try context.require(.export)
        let policy = services.policy
        var query = PagedListQuery(request.uri.queryParameters, defaultLimit: policy.defaultPageSize, maxLimit: policy.maxPageSize)
        query.readPeriod()
        let raw = query.value("format") ?? ProofExporter.Format.zip.rawValue
        let format = ProofExporter.Format(rawValue: raw) ?? .zip
        if ProofExporter.Format(rawValue: raw) == nil {
            query.errors.append(.init(field: "format", message: "zip, ndjson or csv", code: "invalid_format"))
        }
        let contents: ExportContents
        switch query.value("points") {
        case nil, "include": contents = .everything
        case "omit": contents = .withoutPoints
        default:
            contents = .everything
            query.errors.append(.init(field: "points", message: "include or omit", code: "invalid_points"))
        }
        guard query.errors.isEmpty else { throw Problem.validation("The export parameters are not valid.", errors: query.errors) }
        let (since, until) = (query.since, query.until)
        let key = try services.checkpointKeys.key(for: context)
        guard let slot = slots.acquire() else {
            throw Problem(.serviceUnavailable, code: "exports_busy",
                          detail: "\(slots.limit) exports are already running (each holds a database connection); retry shortly.",
                          headers: [.retryAfterHeader: "10"])
        }
        let exporter = services.exporter(signingWith: key)
        var details = ["format": format.rawValue]
        // Only ZIP bundles carry points; the event says when one left them out.
        if format == .zip, contents != .everything { details["contents"] = contents.rawValue }
        details["since"] = since.map(RFC3339Timestamp.format)
        details["until"] = until.map(RFC3339Timestamp.format)
        try await services.audit.append(.proofsExported, subject: "export:\(details["since"] ?? "")/\(details["until"] ?? "")", details: details,
                               origin: context.auditOrigin(request))
        let name = "countersign-proofs-\(Self.fileStamp(since) ?? "start")-\(Self.fileStamp(until) ?? "now").\(format.rawValue)"
        let logger = context.logger
        let longest = policy.maxExportDuration
        let body = ResponseBody { writer in
            defer { withExtendedLifetime(slot) {} }  // the slot is free again once the body is done
            // A reader that stops altogether is cut by StalledWriteHandler; one that reads just
            // enough to keep the connection writable ends here, at EXPORT_MAX_SECONDS.
            let deadline = ContinuousClock.now + longest
            do {
                let summary = try await exporter.export(format: format, since: since, until: until, contents: contents) { chunk in
                    guard ContinuousClock.now < deadline else { throw DeadlinePassed(limit: longest) }
                    try await writer.write(ByteBuffer(bytes: chunk))
                }
                logger.info("export finished", metadata: ["format": "\(format.rawValue)", "proofs": "\(summary.proofs)",
                                                          "bytes": "\(summary.bytes)"])
            } catch {
                // The status line has gone: all we can do is end the stream short, which every
                // client sees as a broken download (a ZIP without its central directory).
                logger.error("export aborted", metadata: ["error": "\(error)"])
                throw error
            }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: [.contentType: format.contentType, .contentDisposition: "attachment; filename=\"\(name)\"",
                                               .cacheControl: "no-store"], body: body)
    }

    /// An export still streaming at `EXPORT_MAX_SECONDS`.
    struct DeadlinePassed: Error, CustomStringConvertible {
        let limit: Duration
        var description: String { "the export ran longer than EXPORT_MAX_SECONDS (\(limit.components.seconds) s)" }
    }

    /// `20250301T000000Z` for file names.
    static func fileStamp(_ date: Date?) -> String? {
        date.map { RFC3339Timestamp.format($0).replacingOccurrences(of: "-", with: "").replacingOccurrences(of: ":", with: "")
            .replacingOccurrences(of: ".000", with: "") }
    }
}
