import HummingbirdTesting
import ProofService
import Testing
import TestSupport
@testable import ProofAPI

@Suite("Export slots")
struct ExportSlotsTests {
    @Test("at most `limit` exports at once; a slot is given back when its holder goes")
    func bounded() {
        let slots = ExportSlots(limit: 2)
        var first: ExportSlots.Slot? = slots.acquire()
        let second = slots.acquire()
        #expect(first != nil && second != nil)
        #expect(slots.acquire() == nil, "a third export is refused")
        #expect(slots.inUse == 2)
        first = nil
        #expect(slots.inUse == 1)
        let third = slots.acquire()
        #expect(third != nil, "the freed slot can be taken again")
        #expect(slots.acquire() == nil)
        _ = (second, third)
    }

    @Test("a limit below one still allows one export")
    func atLeastOne() {
        let slots = ExportSlots(limit: 0)
        let only = slots.acquire()
        #expect(only != nil)
        #expect(slots.acquire() == nil)
        _ = only
    }
}

@Suite("Export slots over HTTP", .enabled(if: ScratchDatabase.isAvailable, Comment(rawValue: ScratchDatabase.unavailableReason)))
struct ExportSlotsHTTPTests {
    @Test("a finished export gives its slot back: sequential exports with a limit of one all succeed")
    func slotsAreReturned() async throws {
        try await APITestHarness.with { harness in
            var policy = APIPolicy()
            policy.maxConcurrentExports = 1
            try await harness.application(policy: policy).test(.router) { client in
                _ = try await harness.createDeliveryWithProof(client)
                for format in ["zip", "ndjson", "csv", "zip"] {
                    let response = try await client.execute(uri: "/v1/exports/proofs?format=\(format)", method: .get,
                                                            headers: harness.headers(.auditor))
                    #expect(response.status == .ok, "\(format)")
                    #expect(!response.bytes.isEmpty)
                }
            }
        }
    }
}
