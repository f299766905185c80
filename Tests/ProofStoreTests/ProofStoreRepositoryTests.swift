import Foundation
import Postgres
import ProofStore
import Testing
import TestSupport

@Suite("Geography")
struct GeoPointTests {
    @Test("longitudes normalise to [-180, 180)")
    func normalise() {
        #expect(GeoPoint.normalizedLongitude(180) == -180)
        #expect(GeoPoint.normalizedLongitude(190) == -170)
        #expect(GeoPoint.normalizedLongitude(-190) == 170)
        #expect(GeoPoint.normalizedLongitude(540) == -180)
        #expect(GeoPoint.normalizedLongitude(13.4) == 13.4)
    }

    @Test("haversine distances, including across the antimeridian")
    func haversine() {
        let berlin = GeoPoint(lat: 52.5200, lon: 13.4050), paris = GeoPoint(lat: 48.8566, lon: 2.3522)
        #expect(abs(berlin.distance(to: paris) - 877_500) < 2_000)
        let east = GeoPoint(lat: 0, lon: 179.9), west = GeoPoint(lat: 0, lon: -179.9)
        #expect(abs(east.distance(to: west) - 22_239) < 50)
    }
}

@Suite("Stores", .needsDatabase)
struct ProofStoreRepositoryTests {
    @Test("API keys: the token is returned once, only its SHA-256 is stored, revoked keys stop authenticating")
    func apiKeys() async throws {
        try await ScratchDatabase.with(prefix: "keys") { _, database in
            let keys = APIKeyRepository(database: database)
            let (key, token) = try await keys.create(name: "van 12", role: .courier)
            #expect(token.hasPrefix("cs_") && token.count == 46)
            let stored = try await database.query("SELECT token_sha256 FROM api_keys WHERE id = $1", [key.id]).decode([UInt8].self, row: 0, column: 0)
            #expect(stored == APIKeyRepository.hash(token))
            #expect(try await keys.authenticate(token: token) == key.actor)
            #expect(try await keys.authenticate(token: token + "x") == nil)
            #expect(try await keys.revoke(id: key.id))
            #expect(try await keys.authenticate(token: token) == nil)
            #expect(try await keys.revoke(id: UUID()) == false)
            #expect(try await keys.list().map(\.id) == [key.id])
            await #expect(throws: APIKeyError.self) { try await keys.create(name: "  ", role: .admin) }
        }
    }

    @Test("idempotency: claim, in flight, mismatch, abandoned claims are taken over")
    func idempotency() async throws {
        try await ScratchDatabase.with(prefix: "idem") { _, database in
            let (key, _) = try await APIKeyRepository(database: database).create(name: "k", role: .courier)
            // Two views of the same table, so the test does not depend on how fast the machine is:
            // one that never considers a claim abandoned, one that considers every older claim abandoned.
            let store = IdempotencyRepository(database: database, abandonAfter: .seconds(3600))
            let impatient = IdempotencyRepository(database: database, abandonAfter: .zero)
            let a = [UInt8](repeating: 1, count: 32), b = [UInt8](repeating: 2, count: 32)
            #expect(try await store.claim(apiKeyID: key.id, key: "x", requestSHA256: a) == .claimed)
            #expect(try await store.claim(apiKeyID: key.id, key: "x", requestSHA256: a) == .inFlight)
            #expect(try await store.claim(apiKeyID: key.id, key: "x", requestSHA256: b) == .mismatch)
            #expect(try await impatient.claim(apiKeyID: key.id, key: "x", requestSHA256: a) == .claimed)
            #expect(try await store.claim(apiKeyID: key.id, key: "x", requestSHA256: a) == .inFlight)
            try await store.release(apiKeyID: key.id, key: "x")
            store.finished(apiKeyID: key.id, key: "x")
            #expect(try await store.claim(apiKeyID: key.id, key: "x", requestSHA256: b) == .claimed)
        }
    }

    @Test("idempotency: a claim whose release was lost is taken over at once by its own process, not by another")
    func lostRelease() async throws {
        try await ScratchDatabase.with(prefix: "idem") { _, database in
            let (key, _) = try await APIKeyRepository(database: database).create(name: "k", role: .courier)
            let process = IdempotencyRepository(database: database, abandonAfter: .seconds(3600))
            let other = IdempotencyRepository(database: database, abandonAfter: .seconds(3600))
            let body = [UInt8](repeating: 7, count: 32)
            #expect(try await process.claim(apiKeyID: key.id, key: "k1", requestSHA256: body) == .claimed)
            // While the request runs, a repeat here or elsewhere is in flight.
            #expect(try await process.claim(apiKeyID: key.id, key: "k1", requestSHA256: body) == .inFlight)
            #expect(try await other.claim(apiKeyID: key.id, key: "k1", requestSHA256: body) == .inFlight)
            // The request ends without its release reaching the database (an outage): the row stays in_flight.
            process.finished(apiKeyID: key.id, key: "k1")
            #expect(try await other.claim(apiKeyID: key.id, key: "k1", requestSHA256: body) == .inFlight)
            #expect(try await process.claim(apiKeyID: key.id, key: "k1", requestSHA256: body) == .claimed)
            let owner = try await database.query("SELECT owner FROM idempotency_records WHERE idempotency_key = 'k1'")
                .decode(UUID.self, row: 0, column: 0)
            #expect(owner == process.owner)
        }
    }

    @Test("deliveries: same content is existing, other content a conflict")
    func deliveries() async throws {
        try await ScratchDatabase.with(prefix: "deliv") { _, database in
            let store = DeliveryRepository(database: database, dataKeys: TestDataKeys.provider)
            let draft = NewDelivery(reference: "A-1", recipientName: "R", address: "X", destination: GeoPoint(lat: 1, lon: 181))
            guard case .created(let created) = try await store.create(draft, by: nil) else { Issue.record("not created"); return }
            #expect(created.destination?.lon == -179)
            guard case .existing = try await store.create(draft, by: nil) else { Issue.record("not existing"); return }
            var other = draft
            other.address = "Y"
            guard case .conflict = try await store.create(other, by: nil) else { Issue.record("not a conflict"); return }
        }
    }
}
