// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "Quad",
    platforms: [.macOS(.v14), .iOS(.v17)],
    products: [
        .executable(name: "quad", targets: ["quad"]),
        .library(name: "QuadKit", targets: ["QuadKit"]),
        .library(name: "QuadCore", targets: ["QuadCore"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.3.0"),
        .package(url: "https://github.com/apple/swift-crypto", "3.0.0"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-openapi-generator", from: "1.14.0"),
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.0"),
        .package(url: "https://github.com/apple/swift-openapi-urlsession", from: "1.4.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth", from: "2.5.0"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache", from: "2.1.0"),
        .package(url: "https://github.com/hummingbird-project/swift-openapi-hummingbird", from: "2.1.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/vapor/sql-kit", from: "3.36.0"),
        .package(url: "https://github.com/vapor/sqlite-kit", from: "4.5.0"),
        .package(url: "https://github.com/vapor/postgres-kit", from: "2.17.0"),
        .package(url: "https://github.com/jpsim/Yams", "5.0.0"..<"7.0.0"),
    ],
    targets: [
        // Domain models, rules and wire formats: Foundation only, shared by server, kit and CLI.
        .target(name: "QuadCore", resources: [.copy("Resources/Localization")]),
        // Types, server interface and client generated from the contract, openapi.yaml.
        .target(
            name: "QuadAPI",
            dependencies: ["QuadCore", .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime")],
            resources: [.copy("openapi.yaml")],
            plugins: [.plugin(name: "OpenAPIGenerator", package: "swift-openapi-generator")]
        ),
        .target(
            name: "QuadServer",
            dependencies: [
                "QuadCore", "QuadAPI",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "OpenAPIHummingbird", package: "swift-openapi-hummingbird"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "SQLKit", package: "sql-kit"),
                .product(name: "SQLiteKit", package: "sqlite-kit"),
                .product(name: "PostgresKit", package: "postgres-kit"),
                // Reads who may call each operation (`x-quad-access`) from the contract at start.
                .product(name: "Yams", package: "Yams"),
            ],
            resources: [.copy("Web")]
        ),
        .target(
            name: "QuadKit",
            dependencies: [
                "QuadCore", "QuadAPI",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIURLSession", package: "swift-openapi-urlsession"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        .executableTarget(
            name: "quad",
            dependencies: [
                "QuadServer", "QuadKit",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ]
        ),
        // What the test targets share: the clock they start at (`QUAD_TEST_NOW`), waiting for a condition, and a
        // real Quad on a free port (`LiveServer`) with the kit's test middleware.
        .target(
            name: "QuadTestSupport",
            dependencies: [
                "QuadCore", "QuadKit", "QuadServer",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "SQLKit", package: "sql-kit"),
            ],
            path: "Tests/QuadTestSupport"),
        .testTarget(name: "QuadCoreTests", dependencies: ["QuadCore"]),
        // The kit against a real Quad listening on a free port (so URLSession is exercised).
        .testTarget(
            name: "QuadKitTests",
            dependencies: [
                "QuadKit", "QuadServer", "QuadTestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .testTarget(
            name: "QuadServerTests",
            dependencies: [
                "QuadServer", "QuadTestSupport",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
            ]
        ),
    ]
)
