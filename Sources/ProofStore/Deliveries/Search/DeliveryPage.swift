/// One page of deliveries; `nextSeq` is set when more may follow.
public struct DeliveryPage: Sendable, Equatable {
    /// The deliveries, newest first.
    public var deliveries: [Delivery]
    /// The `seq` to continue after, or `nil` on the last page.
    public var nextSeq: Int64?

    /// Creates a page.
    public init(deliveries: [Delivery], nextSeq: Int64?) {
        self.deliveries = deliveries
        self.nextSeq = nextSeq
    }
}
