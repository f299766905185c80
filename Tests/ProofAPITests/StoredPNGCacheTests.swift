import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import ProofService
import ProofStore
import Testing
import TestSupport
@testable import ProofAPI

@Suite("Stored PNG cache")
struct StoredPNGCacheTests {
    static func entry(_ fill: UInt8, size: Int) -> StoredPNGCache.Entry {
        .init(sha256: [UInt8](repeating: fill, count: 32), bytes: [UInt8](repeating: fill, count: size))
    }

    @Test("serves what it was given and counts its bytes")
    func remembers() {
        let cache = StoredPNGCache(byteLimit: 1000)
        #expect(cache.entry(for: "A") == nil)
        cache.remember(Self.entry(1, size: 100), for: "A")
        cache.remember(Self.entry(2, size: 150), for: "B")
        #expect(cache.entry(for: "A")?.bytes == [UInt8](repeating: 1, count: 100))
        #expect(cache.entry(for: "B")?.sha256 == [UInt8](repeating: 2, count: 32))
        #expect(cache.storedBytes == 250)
        cache.remember(Self.entry(3, size: 120), for: "A")
        #expect(cache.storedBytes == 270, "replacing an entry releases the old bytes")
    }

    @Test("stays within its byte limit and drops the least recently used first")
    func evictsLeastRecentlyUsed() {
        let cache = StoredPNGCache(byteLimit: 1000)
        for index in 0..<4 { cache.remember(Self.entry(UInt8(index), size: 200), for: "R\(index)") }
        _ = cache.entry(for: "R0")  // R0 is now the most recently used
        cache.remember(Self.entry(9, size: 200), for: "R4")  // 1,000 bytes: still fits
        #expect(cache.storedBytes == 1000)
        cache.remember(Self.entry(10, size: 200), for: "R5")  // over the limit: drop down to 750
        #expect(cache.storedBytes <= 750)
        #expect(cache.entry(for: "R0") != nil, "recently used survives")
        #expect(cache.entry(for: "R5") != nil, "the newest survives")
        #expect(cache.entry(for: "R1") == nil, "the least recently used goes first")
    }

    @Test("a zero limit turns it off; an image over a quarter of the limit is not kept")
    func limits() {
        let off = StoredPNGCache(byteLimit: 0)
        off.remember(Self.entry(1, size: 10), for: "A")
        #expect(off.entry(for: "A") == nil)
        #expect(off.count == 0)
        let small = StoredPNGCache(byteLimit: 1000)
        small.remember(Self.entry(1, size: 251), for: "big")
        #expect(small.entry(for: "big") == nil)
        small.remember(Self.entry(1, size: 250), for: "fits")
        #expect(small.entry(for: "fits") != nil)
    }

    @Test("entries expire")
    func expires() async throws {
        let cache = StoredPNGCache(byteLimit: 1000, timeToLive: .milliseconds(20))
        cache.remember(Self.entry(1, size: 10), for: "A")
        #expect(cache.entry(for: "A") != nil)
        try await Task.sleep(for: .milliseconds(60))
        #expect(cache.entry(for: "A") == nil)
        #expect(cache.storedBytes == 0, "an expired entry releases its bytes")
    }

    @Test("PNG_CACHE_MB and the other API tunables are validated")
    func environment() throws {
        #expect(try APIPolicy.parse(["PNG_CACHE_MB": "0"]).pngCacheBytes == 0)
        #expect(try APIPolicy.parse(["PNG_CACHE_MB": "64"]).pngCacheBytes == 64 << 20)
        #expect(try APIPolicy.parse([:]).pngCacheBytes == 32 << 20)
        for (name, value) in [("PNG_CACHE_MB", "-1"), ("PNG_CACHE_MB", "1.5"), ("PNG_CACHE_MB", "lots"), ("GEOFENCE_RADIUS_M", "0"),
                              ("GEOFENCE_RADIUS_M", "nan"), ("AUTH_CACHE_SECONDS", "301"), ("RATE_LIMIT_PER_SECOND", "-2"),
                              ("RATE_LIMIT_BURST", "0.5")] {
            #expect(throws: ConfigurationError.self, "\(name)=\(value)") { try APIPolicy.parse([name: value]) }
            #expect(throws: ConfigurationError.self, "serve refuses \(name)=\(value)") {
                try ServiceConfiguration.fromEnvironment([name: value])
            }
        }
        #expect(try APIPolicy.parse(["GEOFENCE_RADIUS_M": "350"]).geofenceRadiusMeters == 350)
    }
}

@Suite("Stored PNG cache over HTTP", .needsDatabase)
struct StoredPNGCacheHTTPTests {
    @Test("a cached fetch still checks the key and role, answers If-None-Match and appends its audit event")
    func cachedFetchStillAuthorisesAndAudits() async throws {
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                let (reference, upload) = try await harness.createDeliveryWithProof(client)
                #expect(upload.status == .created)
                let sha = try #require(upload.json["png_sha256"] as? String)
                let uri = "/v1/deliveries/\(reference)/proof/signature.png"
                var bodies: [[UInt8]] = []
                for _ in 0..<3 {
                    let response = try await client.execute(uri: uri, method: .get, headers: harness.headers(.dispatcher))
                    #expect(response.status == .ok)
                    #expect(response.headers[.eTag] == "\"\(sha)\"")
                    bodies.append(response.bytes)
                }
                #expect(Set(bodies).count == 1, "the cached bytes are the stored bytes")
                let notModified = try await client.execute(uri: uri, method: .get,
                                                           headers: harness.headers(.auditor, [.ifNoneMatch: "\"\(sha)\""]))
                #expect(notModified.status == .notModified)
                #expect(notModified.bytes.isEmpty)

                // The cache holds bytes, not permissions.
                #expect(try await client.execute(uri: uri, method: .get, headers: harness.headers(nil)).status == .unauthorized)
                #expect(try await client.execute(uri: uri, method: .get,
                                                 headers: [.authorization: "Bearer cs_not_a_key"]).status == .unauthorized)
                let otherCourier = try await APIKeyRepository(database: harness.database).create(name: "other courier", role: .courier).1
                #expect(try await client.execute(uri: uri, method: .get,
                                                 headers: [.authorization: "Bearer \(otherCourier)"]).status == .forbidden)
                #expect(try await client.execute(uri: uri, method: .get, headers: harness.headers(.courier)).status == .ok,
                        "the uploading courier may read its own image")

                let reads = try await harness.database.query(
                    "SELECT count(*) FROM audit_events WHERE action = 'proof_png_read' AND subject = $1", ["delivery:\(reference)"])
                #expect(try reads.decode(Int.self, row: 0, column: 0) == 5, "every successful fetch, cached or not, is audited")
            }
        }
    }
}
