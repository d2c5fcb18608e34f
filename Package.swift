// swift-tools-version:6.1
import PackageDescription

let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny")
]

/// A vendor is one line of `vendors`: its plugin target `Gateway<name>` in `Sources/Plugins/<folder>`, its
/// tests `Gateway<name>Tests` in `Tests/Gateway<name>Tests`, and its library product. Every plugin and its
/// tests get GatewayCore and the two API packages the plugin contract speaks (swift-log's `Logging` and
/// swift-http-types' `HTTPTypes`); `uses` and `testsUse` add what this vendor needs beyond them. The gateway
/// and its tests depend on every vendor here; its plugin list (`Sources/gateway/InstalledPlugins.swift`) registers them.
struct Vendor {
    let name: String
    let folder: String
    let uses: [Target.Dependency]
    let testsUse: [Target.Dependency]

    init(_ name: String, folder: String? = nil, uses: [Target.Dependency] = [], testsUse: [Target.Dependency] = []) {
        self.name = name
        self.folder = folder ?? name
        self.uses = uses
        self.testsUse = testsUse
    }

    var module: String { "Gateway" + name }
    var dependency: Target.Dependency { .target(name: module) }
    var product: Product { .library(name: module, targets: [module]) }
    var targets: [Target] {
        let contract: [Target.Dependency] = [
            "GatewayCore", .product(name: "Logging", package: "swift-log"),
            .product(name: "HTTPTypes", package: "swift-http-types"),
        ]
        return [
            .target(
                name: module, dependencies: contract + uses, path: "Sources/Plugins/\(folder)", swiftSettings: strict),
            .testTarget(
                name: module + "Tests", dependencies: contract + [dependency, "GatewayTestSupport"] + testsUse,
                swiftSettings: strict),
        ]
    }
}

let crypto: Target.Dependency = .product(name: "Crypto", package: "swift-crypto")
let cryptoExtras: Target.Dependency = .product(name: "_CryptoExtras", package: "swift-crypto")

let vendors = [
    // Verify Push: ES256 (P-256) device signatures and the HMAC-SHA1 of Twilio's webhook signature; the tests'
    // simulated device has its own P-256 key, independent of the plugin's signing code. Programmable Messaging's
    // tests key their own codes with the kit's HMAC key, as the gateway does.
    Vendor("Twilio", uses: ["GatewayKitCrypto", crypto], testsUse: [crypto, "GatewayKitCrypto"]),
    // The emulator signs sandbox ID tokens (RS256, as Firebase does) with the kit's key; SHA-256 of session
    // handles and of emulated passwords. The tests verify those tokens with swift-crypto, apart from the signing.
    Vendor("Firebase", uses: ["GatewayKitCrypto", crypto], testsUse: [crypto, cryptoExtras]),
    // ID tokens (RS256, keys from the tenant's JWKS) verified, the emulator's signed; SHA-256 of the device id.
    Vendor("IDaaS", uses: ["GatewayKitCrypto", crypto]),
    // Application-signed requests: MD5 of the body and HMAC-SHA256, which also signs the SMS API's delivery reports.
    // The SMS API's tests key their own codes with the kit's HMAC key, as the gateway does.
    Vendor("Sinch", uses: [crypto], testsUse: ["GatewayKitCrypto"]),
    // Application JWTs (RS256) for Verify v2, and the HS256 signatures of Vonage's callbacks. The SMS API's tests key
    // their own codes with the kit's HMAC key, as the gateway does.
    Vendor(
        "Vonage", folder: "Nexmo", uses: ["GatewayKitCrypto", crypto, cryptoExtras],
        testsUse: [crypto, "GatewayKitCrypto"]),
    // Ed25519: checking the signatures of Telnyx's webhooks (Verify and Messaging), and the emulator's signing of its
    // own. The Messaging tests key their own codes with the kit's HMAC key, as the gateway does.
    Vendor("Telnyx", uses: [crypto], testsUse: [crypto, "GatewayKitCrypto"]),
    // CAMARA: ES256 client assertions (`private_key_jwt`) signed with the kit's JWS, checked by the emulator; the
    // SHA-256 of the number Number Verification compares.
    Vendor("Camara", uses: ["GatewayKitCrypto", crypto], testsUse: [crypto, "GatewayKitCrypto"]),
]

