/// One page of stored checkpoints with what their witnesses answered, oldest first.
public struct WitnessedCheckpointPage: Sendable, Equatable {
    /// One stored checkpoint and its receipts (in the order they were recorded).
    public struct Item: Sendable, Equatable {
        public var stored: StoredCheckpoint
        public var receipts: [WitnessReceipt]

        public init(stored: StoredCheckpoint, receipts: [WitnessReceipt]) {
            self.stored = stored
            self.receipts = receipts
        }
    }

    public var items: [Item]
    /// The id to pass as `afterID` for the next page; `nil` on the last page.
    public var nextID: Int64?

    public init(items: [Item], nextID: Int64?) {
        self.items = items
        self.nextID = nextID
    }
}
