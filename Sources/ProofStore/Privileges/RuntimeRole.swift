import Postgres

/// The role `countersign serve` connects as: it owns nothing and may do only what
/// ``RuntimeRolePrivileges`` lists. `countersign migrate`, connected as the owner, calls
/// ``apply(on:)`` after every migration, so the grants always match the schema of this build.
public struct RuntimeRole: Sendable {
    /// `countersign_app`: the name `migrate` and `scripts/pg.sh` use unless told otherwise.
    public static let defaultName = "countersign_app"

    /// The role name (a plain identifier, so it is never quoted differently in two places).
    public let name: String
    /// Creates the role with LOGIN, or sets its password, when given; `nil` leaves an existing
    /// (operator-managed) role's login alone. Never logged.
    let password: String?

    /// What ``apply(on:)`` did to the role itself.
    public enum Outcome: Sendable, Equatable {
        /// It did not exist; it was created with LOGIN and the password.
        case created
        /// It existed; its password was set.
        case passwordSet
        /// It existed and was left as it was (only its grants were renewed).
        case existing
    }

    /// A runtime role named `name`, refused unless it is a plain identifier.
    public init(name: String = RuntimeRole.defaultName, password: String? = nil) throws {
        let allowed = name.utf8.allSatisfy { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || $0 == UInt8(ascii: "_")
                                             || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
        guard allowed, (1...63).contains(name.utf8.count), !(name.first?.isNumber ?? true) else { throw RuntimeRoleError.invalidName(name) }
        self.name = name
        self.password = password.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Creates the role if needed and renews its grants, in one transaction under the migration
    /// lock (two migrators never interleave their REVOKEs and GRANTs). Every privilege it had on
    /// schema `public` is revoked first, so a grant removed from the list is removed from the database.
    @discardableResult
    public func apply(on database: PostgresClient) async throws -> Outcome {
        try await database.withTransaction { session in
            try await session.execute("SELECT pg_advisory_xact_lock(\(MigrationRunner.advisoryLockKey))")
            let outcome = try await ensureRole(session)
            let databaseName = try await session.query("SELECT quote_ident(current_database()) AS name").decode(String.self, row: 0, column: "name")
            do {
                try await session.executeScript(Self.grantScript(role: name, database: databaseName))
            } catch let error as PostgresError {
                throw RuntimeRoleError.failed(error.description)
            }
            // REVOKE by a role that is not the database's owner only warns: check that it took.
            let temporary = try await session.query("SELECT has_database_privilege(\(name), current_database(), 'TEMPORARY') AS held")
                .decode(Bool.self, row: 0, column: "held")
            if temporary { throw RuntimeRoleError.temporaryTables(name) }
            return outcome
        }
    }

    private func ensureRole(_ session: PostgresSession) async throws -> Outcome {
        let found = try await session.query("""
            SELECT rolsuper OR rolcreaterole AS privileged, rolname = current_user AS migrating FROM pg_roles WHERE rolname = \(name)
            """)
        if let row = found.first {
            guard try !row.decode(Bool.self, "migrating") else { throw RuntimeRoleError.isOwner(name) }
            guard try !row.decode(Bool.self, "privileged") else { throw RuntimeRoleError.privileged(name) }
        } else if password == nil {
            throw RuntimeRoleError.missing(name)
        }
        guard let password else { return .existing }
        // The server quotes the password (a bound value, never spliced into SQL text by us); the
        // statement goes by the simple protocol and is never logged here.
        let literal = try await session.query("SELECT quote_literal(\(password)::text) AS quoted").decode(String.self, row: 0, column: "quoted")
        let verb = found.first == nil ? "CREATE" : "ALTER"
        do {
            try await session.executeScript("\(verb) ROLE \(name) LOGIN PASSWORD \(literal)")
        } catch let error as PostgresError {
            throw RuntimeRoleError.failed("\(verb) ROLE \(name): \(error.message)")
        }
        return found.first == nil ? .created : .passwordSet
    }

    /// The database-wide part of the grants: CONNECT, and no TEMPORARY for anyone but the owner.
    /// A temporary table is found before `public`'s tables by any statement that does not name
    /// pg_temp last, so a role that may create one can put its own `deliveries` (with a trigger of
    /// its own) in front of a function that runs as the owner (migration 0023). Database ACLs are
    /// not copied by `CREATE DATABASE … TEMPLATE`: a copy needs these statements again.
    public static func databaseGrants(role: String, database: String) -> [String] {
        ["GRANT CONNECT ON DATABASE \(database) TO \(role);",
         "REVOKE TEMPORARY ON DATABASE \(database) FROM PUBLIC, \(role);"]
    }

    /// The statements that renew `role`'s privileges: none on the schemas beyond USAGE, none on any
    /// table, sequence or function of `public`, then exactly the listed ones.
    static func grantScript(role: String, database: String) -> String {
        var lines = databaseGrants(role: role, database: database) + [
            "GRANT USAGE ON SCHEMA public TO \(role);",
            // The contrib extensions' functions and operators (pg_trgm, cube: pure computations)
            // live in their own schema (migrations 0016, 0019); searches name cube's.
            "GRANT USAGE ON SCHEMA extensions TO \(role);",
            // Before PostgreSQL 15 every role could create in public: nobody but the owner may.
            "REVOKE CREATE ON SCHEMA public FROM PUBLIC, \(role);",
            "REVOKE ALL ON ALL TABLES IN SCHEMA public FROM \(role);",
            "REVOKE ALL ON ALL SEQUENCES IN SCHEMA public FROM \(role);",
            // New functions are executable by PUBLIC; ours only by whom the list names.
            "REVOKE ALL ON ALL FUNCTIONS IN SCHEMA public FROM PUBLIC, \(role);",
        ]
        for decision in RuntimeRolePrivileges.decisions where !decision.privileges.isEmpty {
            lines.append("GRANT \(decision.privileges.joined(separator: ", ")) ON \(decision.kind.rawValue) public.\(decision.name) TO \(role);")
        }
        return lines.joined(separator: "\n")
    }
}
