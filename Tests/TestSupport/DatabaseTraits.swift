import Testing

extension Trait where Self == ConditionTrait {
    /// A test or suite that needs the PostgreSQL `make test` starts (`TEST_DATABASE_URL`): without
    /// it the test is skipped, saying why, so `swift test` alone runs every test that needs none.
    public static var needsDatabase: Self {
        .enabled(if: ScratchDatabase.isAvailable, Comment(rawValue: ScratchDatabase.unavailableReason))
    }

    /// ``needsDatabase`` with the two roles of production: the runtime role (`TEST_DATABASE_URL`)
    /// and the owner (`TEST_DATABASE_OWNER_URL`), as `make test` sets them.
    public static var needsTwoRoles: Self {
        .enabled(if: ScratchDatabase.isAvailable && ScratchDatabase.baseOwnerURL != ScratchDatabase.baseURL,
                 "needs `make test` (TEST_DATABASE_URL as the runtime role, TEST_DATABASE_OWNER_URL)")
    }
}
