/// Why `countersign migrate` could not set up the runtime role.
public enum RuntimeRoleError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The name is not a plain lower-case identifier.
    case invalidName(String)
    /// The role does not exist and no password was given to create it with.
    case missing(String)
    /// The role is the one migrating: the service would own every table.
    case isOwner(String)
    /// The role is a superuser, or may create roles (and so make itself a member of the owner).
    case privileged(String)
    /// A GRANT or REVOKE failed.
    case failed(String)
    /// The role may still create temporary tables after the REVOKE (migrate is not the database's owner).
    case temporaryTables(String)

    public var description: String {
        switch self {
        case .invalidName(let name):
            return "runtime role name \(name.debugDescription) must be 1 to 63 of a-z, 0-9 and _, not starting with a digit"
        case .missing(let name):
            return "runtime role \(name) does not exist: create it (CREATE ROLE \(name) LOGIN PASSWORD …) or give RUNTIME_ROLE_PASSWORD so migrate creates it"
        case .isOwner(let name):
            return "runtime role \(name) is the role migrate connects as: give migrate the owner's URL (MIGRATION_DATABASE_URL) "
                + "and serve the runtime role's (DATABASE_URL), two different roles"
        case .privileged(let name):
            return "runtime role \(name) is a superuser or has CREATEROLE: give the service a plain LOGIN role"
        case .temporaryTables(let name):
            return "runtime role \(name) may still create temporary tables, which definer functions could be tricked into reading: "
                + "run migrate as the database's owner, or have the owner run REVOKE TEMPORARY ON DATABASE … FROM PUBLIC, \(name)"
        case .failed(let message):
            return "granting the runtime role its privileges failed: \(message)"
        }
    }
}
