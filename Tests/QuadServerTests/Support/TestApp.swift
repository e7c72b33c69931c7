import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import NIOConcurrencyHelpers
import QuadCore
import QuadTestSupport

@testable import QuadServer

/// A Quad router on a fresh database, for `app.test(.router)`, on a clock that starts at the tests' instant
/// (`QUAD_TEST_NOW`) or the one a test chooses, and that the test moves on with `clock.advance(by:)`.
struct TestApp: Sendable {
    static let adminToken = "test-admin-token-0123456789"

    var configuration: Configuration
    let platform: Platform
    let clock: OffsetClock

    static func configuration(
        _ location: DatabaseLocation = .sqliteMemory, clock: any QuadClock = TestTime.clock()
    ) -> Configuration {
        var configuration = Configuration()
        configuration.database = location
        configuration.adminToken = adminToken
        configuration.rateLimit = 0
        configuration.loadDemoData = false
        configuration.passwordCost = 4
        configuration.clock = clock
        return configuration
    }

    /// Runs `body` with an application on a new database of `engine`, its clock at `at` (the tests' instant by
    /// default); `configure` adjusts settings and `routes` adds test-only routes behind the same middleware. `live`
    /// serves it on a local port, through the whole HTTP pipeline, rather than calling the router directly.
    static func run(
        _ engine: Database.Engine = .sqlite, at instant: Date? = nil,
        configure: (inout Configuration) -> Void = { _ in },
        routes: (Routes) -> Void = { _ in },
        live: Bool = false, logger: Logger = TestDatabase.logger,
        _ body: @escaping @Sendable (TestApp, any TestClientProtocol) async throws -> Void
    ) async throws {
        try await TestDatabase.withDatabase(engine) { database in
            var configuration = configuration()
            let clock = TestTime.clock(at: instant)
            configuration.clock = clock
            configure(&configuration)
            let platform = try await Platform.start(configuration, database: database, logger: logger) {
                _ in
            }
            let features = Features(platform: platform)
            let router = try await buildRouter(platform, features, extra: routes)
            let testApp = TestApp(configuration: configuration, platform: platform, clock: clock)
            let app = Application(router: router, server: .quad(features), logger: logger)
            try await app.test(live ? .live : .router) { client in try await body(testApp, client) }
        }
    }
}

extension TestApp {
    /// Adds a person and signs them in; returns the bearer header of their session.
    func signedIn(_ username: String, role: Role = .member) async throws -> HTTPFields {
        let accounts = Accounts(platform: platform)
        if try await accounts.people.find(username) == nil {
            _ = try await accounts.people.create(
                Person(username: username, displayName: username.capitalized, role: role),
                password: "password-\(username)")
        }
        let (token, _) = try await accounts.sessions.start(for: username, kind: .api)
        return [.authorization: "Bearer \(token)", .contentType: "application/json"]
    }
}

extension TestClientProtocol {
    /// `POST /api/rooms/{room}/bookings` as whoever `headers` sign in.
    func book(_ room: String, as headers: HTTPFields) async throws -> TestResponse {
        try await execute(
            uri: "/api/rooms/\(room)/bookings", method: .post, headers: headers, body: ByteBuffer(string: "{}")
        ) {
            $0
        }
    }
}

extension TestResponse {
    var json: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any]) ?? [:]
    }
    var text: String { String(buffer: body) }
}

/// Lines collected from `announce`, for checking what was printed.
final class Announcements: Sendable {
    private let lines = NIOLockedValueBox<[String]>([])
    var all: [String] { lines.withLockedValue { $0 } }
    func record(_ line: String) { lines.withLockedValue { $0.append(line) } }
}

extension TestClientProtocol {
    /// A new personal app link for whoever `headers` sign in, as the path the original apps are given.
    func appLink(for headers: HTTPFields, label: String = "Test app") async throws -> String {
        let created = try await execute(
            uri: "/api/me/app-links", method: .post, headers: headers,
            body: ByteBuffer(string: "{\"label\": \"\(label)\"}")
        ) { $0 }
        guard created.status == .created, let url = created.json["url"] as? String,
            let path = URLComponents(string: url)?.path
        else { throw AppLinkFailed(status: created.status.code) }
        return path
    }
}

struct AppLinkFailed: Error { var status: Int }

/// Every line a logger writes, message and metadata, for checking what the logs say (and never say).
final class LogLines: Sendable {
    private let lines = NIOLockedValueBox<[String]>([])
    var all: String { lines.withLockedValue { $0.joined(separator: "\n") } }

    var logger: Logger {
        var logger = Logger(label: "quad-test") { _ in Handler(lines: self) }
        logger.logLevel = .info
        return logger
    }

    struct Handler: LogHandler {
        let lines: LogLines
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .info

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(
            level: Logger.Level, message: Logger.Message, metadata: Logger.Metadata?, source: String, file: String,
            function: String, line: UInt
        ) {
            let all = self.metadata.merging(metadata ?? [:]) { $1 }
            lines.lines.withLockedValue { $0.append("\(level) \(message) \(all)") }
        }
    }
}
