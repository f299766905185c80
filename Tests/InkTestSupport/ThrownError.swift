import Testing

/// Runs `body` and returns the `E` it threw, or `nil` when it did not throw; any other error is
/// recorded as an issue of the running test (and gives `nil`).
public func thrownError<E: Error, T>(_ type: E.Type, _ body: () throws -> T) -> E? {
    do {
        _ = try body()
        return nil
    } catch let error as E {
        return error
    } catch {
        Issue.record("unexpected error, not \(E.self): \(error)")
        return nil
    }
}
