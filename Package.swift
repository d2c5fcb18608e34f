// swift-tools-version:6.1
import PackageDescription

let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny")
]

let package = Package(
    name: "verification-gateway",
    // iOS: for GatewayClient, the one product an app links (the server targets are built for macOS and Linux).
    platforms: [.macOS(.v15), .iOS(.v17)],
    products: [
        .executable(name: "gateway", targets: ["gateway"]),
        .library(name: "GatewayCore", targets: ["GatewayCore"]),
        .library(name: "GatewayTwilio", targets: ["GatewayTwilio"]),
        .library(name: "GatewayFirebase", targets: ["GatewayFirebase"]),
        .library(name: "GatewayIDaaS", targets: ["GatewayIDaaS"]),
        .library(name: "GatewaySinch", targets: ["GatewaySinch"]),
        .library(name: "GatewayVonage", targets: ["GatewayVonage"]),
        .library(name: "GatewayTelnyx", targets: ["GatewayTelnyx"]),
        // The app side: the gateway's API for iOS, macOS and Linux apps and Swift back ends (docs/apps.md). Static,
        // not automatic: SwiftPM builds only explicitly typed libraries with `swift build --product GatewayClient`.
        .library(name: "GatewayClient", type: .static, targets: ["GatewayClient"]),
        .executable(name: "verify-demo", targets: ["verify-demo"]),
    ],
    dependencies: [
        // API packages only for the core (DESIGN.md §2).
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        // The executable: HTTP server, outbound client, CLI, signatures, YAML configuration.
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "5.0.1"),
        // Already in the graph through Hummingbird and AsyncHTTPClient; named for the products we import.
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        // `GET /metrics`: the engine's swift-metrics figures in the Prometheus text format.
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        // HTTPS serving (--tls-cert/--tls-key) and trusting that certificate on the sandbox's self-calls.
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        // The shared store for several instances (`store: postgres://…`): the field's PostgreSQL driver.
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        // GatewayClient: its code generated from the API document at build time, and the URLSession transport
        // (the only three packages it needs; none of the server's).
        .package(url: "https://github.com/apple/swift-openapi-generator.git", from: "1.14.3"),
        .package(url: "https://github.com/apple/swift-openapi-runtime.git", from: "1.13.4"),
        .package(url: "https://github.com/apple/swift-openapi-urlsession.git", from: "1.4.0"),
    ],
    targets: [
        .target(
            name: "GatewayCore",
            dependencies: [
                .product(name: "Logging", package: "swift-log"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ],
            swiftSettings: strict
        ),
        // The plugin kit's JWS algorithms (RS256, HS256, ES256) over swift-crypto, apart from the core, which holds
        // no cryptography.
        .target(
            name: "GatewayKitCrypto",
            dependencies: [
                "GatewayCore", .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "GatewayTwilio",
            dependencies: [
                "GatewayCore", "GatewayKitCrypto",
                // Verify Push: ES256 (P-256) device signatures and the HMAC-SHA1 of Twilio's webhook signature.
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Sources/Plugins/Twilio",
            swiftSettings: strict
        ),
        .target(
            name: "GatewayFirebase",
            dependencies: [
                // The emulator signs sandbox ID tokens (JWT, RS256 as Firebase does) with the kit's sandbox key.
                "GatewayCore", "GatewayKitCrypto",
                // SHA-256 of session handles (logs) and of the emulated users' passwords.
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Sources/Plugins/Firebase",
            swiftSettings: strict
        ),
        .target(
            name: "GatewayIDaaS",
            dependencies: [
                // The provider verifies IDaaS ID tokens (JWT, RS256, keys from the tenant's JWKS); the emulator
                // signs its sandbox tokens with the kit's sandbox key.
                "GatewayCore", "GatewayKitCrypto",
                // SHA-256 of the device identifier.
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Sources/Plugins/IDaaS",
            swiftSettings: strict
        ),
        .target(
            name: "GatewaySinch",
            dependencies: [
                "GatewayCore",
                // Application-signed requests: MD5 of the body and HMAC-SHA256 (sinch.md §1.1).
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            path: "Sources/Plugins/Sinch",
            swiftSettings: strict
        ),
        .target(
            name: "GatewayVonage",
            dependencies: [
                "GatewayCore", "GatewayKitCrypto",
                // Application JWTs (RS256) for Verify v2, and the HS256 signatures of Vonage's callbacks.
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            path: "Sources/Plugins/Nexmo",
            swiftSettings: strict
        ),
        .target(
            name: "GatewayTelnyx",
            dependencies: [
                "GatewayCore",
                // Ed25519: checking the signatures of Telnyx's webhooks, and the emulator's signing of its own.
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Sources/Plugins/Telnyx",
            swiftSettings: strict
        ),
        // The system SQLite library (Debian's libsqlite3-dev): the embedded default store needs
        // nothing more than its C API, so no Swift driver package is pulled in.
        .systemLibrary(
            name: "CSQLite", path: "Sources/CSQLite", pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]),
        .executableTarget(
            name: "gateway",
            dependencies: [
                "GatewayCore",
                "GatewayTwilio",
                "GatewayFirebase",
                "GatewayIDaaS",
                "GatewaySinch",
                "GatewayVonage",
                "GatewayTelnyx",
                "CSQLite",
                .product(name: "Hummingbird", package: "hummingbird"),
                // HTTP1Channel's decoder limits and extra handlers (HTTPParseErrorHandler).
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                // The HTTP parts Hummingbird's channel carries, for the handler that answers parse errors.
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                // The store's reachability probe (a refused connection answers 503 at once).
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            // The API's OpenAPI document, in the binary (served at /openapi.yaml and /openapi.json).
            resources: [.embedInCode("openapi.yaml")],
            swiftSettings: strict
        ),
        // The client library apps link: no GatewayCore, no server package. Its `openapi.yaml` is a symbolic link to
        // the server's document, which the generator plugin reads at build time.
        .target(
            name: "GatewayClient",
            dependencies: [
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIURLSession", package: "swift-openapi-urlsession"),
            ],
            swiftSettings: strict,
            plugins: [.plugin(name: "OpenAPIGenerator", package: "swift-openapi-generator")]
        ),
        // Runs every vendor's app-side flow against a sandbox with GatewayClient only (`.ci/run` runs it). The
        // simulated phone of the Verify Push flow signs with swift-crypto, as the phone's SDK signs with its key.
        .executableTarget(
            name: "verify-demo",
            dependencies: [
                "GatewayClient",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strict
        ),
        // Times the phone-number parser and writes its results for the agreement check against
        // libphonenumber (scripts/phonemeta/, BENCHMARKS.md).
        .executableTarget(
            name: "phone-benchmark",
            dependencies: ["GatewayCore"],
            swiftSettings: strict
        ),
        .target(
            name: "GatewayTestSupport",
            dependencies: [
                "GatewayCore", .product(name: "Logging", package: "swift-log"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            path: "Tests/GatewayTestSupport",
            swiftSettings: strict
        ),
        .testTarget(
            name: "GatewayCoreTests",
            dependencies: [
                "GatewayCore", "GatewayKitCrypto", "GatewayTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "GatewayTwilioTests",
            dependencies: [
                "GatewayCore", "GatewayTwilio", "GatewayTestSupport",
                // The simulated device's P-256 key, independent of the plugin's signing code.
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "GatewayFirebaseTests",
            dependencies: [
                "GatewayCore", "GatewayFirebase", "GatewayTestSupport",
                // Verifies the emulator's RS256 ID tokens with swift-crypto, independently of its signing code.
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "GatewayIDaaSTests",
            dependencies: ["GatewayCore", "GatewayIDaaS", "GatewayTestSupport"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "GatewaySinchTests",
            dependencies: [
                "GatewayCore", "GatewaySinch", "GatewayTestSupport",
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "GatewayVonageTests",
            dependencies: [
                "GatewayCore", "GatewayVonage", "GatewayTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "GatewayTelnyxTests",
            dependencies: [
                "GatewayCore", "GatewayTelnyx", "GatewayTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "GatewayTests",
            dependencies: [
                "gateway",
                "GatewayCore",
                "GatewayTwilio",
                "GatewayFirebase",
                "GatewayIDaaS",
                "GatewayVonage",
                "GatewayTestSupport",
                // The client library against the live server (GatewayClientTests.swift), with the demo's simulated
                // phone and slider solver.
                "GatewayClient",
                "verify-demo",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                // Reads openapi.yaml as YAML 1.1 loaders do, to compare with the JSON the server serves.
                .product(name: "Yams", package: "Yams"),
            ],
            swiftSettings: strict
        ),
    ],
    swiftLanguageModes: [.v6]
)
