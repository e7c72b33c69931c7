import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import NIOConcurrencyHelpers
import QuadCore
import QuadPlatform
import QuadServer
import Testing

@testable import QuadAccounts

/// A Quad router on a fresh database, for `app.test(.router)`, on a clock that starts at the tests' instant
/// (`QUAD_TEST_NOW`) or the one a test chooses, and that the test moves on with `clock.advance(by:)`.
package struct TestApp: Sendable {
    package static let adminToken = "test-admin-token-0123456789"

    package var configuration: ServerConfiguration
    package let features: Features
    package var platform: Platform { features.platform }
    package let clock: OffsetClock

    package static func configuration(
        _ location: DatabaseLocation = .sqliteMemory, clock: any QuadClock = TestTime.clock()
    ) -> ServerConfiguration {
        var configuration = ServerConfiguration()
        configuration.database = location
        configuration.adminToken = adminToken
        configuration.rateLimit = 0
        configuration.loadDemoData = false
        configuration.passwordCost = 4
        configuration.clock = clock
        // HummingbirdTesting's live client opens its connection before the test's body runs and never opens another:
        // on a busy machine a body's setup (people signed in, demo data) can outlast the 10 s a silent connection is
        // given, and its first request would meet a closed connection. The deadlines themselves are tested against a
        // running Quad (e2e/test_connections.py).
        // Testing mode: each page's template is checked against its model as it is drawn (`TemplateCheck`).
        configuration.testing = true
        configuration.headTimeoutSeconds = 300
        configuration.idleTimeoutSeconds = 3600
        return configuration
    }

    /// Runs `body` with Quad as `buildApplication` puts it together (`Quad.assemble`), on a new database of
    /// `engine`, its clock at `at` (the tests' instant by default); `configure` adjusts settings and `routes` adds
    /// test-only routes behind the same middleware. `live` serves it on a local port, through the whole HTTP
    /// pipeline (the fast path included), rather than calling the router directly. Its services run beside it (the
    /// event hub, the lines' and the rooms' keepers, the kept answers' invalidation), as in production; a test that
    /// must not have them (it drives a keeper's step itself) says `services: false`.
    package static func run(
        _ engine: Database.Engine = .sqlite, at instant: Date? = nil,
        configure: (inout ServerConfiguration) -> Void = { _ in },
        routes: (Routes) -> Void = { _ in },
        live: Bool = false, services: Bool = true, logger: Logger = TestDatabase.logger,
        _ body: @escaping @Sendable (TestApp, any TestClientProtocol) async throws -> Void
    ) async throws {
        try await TestDatabase.withDatabase(engine) { database in
            var configuration = configuration()
            let clock = TestTime.clock(at: instant)
            configuration.clock = clock
            configure(&configuration)
            let features = try await Features.start(configuration, database: database, logger: logger) { _ in }
            let quad = try await Quad.assemble(features, extra: routes)
            let testApp = TestApp(configuration: configuration, features: features, clock: clock)
            var app = Application(router: quad.router, server: quad.server, logger: logger)
            if services { app.addServices(quad.services) }
            try await app.test(live ? .live : .router) { client in try await body(testApp, client) }
        }
    }
}

extension TestApp {
    /// Runs `body` once the app's event hub listens: on PostgreSQL the hub hears every event, its own included,
    /// through LISTEN, which its service starts in the background.
    package func listening(_ body: () async throws -> Void) async throws {
        try await eventually("LISTEN is up") { platform.events.isListening }
        try await body()
    }

    /// Adds a person and signs them in; returns the bearer header of their session.
    package func signedIn(_ username: String, role: Role = .member) async throws -> HTTPFields {
        let accounts = features.accounts
        if try await accounts.people.find(username) == nil {
            _ = try await accounts.people.create(
                Person(username: username, displayName: username.capitalized, role: role),
                password: "password-\(username)")
        }
        let (token, _) = try await accounts.sessions.start(for: username, kind: .api)
        return [.authorization: "Bearer \(token)", .contentType: "application/json"]
    }
}

extension TestApp {
    /// A browser signed in as `username` (made with `role` if new): session and CSRF cookies, English, sending forms.
    package func browser(_ username: String, role: Role = .member, csrf: String) async throws -> HTTPFields {
        _ = try await signedIn(username, role: role)
        let (token, _) = try await features.accounts.sessions.start(for: username, kind: .web)
        return [
            .cookie: "quad_session=\(token); quad_csrf=\(csrf)", .acceptLanguage: "en",
            .contentType: "application/x-www-form-urlencoded", .accept: "text/html",
        ]
    }

    /// The person `username`, as stored.
    package func person(_ username: String) async throws -> Person? {
        try await features.accounts.people.find(username)
    }
}

extension TestClientProtocol {
    /// `POST /api/rooms/{room}/bookings` as whoever `headers` sign in.
    package func book(_ room: String, as headers: HTTPFields) async throws -> TestResponse {
        try await execute(
            uri: "/api/rooms/\(room)/bookings", method: .post, headers: headers, body: ByteBuffer(string: "{}")
        ) {
            $0
        }
    }
}

extension TestResponse {
    /// The body as a JSON object. A body that is not one (an HTML error page, a problem in another format, nothing)
    /// fails the test that reads it, rather than reading as `[:]`, where every `json["x"] == nil` would hold.
    package var json: [String: Any] {
        guard let object = try? JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any] else {
            Issue.record(
                "Not a JSON object (\(status.code), \(headers[.contentType] ?? "no type")): \(text.prefix(200))")
            return [:]
        }
        return object
    }
    package var text: String { String(buffer: body) }
}

/// Lines collected from `announce`, for checking what was printed.
package final class Announcements: Sendable {
    package init() {}

    private let lines = NIOLockedValueBox<[String]>([])
    package var all: [String] { lines.withLockedValue { $0 } }
    package func record(_ line: String) { lines.withLockedValue { $0.append(line) } }
}

extension TestClientProtocol {
    /// A new personal app link for whoever `headers` sign in, as the path the original apps are given.
    package func appLink(for headers: HTTPFields, label: String = "Test app") async throws -> String {
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

package struct AppLinkFailed: Error { var status: Int }

/// Every line a logger writes, message and metadata, for checking what the logs say (and never say).
package final class LogLines: Sendable {
    package init() {}

    private let lines = NIOLockedValueBox<[String]>([])
    package var all: String { lines.withLockedValue { $0.joined(separator: "\n") } }

    package var logger: Logger {
        var logger = Logger(label: "quad-test") { _ in Handler(lines: self) }
        logger.logLevel = .info
        return logger
    }

    package struct Handler: LogHandler {
        package let lines: LogLines
        package var metadata: Logger.Metadata = [:]
        package var logLevel: Logger.Level = .info

        package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        package func log(
            level: Logger.Level, message: Logger.Message, metadata: Logger.Metadata?, source: String, file: String,
            function: String, line: UInt
        ) {
            let all = self.metadata.merging(metadata ?? [:]) { $1 }
            lines.lines.withLockedValue { $0.append("\(level) \(message) \(all)") }
        }
    }
}