let package = Package(
    name: "verification-gateway",
    // iOS: for GatewayClient, the one product an app links (the server targets are built for macOS and Linux).
    platforms: [.macOS(.v15), .iOS(.v17)],
    products: [
        .executable(name: "gateway", targets: ["gateway"]),
        .library(name: "GatewayCore", targets: ["GatewayCore"]),
        // Each vendor's plugin is a library product too (`vendors` below).
        // The app side: the gateway's API for iOS, macOS and Linux apps and Swift back ends (docs/apps.md). Static,
        // not automatic: SwiftPM builds only explicitly typed libraries with `swift build --product GatewayClient`.
        .library(name: "GatewayClient", type: .static, targets: ["GatewayClient"]),
        .executable(name: "verify-demo", targets: ["verify-demo"]),
    ] + vendors.map(\.product),
    dependencies: [
        // API packages only for the core: the logging, HTTP and metrics vocabularies, no implementation.
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
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.1.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        // `GET /metrics`: the engine's swift-metrics figures in the Prometheus text format.
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        // HTTPS serving (--tls-cert/--tls-key) and trusting that certificate on the sandbox's self-calls.
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        // The shared store for several instances (`store: postgres://…`): the field's PostgreSQL driver.
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        // GatewayClient: its code generated from the API document at build time, and the URLSession transport
        // (three packages, and swift-http-types, which the runtime brings; none of the server's own).
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
        // The system SQLite library (Debian's libsqlite3-dev): the embedded default store needs
        // nothing more than its C API, so no Swift driver package is pulled in.
        .systemLibrary(
            name: "CSQLite", path: "Sources/CSQLite", pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]),
        .executableTarget(
            name: "gateway",
            dependencies: [
                "GatewayCore",
                // The own codes' HMAC key (docs/own-codes.md).
                "GatewayKitCrypto",
                "CSQLite",
                .product(name: "Hummingbird", package: "hummingbird"),
                // Traces (docs/operations.md, "Traces"): the API the gateway's own tracer and OTLP exporter implement.
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "Instrumentation", package: "swift-distributed-tracing"),
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
            ] + vendors.map(\.dependency),
            // The API's OpenAPI document (served at /openapi.yaml and /openapi.json) and the operator console's
            // page, script, style and icon (at /console), in the binary.
            resources: [
                .embedInCode("openapi.yaml"), .embedInCode("Console/Assets/index.html"),
                .embedInCode("Console/Assets/console.js"), .embedInCode("Console/Assets/console.css"),
                .embedInCode("Console/Assets/icon.svg"),
            ],
            swiftSettings: strict
        ),
        // The client library apps link: no GatewayCore, no server package. Its `openapi.yaml` is a symbolic link to
        // the server's document, which the generator plugin reads at build time.
        .target(
            name: "GatewayClient",
            dependencies: [
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIURLSession", package: "swift-openapi-urlsession"),
                // The HTTP types the runtime's API speaks (already in the graph through it).
                .product(name: "HTTPTypes", package: "swift-http-types"),
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
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "GatewayTests",
            dependencies: [
                "gateway",
                "GatewayCore",
                "GatewayTestSupport",
                // The client library against the live server (GatewayClientTests.swift), with the demo's simulated
                // phone and slider solver.
                "GatewayClient",
                "verify-demo",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
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
                .product(name: "Logging", package: "swift-log"),
            ] + vendors.map(\.dependency),
            swiftSettings: strict
        ),
    ] + vendors.flatMap(\.targets),
    swiftLanguageModes: [.v6]
)
