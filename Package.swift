// swift-tools-version:6.1
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "Eventual",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "EventualAPI", targets: ["EventualAPI"]),
        .library(name: "EventualServer", targets: ["EventualServer"]),
        .library(name: "EventualKit", targets: ["EventualKit"]),
        .executable(name: "eventual-server", targets: ["eventual-server"]),
        .executable(name: "eventual-bench-sync", targets: ["eventual-bench-sync"]),
        .library(name: "Pantry", targets: ["Pantry"]),
        .library(name: "BarcodeImages", targets: ["BarcodeImages"]),
        .executable(name: "pantry", targets: ["pantry"]),
        .library(name: "Recycling", targets: ["Recycling"]),
        .executable(name: "sustainu", targets: ["sustainu"]),
        .library(name: "Spending", targets: ["Spending"]),
        .executable(name: "spendiq", targets: ["spendiq"]),
        // NB: what an app's command needs (Examples/Chores uses it from its own package).
        .library(name: "CommandLineSupport", targets: ["CommandLineSupport"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth.git", from: "2.5.0"),
        .package(url: "https://github.com/apple/swift-openapi-generator.git", from: "1.14.3"),
        .package(url: "https://github.com/apple/swift-openapi-runtime.git", from: "1.13.4"),
        .package(url: "https://github.com/swift-server/swift-openapi-hummingbird.git", from: "2.1.0"),
        .package(url: "https://github.com/vapor/sql-kit.git", from: "3.36.0"),
        .package(url: "https://github.com/vapor/sqlite-kit.git", from: "4.5.2"),
        .package(url: "https://github.com/vapor/postgres-kit.git", from: "2.17.0"),
        .package(url: "https://github.com/vapor/sqlite-nio.git", from: "1.13.2"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/swift-server/swift-openapi-async-http-client.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", exact: "2.1.1"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket.git", from: "2.8.1"),
        .package(url: "https://github.com/hummingbird-project/swift-websocket.git", from: "1.6.2"),
        .package(url: "https://github.com/adam-fowler/compress-nio.git", from: "1.5.0"),
    ],
    targets: [
        // MARK: The wire contract
        // The wire contract: openapi.yaml and the types, server protocol and client generated from it.
        .target(
            name: "EventualAPI",
            dependencies: [
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                // NB: an app's declaration is a YAML file (`AppDeclaration`), read by the server and the engine alike.
                .product(name: "Yams", package: "Yams"),
            ],
            // NB: the built-in apps' declarations, the one spelling of their collections (`BuiltInApps`).
            resources: [.copy("openapi.yaml"), .copy("Declarations")],
            swiftSettings: swiftSettings,
            plugins: [.plugin(name: "OpenAPIGenerator", package: "swift-openapi-generator")]
        ),

        // MARK: The server
        // The server's storage: the database handle (SQLite or PostgreSQL), SQLite's writer and fast
        // readers, the migrations. No HTTP and no feature types.
        .target(
            name: "EventualStorage",
            dependencies: [
                .product(name: "SQLKit", package: "sql-kit"),
                .product(name: "SQLiteKit", package: "sqlite-kit"),
                .product(name: "SQLiteNIO", package: "sqlite-nio"),
                .product(name: "PostgresKit", package: "postgres-kit"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // The server: the HTTP API and its features (accounts, knowledge base, sync, recycling, spending, analytics).
        .target(
            name: "EventualServer",
            dependencies: [
                "EventualAPI",
                "EventualStorage",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIHummingbird", package: "swift-openapi-hummingbird"),
                .product(name: "SQLKit", package: "sql-kit"),
                .product(name: "SQLiteKit", package: "sqlite-kit"),
                .product(name: "SQLiteNIO", package: "sqlite-nio"),
                .product(name: "PostgresKit", package: "postgres-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "CompressNIO", package: "compress-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "eventual-server",
            dependencies: [
                "EventualServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),

        // MARK: The engine
        // The offline-first client engine: local store, outbox, sync, cache policies, session vault.
        .target(
            name: "EventualKit",
            dependencies: [
                "EventualAPI",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "WSClient", package: "swift-websocket"),
            ],
            swiftSettings: swiftSettings
        ),

        // MARK: The apps
        // Tracking My Pantry: the app model (pantry, knowledge base, reminders, places, accounts).
        .target(
            name: "Pantry",
            dependencies: [
                "EventualKit",
                "EventualAPI",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // SustainU: the app model (recycling points, scans, score, tips, reminders, accounts).
        .target(
            name: "Recycling",
            dependencies: [
                "EventualKit",
                "EventualAPI",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // SpendiQ: the app model (accounts, transactions, dashboard, limits, CSV, offers, location, insights).
        .target(
            name: "Spending",
            dependencies: [
                "EventualKit",
                "EventualAPI",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),

        // MARK: The commands
        // What the apps' commands share: one-line errors, tables, colours, prompts, settings.
        .target(
            name: "CommandLineSupport",
            dependencies: [
                "EventualKit",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: swiftSettings
        ),
        // The `pantry` command: argument parsing and printing over the Pantry library.
        .executableTarget(
            name: "pantry",
            dependencies: [
                "Pantry",
                "BarcodeImages",
                "CommandLineSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Sources/PantryCommand",
            swiftSettings: swiftSettings
        ),
        // The `sustainu` command: argument parsing and printing over the Recycling library.
        .executableTarget(
            name: "sustainu",
            dependencies: [
                "Recycling",
                "CommandLineSupport",
                "EventualKit",
                "EventualAPI",
                "BarcodeImages",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            path: "Sources/SustainUCommand",
            swiftSettings: swiftSettings
        ),
        // The `spendiq` command: argument parsing and printing over the Spending library.
        .executableTarget(
            name: "spendiq",
            dependencies: [
                "Spending",
                "CommandLineSupport",
                "EventualKit",
                "EventualAPI",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Sources/SpendiqCommand",
            swiftSettings: swiftSettings
        ),

        // NB: the example app, Chores, is a package of its own (Examples/Chores), on the products above.

        // MARK: C libraries, and the barcode reader built on them
        // libzbar, which reads barcodes from pixels (Debian: libzbar-dev).
        .systemLibrary(name: "CZBar", pkgConfig: "zbar", providers: [.apt(["libzbar-dev"])]),
        // libpng, which decodes a photo to grey pixels for zbar (Debian: libpng-dev).
        .systemLibrary(name: "CPNG", pkgConfig: "libpng", providers: [.apt(["libpng-dev"])]),
        // libjpeg(-turbo), which decodes phone photos (Debian: libjpeg-dev).
        .systemLibrary(name: "CJPEG", path: "Sources/CJPEG", providers: [.apt(["libjpeg-dev"])]),
        // Reads barcodes from photos (JPEG, PNG, PGM/PPM) for the commands; apart from the app
        // models, which stay free of C libraries so that an iOS app links them unchanged.
        .target(
            name: "BarcodeImages",
            dependencies: ["EventualAPI", "CZBar", "CPNG", "CJPEG"],
            swiftSettings: swiftSettings
        ),

        // MARK: Benchmarks and demos
        // A real server on a free loopback port, for the benchmarks.
        .target(
            name: "EventualBench",
            dependencies: ["EventualKit", "EventualServer", "EventualAPI", .product(name: "GRDB", package: "GRDB.swift")],
            swiftSettings: swiftSettings
        ),
        // Measures draining the outbox and pulling into a new device (scripts/bench-sync.sh).
        .executableTarget(
            name: "eventual-bench-sync",
            dependencies: ["EventualKit", "EventualServer", "EventualAPI", "EventualBench"],
            swiftSettings: swiftSettings
        ),
        // Measures attachments sent through the outbox, and what resuming after cuts costs (scripts/bench-attachments.sh).
        .executableTarget(
            name: "eventual-bench-attachments",
            dependencies: ["EventualKit", "EventualServer", "EventualAPI", "EventualStorage", "EventualFaultProxy", "EventualBench",
                           .product(name: "Crypto", package: "swift-crypto"), .product(name: "GRDB", package: "GRDB.swift")],
            swiftSettings: swiftSettings
        ),
        // Measures a first sync, a photo and a drain over a 32 KiB/s link, pull pages plain and
        // compressed (scripts/bench-slow-link.sh).
        .executableTarget(
            name: "eventual-bench-slow-link",
            dependencies: ["EventualKit", "EventualServer", "EventualAPI", "EventualFaultProxy", "EventualBench",
                           .product(name: "GRDB", package: "GRDB.swift")],
            swiftSettings: swiftSettings
        ),
        // Measures a new SpendiQ device's first sync of 100,000 records (scripts/bench-first-sync.sh).
        .executableTarget(
            name: "eventual-bench-first-sync",
            dependencies: ["EventualKit", "EventualServer", "EventualAPI", "Spending", "EventualBench"],
            swiftSettings: swiftSettings
        ),
        // Measures live changes: signals to 10,000 live channels, items reaching engines' live
        // queries, and each channel's memory on the server (scripts/bench-live.sh).
        .executableTarget(
            name: "eventual-bench-live",
            dependencies: [
                "EventualKit", "EventualServer", "EventualAPI", "EventualStorage", "EventualBench",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "WSClient", package: "swift-websocket"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // Measures POST /v1/events and the analytics questions on 1,000,000 events (scripts/bench-analytics.sh).
        .executableTarget(
            name: "eventual-bench-analytics",
            dependencies: [
                "EventualServer", "EventualAPI",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // Seeds 100,000 recycling points and measures nearest searches, on the server over HTTP and
        // with the library's NearestSearch (scripts/bench-recycling.sh).
        .executableTarget(
            name: "recycling-bench",
            dependencies: [
                "EventualAPI",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            swiftSettings: swiftSettings
        ),
        // Seeds a 100,000-item pantry and measures search and `pantry list` (scripts/bench-pantry.sh).
        .executableTarget(
            name: "pantry-bench",
            dependencies: ["Pantry", "EventualKit", .product(name: "GRDB", package: "GRDB.swift")],
            swiftSettings: swiftSettings
        ),
        // A week of usage from simulated people, recorded through EventualKit's Analytics (scripts/demo-analytics.sh).
        .executableTarget(
            name: "eventual-demo-analytics",
            dependencies: ["EventualKit", "EventualAPI"],
            swiftSettings: swiftSettings
        ),

        // MARK: Tests
        // Limits how many tests run at once (6 per core), before `main`: see its source.
        .target(name: "TestParallelism", path: "Tests/TestParallelism"),
        // A TCP proxy on loopback that injects network faults (cuts, silence, resets): the tests'
        // basement and elevator, and the attachments benchmark's cut connection.
        .target(
            name: "EventualFaultProxy",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "Tests/FaultProxy",
            swiftSettings: swiftSettings
        ),
        // What every test target shares: scratch folders and databases, a live server on a
        // loopback port, a server that never answers, the fault-injecting proxy.
        .target(
            name: "EventualTestSupport",
            dependencies: [
                "TestParallelism",
                "EventualFaultProxy",
                "EventualServer",
                "EventualStorage",
                "EventualKit",
                "EventualAPI",
                "Spending",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "PostgresKit", package: "postgres-kit"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Tests/TestSupport",
            swiftSettings: swiftSettings
        ),
        // A client process that a crash test kills with SIGKILL in the middle of a sync.
        .executableTarget(
            name: "eventual-crash-child",
            dependencies: ["EventualKit", "EventualAPI"],
            path: "Tests/CrashChild",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "EventualAPITests",
            dependencies: ["EventualAPI"],
            swiftSettings: swiftSettings
        ),
        // What the storage tests of two layers share: another connection holding SQLite's lock.
        .target(
            name: "StorageTestSupport",
            dependencies: [
                "EventualStorage",
                .product(name: "SQLKit", package: "sql-kit"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/StorageTestSupport",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "EventualStorageTests",
            dependencies: [
                "EventualStorage",
                "StorageTestSupport",
                .product(name: "SQLKit", package: "sql-kit"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "EventualKitTests",
            dependencies: [
                "EventualKit",
                "EventualServer",
                "EventualAPI",
                "EventualTestSupport",
                "eventual-crash-child",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "EventualServerTests",
            dependencies: [
                "EventualServer",
                .product(name: "WSClient", package: "swift-websocket"),
                "StorageTestSupport",
                "eventual-server",
                "EventualAPI",
                "EventualTestSupport",
                "Spending",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "PostgresKit", package: "postgres-kit"),
                .product(name: "CompressNIO", package: "compress-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PantryTests",
            dependencies: [
                "Pantry",
                "pantry",
                "BarcodeImages",
                "EventualTestSupport",
                "EventualKit",
                "EventualServer",
                "EventualAPI",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "RecyclingTests",
            dependencies: [
                "Recycling",
                "sustainu",
                "eventual-server",
                "BarcodeImages",
                "EventualTestSupport",
                "EventualKit",
                "EventualServer",
                "EventualAPI",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "SpendingTests",
            dependencies: [
                "Spending",
                "spendiq",
                "EventualTestSupport",
                "EventualKit",
                "EventualServer",
                "EventualAPI",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "BarcodeImagesTests",
            dependencies: ["BarcodeImages", "EventualTestSupport"],
            swiftSettings: swiftSettings
        ),
    ]
)
