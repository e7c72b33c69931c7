// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "Quad",
    // macOS 15: swift-configuration's first (the kit, for apps, needs only iOS 17).
    platforms: [.macOS(.v15), .iOS(.v17)],
    products: [
        .executable(name: "quad", targets: ["quad"]),
        .library(name: "QuadKit", targets: ["QuadKit"]),
        .library(name: "QuadCore", targets: ["QuadCore"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.3.0"),
        .package(url: "https://github.com/apple/swift-configuration", from: "1.4.0"),
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
        .package(url: "https://github.com/adam-fowler/compress-nio", from: "1.5.0"),
        // Mail: an SMTP client of Quad's own on SwiftNIO and its TLS (no SMTP client package is available here).
        .package(url: "https://github.com/apple/swift-nio", from: "2.81.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.29.0"),
        // Sign-in with the organisation (OpenID Connect): the provider's keys (JWKS) and its ID tokens' signatures.
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.7.0"),
        // `GET /metrics` in Prometheus's text format.
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.0"),
        // Import and export of rooms, people and books as CSV, and their upload from `/admin/records` as a form.
        .package(url: "https://github.com/yaslab/CSV.swift", from: "2.5.0"),
        .package(url: "https://github.com/vapor/multipart-kit", from: "4.7.0"),
        // A transit operator's GTFS feed is a ZIP of CSV files (`quad import gtfs`).
        .package(url: "https://github.com/weichsel/ZIPFoundation", from: "0.9.20"),
        // Its GTFS-Realtime feed is protobuf; the Swift for its messages is generated once and committed
        // (`scripts/gtfs-realtime-swift`), so the build needs the runtime only, not the plugin.
        .package(url: "https://github.com/apple/swift-protobuf", from: "1.39.0"),
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
        // What every feature stands on: configuration, the database and its migrations, the access layer (one door),
        // events, HTTP caching, problems, images and the web shell; the `Feature` protocol features register through.
        .target(
            name: "QuadPlatform",
            dependencies: [
                "QuadCore", "QuadAPI", "QuadMail",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "OpenAPIHummingbird", package: "swift-openapi-hummingbird"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "SQLKit", package: "sql-kit"),
                .product(name: "SQLiteKit", package: "sqlite-kit"),
                .product(name: "PostgresKit", package: "postgres-kit"),
                // Reads who may call each operation (`x-quad-access`) from the contract at start.
                .product(name: "Yams", package: "Yams"),
                // gzip for static files (once, at start) and for larger answers to clients that accept it.
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "CSV", package: "CSV.swift"),
                .product(name: "MultipartKit", package: "multipart-kit"),
            ],
            resources: [.copy("Web")],
            plugins: [.plugin(name: "OpenAPIGenerator", package: "swift-openapi-generator")]
        ),
        // One target per feature: each sees the platform and QuadCore, never another feature.
        // Demo room photos and letter tiles are pictures committed with the code (drawn once); nothing draws or
        // encodes pictures at run time.
        // Each with its pages' templates, scripts and styles in its own Web/ (served and hashed by the web shell).
        feature("QuadRooms", extra: ["QuadWaitingLines"], resources: [.copy("DemoPhotos")]),
        feature("QuadSpecials", resources: [.copy("LetterTiles")]),
        feature("QuadLibrary", extra: ["QuadWaitingLines"]),
        // The demo's shuttles are a GTFS feed shipped with it, as an operator would publish it.
        feature(
            "QuadTimetable",
            extra: [
                .product(name: "ZIPFoundation", package: "ZIPFoundation"),
                .product(name: "CSV", package: "CSV.swift"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ], resources: [.copy("DemoFeed")]),
        feature(
            "QuadAccounts",
            extra: [
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "JWTKit", package: "jwt-kit"),
            ]),
        // Waiting lines and what a person is told (offers, places in line, loans due, reminders), and the admins'
        // view of every line: a feature like the others, over the lines engine.
        feature("QuadWaiting", extra: ["QuadWaitingLines"]),
        // A person's day on one page (`/`, `GET /api/me/today`): each feature's part through `TodayPart`, handed in
        // at construction; it reads no feature's tables.
        feature("QuadToday"),
        // The lines engine beneath Rooms and the Library (and the Waiting feature): first come first served, an
        // exclusive offer for the first in line, decided inside the feature's own transaction on its own lock.
        // A library, not a feature: it has no pages or operations, and the features that keep lines call it
        // inside their transactions, which a narrow protocol handed in at construction could not do as plainly.
        .target(
            name: "QuadWaitingLines",
            dependencies: [
                "QuadCore", "QuadPlatform",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "SQLKit", package: "sql-kit"),
            ]),
        // Mail on the wire: a message rendered as MIME (text, HTML, a calendar invitation) and handed to the operator's
        // relay over SMTP (STARTTLS or TLS, AUTH). No I/O of Quad's own: the outbox that calls it is the platform's.
        .target(
            name: "QuadMail",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]),
        // Composes the platform and the features into one application; no feature logic of its own.
        .target(
            name: "QuadServer",
            dependencies: [
                "QuadPlatform", "QuadRooms", "QuadSpecials", "QuadLibrary", "QuadTimetable", "QuadAccounts",
                "QuadWaiting", "QuadWaitingLines", "QuadToday",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .target(
            name: "QuadKit",
            dependencies: [
                "QuadCore", "QuadAPI",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIURLSession", package: "swift-openapi-urlsession"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                // PKCE's S256 for the organisation's sign-in (CryptoKit on Apple's systems).
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // What SwiftNIO alone costs an answer: the floor `Benchmarks/floor` measures Quad's fast path against.
        .executableTarget(
            name: "nio-floor",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "Benchmarks/Floor"
        ),
        .executableTarget(
            name: "quad",
            dependencies: [
                "QuadServer", "QuadPlatform", "QuadKit",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ]
        ),
        // What the test targets share: the clock they start at (`QUAD_TEST_NOW`), waiting for a condition, a composed
        // Quad on a fresh database (`TestApp`), and a real Quad on a free port (`LiveServer`) with the kit's test
        // middleware.
        .target(
            name: "QuadTestSupport",
            dependencies: [
                "QuadCore", "QuadKit", "QuadServer", "QuadPlatform", "QuadAccounts", "QuadWaitingLines", "QuadMail",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "SQLKit", package: "sql-kit"),
            ],
            path: "Tests/QuadTestSupport"),
        .testTarget(name: "QuadCoreTests", dependencies: ["QuadCore"]),
        // The SMTP client against a real SMTP server (aiosmtpd, started by the tests: e2e/smtp_sink.py).
        .testTarget(name: "QuadMailTests", dependencies: ["QuadMail", "QuadTestSupport"]),
        // The kit and the command line (its terminal rendering included) against a real Quad listening on a free
        // port (so URLSession is exercised).
        .testTarget(
            name: "QuadKitTests",
            dependencies: [
                "QuadKit", "quad", "QuadServer", "QuadPlatform", "QuadTestSupport",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // One test target per module; each drives a composed Quad (`TestApp`) and reads its module's internals.
        moduleTests("QuadPlatformTests", ["QuadMail"]),
        moduleTests("QuadRoomsTests", ["QuadRooms", "QuadWaitingLines"]),
        // Their tests sign people in through Accounts (and the Library's pages show the Timetable's campus time).
        moduleTests("QuadSpecialsTests", ["QuadSpecials", "QuadAccounts"]),
        moduleTests("QuadLibraryTests", ["QuadLibrary", "QuadAccounts", "QuadTimetable", "QuadWaitingLines"]),
        moduleTests(
            "QuadTimetableTests",
            [
                "QuadTimetable", "QuadAccounts", .product(name: "ZIPFoundation", package: "ZIPFoundation"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ]),
        // Accounts' removal releases Rooms' bookings: its tests look at both.
        moduleTests("QuadAccountsTests", ["QuadAccounts", "QuadRooms", "QuadMail"]),
        // The composed server: one door in front of every module's routes, the contract covering all of them.
        moduleTests(
            "QuadServerTests",
            [
                "QuadRooms", "QuadSpecials", "QuadLibrary", "QuadTimetable", "QuadAccounts", "QuadWaiting",
                "QuadWaitingLines", "QuadToday", .product(name: "Yams", package: "Yams"),
            ]),
    ]
)

/// A feature module: its operations (generated from the contract, filtered in its openapi-generator-config.yaml),
/// pages, store and services, on the platform.
func feature(_ name: String, extra: [Target.Dependency] = [], resources: [Resource] = []) -> Target {
    .target(
        name: name,
        dependencies: [
            "QuadCore", "QuadPlatform",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "HTTPTypes", package: "swift-http-types"),
            .product(name: "OpenAPIHummingbird", package: "swift-openapi-hummingbird"),
            .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "SQLKit", package: "sql-kit"),
        ] + extra,
        resources: [.copy("Web")] + resources,
        plugins: [.plugin(name: "OpenAPIGenerator", package: "swift-openapi-generator")]
    )
}

/// A module's tests, on a composed Quad.
func moduleTests(_ name: String, _ modules: [Target.Dependency]) -> Target {
    .testTarget(
        name: name,
        dependencies: modules + [
            "QuadCore", "QuadPlatform", "QuadServer", "QuadTestSupport",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "HummingbirdTesting", package: "hummingbird"),
            .product(name: "SQLKit", package: "sql-kit"),
        ]
    )
}
