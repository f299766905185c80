/// One event to append: what happened, to what, and who did it.
struct AuditEntry: Sendable {
    var action: AuditAction
    var subject: String
    var details: [String: String]
    var origin: AuditOrigin
}
