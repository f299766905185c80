import Postgres

/// What `countersign serve` checks about the role it connected as before it serves: a role that
/// could rewrite or remove evidence (a superuser, an owner, a holder of table-wide UPDATE, DELETE,
/// TRUNCATE or TRIGGER on an evidence table, anyone who may create in schema `public`, create
/// temporary tables or create roles) makes the append-only promises of docs/audit.md untrue, so serve refuses it.
public struct DatabaseRoleCheck: Sendable {
    /// The role the connection runs as (`current_user`).
    public var role: String
    /// Each way it could change evidence, as a short phrase; empty when it is a proper runtime role.
    public var problems: [String]

    /// True when the role can change evidence.
    public var isPrivileged: Bool { !problems.isEmpty }

    /// Asks the database about the role `database` connects as.
    public static func run(on database: PostgresClient) async throws -> DatabaseRoleCheck {
        let tables = RuntimeRolePrivileges.evidenceTables.joined(separator: ",")
        // Ownership counts through membership (the member may SET ROLE to the owner); the table
        // privileges are the table-wide ones (column UPDATE grants are what the list hands out),
        // named only for tables the role does not own anyway.
        let row = try await database.query("""
            WITH evidence AS (
                SELECT t.name, to_regclass('public.' || t.name) AS oid FROM unnest(string_to_array(\(tables), ',')) t(name)
            )
            SELECT current_user::text AS role, r.rolsuper AS superuser, r.rolcreaterole AS createrole,
                has_schema_privilege('public', 'CREATE') AS creates,
                has_database_privilege(current_database(), 'TEMPORARY') AS temporary,
                coalesce((SELECT string_agg(e.name, ', ' ORDER BY e.name) FROM evidence e JOIN pg_class c ON c.oid = e.oid
                          WHERE pg_has_role(current_user, c.relowner, 'MEMBER')), '') AS owned,
                coalesce((SELECT string_agg(p.privilege || ' on ' || e.name, ', ' ORDER BY e.name, p.privilege)
                          FROM evidence e JOIN pg_class c ON c.oid = e.oid
                          CROSS JOIN unnest(ARRAY['UPDATE', 'DELETE', 'TRUNCATE', 'TRIGGER']) p(privilege)
                          WHERE NOT pg_has_role(current_user, c.relowner, 'MEMBER') AND has_table_privilege(e.oid, p.privilege)), '') AS writable
            FROM pg_roles r WHERE r.rolname = current_user
            """).rows[0]
        let role = try row.decode(String.self, "role")
        // A superuser may do anything: that says it all.
        if try row.decode(Bool.self, "superuser") { return DatabaseRoleCheck(role: role, problems: ["it is a superuser"]) }
        var problems: [String] = []
        if try row.decode(Bool.self, "createrole") { problems.append("it has CREATEROLE") }
        let owned = try row.decode(String.self, "owned")
        if !owned.isEmpty { problems.append("it owns \(owned)") }
        let writable = try row.decode(String.self, "writable")
        if !writable.isEmpty { problems.append("it holds \(writable)") }
        if try row.decode(Bool.self, "creates") { problems.append("it may CREATE in schema public") }
        // A temporary table named like one of ours, with a trigger of its own, is found first by
        // a statement that does not put pg_temp last (migration 0023).
        if try row.decode(Bool.self, "temporary") { problems.append(Self.temporaryTables) }
        return DatabaseRoleCheck(role: role, problems: problems)
    }

    /// The problem of a role that may create temporary tables (`countersign migrate` revokes it).
    public static let temporaryTables = "it may create temporary tables (TEMPORARY on the database)"

    /// The one log line that names the problem and the fix.
    public var refusal: String {
        "database role \(role) could rewrite or remove evidence (\(problems.joined(separator: "; "))): serve as the runtime role "
            + "that `countersign migrate` grants (RUNTIME_ROLE, default \(RuntimeRole.defaultName); migrate itself connects as the owner "
            + "through MIGRATION_DATABASE_URL), or set ALLOW_PRIVILEGED_DATABASE_ROLE=true for development only"
    }
}
