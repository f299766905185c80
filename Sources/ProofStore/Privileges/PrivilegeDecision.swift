/// What the runtime role may do with one table, sequence or function of schema `public`.
///
/// Every such object has exactly one decision in ``RuntimeRolePrivileges/decisions``, even when
/// the decision is "nothing" (``ownerOnly(_:_:why:)``): the privilege tests fail for an object
/// without one, so a table added by a migration cannot be forgotten (or silently left open).
public struct PrivilegeDecision: Sendable, Equatable {
    /// The kind of object, as `GRANT … ON <kind>` names it.
    public enum Kind: String, Sendable, Equatable {
        case table = "TABLE"
        case sequence = "SEQUENCE"
        case function = "FUNCTION"
    }

    /// Table or sequence.
    public var kind: Kind
    /// The name in `public`; for a function its signature as `regprocedure` prints it, e.g.
    /// `countersign_revoke_api_key(uuid)`.
    public var name: String
    /// The privileges granted, as `GRANT` spells them (`SELECT`, `UPDATE (status, delivered_at)`,
    /// `USAGE`, `EXECUTE`); empty for an object the runtime role does not touch.
    public var privileges: [String]
    /// Which code needs it, or why the role goes without.
    public var why: String

    /// A table the runtime role reads or writes as `privileges` say.
    public static func table(_ name: String, _ privileges: String..., why: String) -> PrivilegeDecision {
        PrivilegeDecision(kind: .table, name: name, privileges: privileges, why: why)
    }

    /// A sequence the runtime role draws numbers from (`USAGE`: `nextval`).
    public static func sequence(_ name: String, why: String) -> PrivilegeDecision {
        PrivilegeDecision(kind: .sequence, name: name, privileges: ["USAGE"], why: why)
    }

    /// A function the runtime role calls (`EXECUTE`).
    public static func function(_ signature: String, why: String) -> PrivilegeDecision {
        PrivilegeDecision(kind: .function, name: signature, privileges: ["EXECUTE"], why: why)
    }

    /// An object only the owner uses: the runtime role gets nothing on it.
    public static func ownerOnly(_ kind: Kind, _ name: String, why: String) -> PrivilegeDecision {
        PrivilegeDecision(kind: kind, name: name, privileges: [], why: why)
    }
}
