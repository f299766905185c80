// swift-tools-version:6.2
// Countersign: a self-hosted proof-of-delivery service.
import PackageDescription

let strict: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "countersign",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "countersign", targets: ["countersign"]),
        // The courier apps' SDK: capture, upload, the offline queue (docs/courier-guide.md).
        .library(name: "CountersignClient", targets: ["CountersignClient"]),
    ],
    dependencies: [
        // ConfigurationSupport (swift-configuration) is not used: leaving it out shortens cold builds.
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1", traits: ["FullFoundation"]),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        // NIOHTTPTypes: the HTTP parts a connection handler of ours sees in Hummingbird's pipeline.
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        // /metrics: swift-metrics' API with the Prometheus exposition (both small; swift-metrics already comes with Hummingbird).
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        // Outgoing HTTP: webhook events, checkpoint witnesses and the RFC 3161 timestamp authority, and the SDK
        // transport benchmark's peer (already in the graph through HummingbirdTesting).
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        // The SDK's device key (Ed25519) on Linux: CryptoKit's API (Apple platforms use CryptoKit itself). Already in the
        // graph through async-http-client, which resolves it to 4.x; the server keeps libcrypto (decision 0005).
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
    ],
    targets: [
        // MARK: Signature engine (pure Swift, no I/O)
        .target(name: "SignatureKit", swiftSettings: strict),
        .target(name: "Raster", swiftSettings: strict),

        // MARK: PNG through libpng
        .systemLibrary(
            name: "CLibPNG",
            pkgConfig: "libpng",
            providers: [.apt(["libpng-dev"])]
        ),
        .target(name: "PNGShim", dependencies: ["CLibPNG"]),
        .target(name: "PNG", dependencies: ["CLibPNG", "PNGShim"], swiftSettings: strict),

        // MARK: What the C allocator holds (glibc mallinfo2), for /metrics
        .target(name: "CMallocStatistics"),

        // MARK: Signature -> pixels/SVG glue (the only module that imports Raster and PNG)
        .target(name: "SignatureRender", dependencies: ["SignatureKit", "Raster", "PNG"], swiftSettings: strict),

        // MARK: Benchmarks (not shipped): `swift build -c release --product linearity-bench`
        .executableTarget(
            name: "linearity-bench",
            dependencies: ["ProofService", "SignatureKit", "Archive"],
            path: "Benchmarks/LinearityBench",
            swiftSettings: strict
        ),
        // MARK: Benchmarks (not shipped): `swift build -c release --product render-bench`
        .executableTarget(
            name: "render-bench",
            dependencies: [
                "SignatureKit", "SignatureRender",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Benchmarks/RenderBench",
            swiftSettings: strict
        ),

        // MARK: PostgreSQL through libpq
        .systemLibrary(
            name: "CLibPQ",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"])]
        ),
        .target(
            name: "Postgres",
            dependencies: [
                "CLibPQ",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),

        // MARK: gzip and ZIP through zlib
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        // MARK: whole-buffer DEFLATE and CRC-32 of ZIP entries through libdeflate
        .systemLibrary(
            name: "CLibDeflate",
            pkgConfig: "libdeflate",
            providers: [.apt(["libdeflate-dev"])]
        ),
        .target(name: "Archive", dependencies: ["CZlib", "CLibDeflate"], swiftSettings: strict),

        // MARK: Hashing through OpenSSL's libcrypto (libpq already loads it)
        .systemLibrary(
            name: "CLibCrypto",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        .target(name: "Cryptography", dependencies: ["CLibCrypto"], swiftSettings: strict),

        // MARK: Threads of our own for calls that wait (DNS, child processes, small file writes)
        .target(name: "Execution", dependencies: [.product(name: "NIOPosix", package: "swift-nio")], swiftSettings: strict),

        // MARK: Service
        .target(
            name: "ProofStore",
            dependencies: [
                "Postgres",
                "Cryptography",
                "Execution",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // Outgoing webhooks: the sender (a background service), signatures, the SSRF guard.
        .target(
            name: "Webhooks",
            dependencies: [
                "ProofStore", "Postgres", "Cryptography", "Execution",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        // Use cases between HTTP and storage: intake, reads, exports, verification, configuration.
        .target(
            name: "ProofService",
            dependencies: [
                "ProofStore", "Postgres", "SignatureKit", "SignatureRender", "Archive", "Cryptography", "Webhooks", "Execution",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        // HTTP only: routes, middleware, request/response mapping, problem+json.
        .target(
            name: "ProofAPI",
            dependencies: [
                "ProofService", "ProofStore", "Postgres", "SignatureKit", "SignatureRender", "Archive",
                "Cryptography", "CMallocStatistics",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "countersign",
            dependencies: [
                "ProofAPI", "ProofService", "ProofStore", "Postgres", "SignatureKit", "SignatureRender", "Webhooks",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            swiftSettings: strict
        ),

        // MARK: Benchmarks (not shipped): `swift build -c release --product sdk-transport-bench`
        .executableTarget(
            name: "sdk-transport-bench",
            dependencies: [
                "CountersignClient", "SignatureKit",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Benchmarks/SDKTransportBench",
            swiftSettings: strict
        ),

        // MARK: Courier SDK (Foundation + SignatureKit + zlib, and Crypto off Apple platforms; never a server module)
        .target(name: "CountersignClient", dependencies: [
            "SignatureKit", "CZlib",
            .product(name: "Crypto", package: "swift-crypto", condition: .when(platforms: [.linux, .android, .windows])),
        ], swiftSettings: strict),
        .executableTarget(
            name: "courier-cli",
            dependencies: [
                "CountersignClient", "SignatureKit",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Examples/courier-cli",
            swiftSettings: strict
        ),

        // MARK: Tests
        // Runs the built `countersign` binary as a live server for the SDK's end-to-end tests.
        .testTarget(name: "CountersignClientTests", dependencies: [
            "CountersignClient", "SignatureKit", "InkTestSupport", "TestSupport", "CZlib",
            .product(name: "Crypto", package: "swift-crypto", condition: .when(platforms: [.linux, .android, .windows])),
        ], swiftSettings: strict),
        .testTarget(name: "CryptographyTests", dependencies: ["Cryptography"], swiftSettings: strict),
        .testTarget(name: "ArchiveTests", dependencies: ["Archive", "CZlib", "CountersignClient"], swiftSettings: strict),
        .target(name: "InkTestSupport", dependencies: ["SignatureKit"], path: "Tests/InkTestSupport", swiftSettings: strict),
        .target(name: "PNGTestSupport", dependencies: ["PNG", "PNGShim"], path: "Tests/PNGTestSupport", swiftSettings: strict),
        .testTarget(name: "SignatureKitTests", dependencies: ["SignatureKit", "SignatureRender", "InkTestSupport"], swiftSettings: strict),
        .testTarget(name: "RasterTests", dependencies: ["Raster"], swiftSettings: strict),
        .testTarget(name: "PNGTests", dependencies: ["PNG", "PNGTestSupport", "CZlib"], swiftSettings: strict),
        .testTarget(
            name: "SignatureRenderTests",
            dependencies: ["SignatureRender", "SignatureKit", "Raster", "PNG", "PNGTestSupport", "InkTestSupport"],
            swiftSettings: strict
        ),
        .testTarget(name: "PostgresTests", dependencies: ["Postgres", "CLibPQ", "TestSupport"], swiftSettings: strict),
        .target(name: "TestSupport", dependencies: ["Cryptography", "Postgres", "ProofStore"], path: "Tests/TestSupport", swiftSettings: strict),
        .testTarget(name: "ProofServiceTests", dependencies: ["ProofService", "SignatureKit", "TestSupport", "Archive", "CLibDeflate"], swiftSettings: strict),
        .testTarget(name: "WebhooksTests", dependencies: ["Webhooks", "ProofStore", "Postgres", "TestSupport", "Cryptography"], swiftSettings: strict),
        // Runs the built `countersign` binary (key custody: export, verify, serve refusing to start).
        .testTarget(name: "CLITests", dependencies: ["Cryptography", "TestSupport", "ProofService"], swiftSettings: strict),
        .testTarget(name: "ProofStoreTests", dependencies: ["ProofStore", "Postgres", "TestSupport", "Cryptography"], swiftSettings: strict),
        .testTarget(
            name: "ProofAPITests",
            dependencies: [
                "ProofAPI", "ProofService", "ProofStore", "Postgres", "TestSupport", "Cryptography", "SignatureKit", "SignatureRender",
                "CZlib", "Archive", "Webhooks",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
            ],
            swiftSettings: strict
        ),
    ]
)
