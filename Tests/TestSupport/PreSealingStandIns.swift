import Postgres
import ProofStore

/// For tests that write data through today's repositories into a database migrated only part of
/// the way (before 0025, sealed proofs, and 0026, erasure): stand-ins for the table and columns the
/// repositories write and read,
/// created before and dropped before the real migrations run; ``unseal(_:in:)`` then puts a proof's
/// bytes back in clear, as a proof stored before 0025 holds them. The data keys the repositories
/// stored are kept aside (today's events commit under their salts) and put back by
/// ``restoreKeys(in:)`` once the migrations have made the real table.
public enum PreSealingStandIns {
    /// Creates `delivery_data_keys`, `proofs.sealing` and `deliveries.erased_at` as the repositories expect them.
    public static let create = """
        CREATE TABLE delivery_data_keys (delivery_id uuid PRIMARY KEY, kek_id text NOT NULL, wrapped_key bytea NOT NULL);
        ALTER TABLE proofs ADD COLUMN sealing smallint NOT NULL DEFAULT 0;
        ALTER TABLE deliveries ADD COLUMN erased_at timestamptz;
        """

    /// Drops them again, keeping the data keys aside.
    public static let drop = """
        ALTER TABLE delivery_data_keys RENAME TO pre_sealing_data_keys;
        ALTER TABLE proofs DROP COLUMN sealing;
        ALTER TABLE deliveries DROP COLUMN erased_at;
        """

    /// Drops the stand-ins and writes `proof`'s body, ink and PNG back in clear (the proofs table's
    /// change-refusing triggers off for that; the test's database role owns the tables).
    public static func unseal(_ proof: NewProof, in database: PostgresClient) async throws {
        try await database.withConnection { session in
            try await session.executeScript("ALTER TABLE proofs DISABLE TRIGGER USER")
            try await session.query("""
                UPDATE proofs SET body = \(PostgresBytes(proof.body.bytes)), ink = \(PostgresBytes(proof.rendering.ink)),
                    png = \(PostgresBytes(proof.rendering.png))
                WHERE id = \(proof.id)
                """)
            try await session.executeScript("ALTER TABLE proofs ENABLE TRIGGER USER")
            try await session.executeScript(drop)
        }
    }

    /// Puts the data keys kept aside by ``drop`` into the table migration 0025 made.
    public static func restoreKeys(in database: PostgresClient) async throws {
        try await database.withConnection { session in
            try await session.executeScript("""
                INSERT INTO delivery_data_keys (delivery_id, kek_id, wrapped_key) SELECT delivery_id, kek_id, wrapped_key FROM pre_sealing_data_keys;
                DROP TABLE pre_sealing_data_keys;
                """)
        }
    }
}
