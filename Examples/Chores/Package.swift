// swift-tools-version:6.1
import PackageDescription

// Chores: an app on the Eventual platform, in a package of its own. It depends on Eventual by
// path (an app outside this repository names its URL instead) and edits nothing in it: its
// collection is its declaration file (Sources/Chores/Resources/chores.app.yaml), bundled for the
// engine and deployed to a server with `eventual-server apps deploy`.
let package = Package(
    name: "Chores",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "Chores", targets: ["Chores"]),
        .executable(name: "chores", targets: ["chores"]),
    ],
    dependencies: [
        .package(name: "Eventual", path: "../.."),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
    ],
    targets: [
        // The app model: chores, households, and the app on one device.
        .target(
            name: "Chores",
            dependencies: [
                .product(name: "EventualKit", package: "Eventual"),
                .product(name: "EventualAPI", package: "Eventual"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            resources: [.copy("Resources/chores.app.yaml")]
        ),
        // The `chores` command, on the command kit.
        .executableTarget(
            name: "chores",
            dependencies: [
                "Chores",
                .product(name: "CommandLineSupport", package: "Eventual"),
                .product(name: "EventualKit", package: "Eventual"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Sources/ChoresCommand"
        ),
        // The command against a real server built from Eventual, its declaration deployed to it.
        .testTarget(
            name: "ChoresTests",
            dependencies: ["Chores", "chores"]
        ),
    ]
)
