import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import QuadCore
import QuadTestSupport
import Testing

@testable import QuadAccounts
@testable import QuadPlatform
@testable import QuadRooms
@testable import QuadServer

@Suite struct AccountsAPITests {
    static let json: HTTPFields = [.contentType: "application/json"]
    static let admin: HTTPFields = [.authorization: "Bearer \(TestApp.adminToken)", .contentType: "application/json"]

    static func signIn(
        _ client: some TestClientProtocol, _ username: String, _ password: String
    ) async throws
        -> TestResponse
    {
        try await client.execute(
            uri: "/api/sessions", method: .post, headers: json,
            body: ByteBuffer(string: "{\"username\": \"\(username)\", \"password\": \"\(password)\"}")
        ) { $0 }
    }

    static func addAda(_ client: some TestClientProtocol) async throws {
        try await client.execute(
            uri: "/api/people", method: .post, headers: admin,
            body: ByteBuffer(
                string:
                    "{\"username\": \"Ada\", \"displayName\": \"Ada Lovelace\", \"password\": \"analytical-engine\"}")
        ) { #expect($0.status == .created) }
    }

    @Test func signInAskWhoIAmAndSignOut() async throws {
        try await TestApp.run { _, client in
            try await Self.addAda(client)
            let session = try await Self.signIn(client, "ADA", "analytical-engine")  // usernames ignore case
            #expect(session.status == .created)
            let token = try #require(session.json["token"] as? String)
            #expect(token.count >= 43)
            #expect(session.json["expiresAt"] is String)
            let bearer: HTTPFields = [.authorization: "Bearer \(token)"]
            try await client.execute(uri: "/api/me", method: .get, headers: bearer) { response in
                #expect(response.json["username"] as? String == "Ada")
                #expect(response.json["role"] as? String == "member")
            }
            try await client.execute(uri: "/api/sessions/current", method: .delete, headers: bearer) {
                #expect($0.status == .noContent)
            }
            try await client.execute(uri: "/api/me", method: .get, headers: bearer) {
                #expect($0.status == .unauthorized)
            }
            try await client.execute(uri: "/api/me", method: .get) { #expect($0.status == .unauthorized) }
        }
    }

    @Test func unknownUserAndWrongPasswordGetTheSameAnswer() async throws {
        try await TestApp.run { _, client in
            try await Self.addAda(client)
            let wrong = try await Self.signIn(client, "ada", "not-the-password")
            let unknown = try await Self.signIn(client, "nobody", "not-the-password")
            #expect(wrong.status == .unauthorized && unknown.status == .unauthorized)
            #expect(wrong.json["detail"] as? String == unknown.json["detail"] as? String)
            #expect(wrong.json["title"] as? String == unknown.json["title"] as? String)
        }
    }

    @Test func threeFailuresMakeThatAddressWaitBeforeTryingThatNameAgain() async throws {
        try await TestApp.run { _, client in
            try await Self.addAda(client)
            for _ in 0..<LoginThrottle.freeFailures {
                #expect(try await Self.signIn(client, "ada", "guess-guess-guess").status == .unauthorized)
            }
            let waiting = try await Self.signIn(client, "ada", "analytical-engine")  // even the right password
            #expect(waiting.status == .tooManyRequests)
            let retryAfter = try #require(waiting.headers[.retryAfter].flatMap { Int($0) })
            #expect((1...Int(LoginThrottle.firstDelay)).contains(retryAfter))
        }
    }

    /// Tries that race for one name from one address: the back-off is taken before any hash, so one try is judged
    /// and the others wait (39 got through to the hash before).
    @Test(arguments: TestDatabase.engines)
    func racingTriesForAThrottledNameAreJudgedOneAtATime(engine: Database.Engine) async throws {
        try await TestApp.run(engine) { app, client in
            try await Self.addAda(client)
            for _ in 0..<LoginThrottle.freeFailures {
                #expect(try await Self.signIn(client, "ada", "guess-guess-guess").status == .unauthorized)
            }
            app.clock.advance(by: .seconds(Int(LoginThrottle.firstDelay)))
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<40 {
                    // The right password among them: it must not get through while the pair is throttled.
                    let password = index == 39 ? "analytical-engine" : "guess-guess-guess"
                    group.addTask { try await Self.signIn(client, "ada", password).status.code }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            let judged = statuses.filter { $0 != 429 && $0 != 503 }
            #expect(judged.count == 1, "\(statuses.sorted())")
            #expect(statuses.allSatisfy { [201, 401, 429, 503].contains($0) })
        }
    }

    /// Failures that race from one address for many names never pass the address's limit (35 racing failures
    /// were all counted before).
    @Test(arguments: TestDatabase.engines)
    func racingFailuresNeverPassTheAddressLimit(engine: Database.Engine) async throws {
        try await TestApp.run(engine) { _, client in
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<(LoginThrottle.addressLimit + 5) {
                    group.addTask { try await Self.signIn(client, "name\(index)", "guess-guess-guess").status.code }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == 401 }.count <= LoginThrottle.addressLimit, "\(statuses.sorted())")
            #expect(statuses.allSatisfy { [401, 429, 503].contains($0) })
        }
    }

    /// A throttle on a new database, on a clock the test moves.
    static func withThrottle(
        _ body: @escaping @Sendable (LoginThrottle, ManualClock) async throws -> Void
    )
        async throws
    {
        try await TestDatabase.withDatabase(.sqlite) { database in
            let clock = ManualClock(now: TestTime.start)
            try await Migrator.migrate(
                database, (Platform.migrations + Features.migrations).sorted { $0.id < $1.id }, now: clock.now,
                logger: TestDatabase.logger)
            try await body(LoginThrottle(database: database, clock: clock), clock)
        }
    }

    @Test func failuresSlowDownOneNameFromOneAddressAndNeverLockAPersonOutElsewhere() async throws {
        try await Self.withThrottle { throttle, clock in
            for _ in 0..<3 { try await throttle.fail("grace", "10.0.0.9") }
            #expect(try await throttle.wait("grace", "10.0.0.9") == 5)
            // Grace at home, and ada on the attacker's network, are not held back.
            #expect(try await throttle.wait("grace", "192.0.2.7") == nil)
            #expect(try await throttle.wait("ada", "10.0.0.9") == nil)
            // Each further failure doubles the wait.
            var waits: [Int] = []
            for _ in 0..<3 {
                clock.advance(
                    by: .seconds(Int(try await throttle.wait("grace", "10.0.0.9") ?? 0)))
                #expect(try await throttle.wait("grace", "10.0.0.9") == nil)
                try await throttle.fail("grace", "10.0.0.9")
                waits.append(try #require(try await throttle.wait("grace", "10.0.0.9")))
            }
            #expect(waits == [10, 20, 40])
            #expect(LoginThrottle.delay(afterFailures: 40) == LoginThrottle.window)
        }
    }

    @Test func oneAddressTryingManyNamesIsStoppedThereOnly() async throws {
        try await Self.withThrottle { throttle, clock in
            for index in 0..<LoginThrottle.addressLimit {
                try await throttle.fail("name\(index)", "10.0.0.9")
            }
            #expect(try await throttle.wait("someone-else", "10.0.0.9") != nil)
            #expect(try await throttle.wait("someone-else", "10.0.0.10") == nil)
            clock.advance(by: .seconds(15 * 60 + 1))
            #expect(try await throttle.wait("someone-else", "10.0.0.9") == nil)
        }
    }

    @Test func membersCannotReachAdminRoutesAndVisitorsMustSignIn() async throws {
        try await TestApp.run { app, client in
            let member = try await app.signedIn("grace")
            for (uri, method) in [("/api/people", HTTPRequest.Method.get), ("/api/people/grace", .delete)] {
                try await client.execute(uri: uri, method: method, headers: member) { #expect($0.status == .forbidden) }
                try await client.execute(uri: uri, method: method) { #expect($0.status == .unauthorized) }
            }
            let room = ByteBuffer(string: "{\"name\": \"X\", \"building\": \"Y\", \"capacity\": 3}")
            try await client.execute(uri: "/api/rooms", method: .post, headers: member, body: room) {
                #expect($0.status == .forbidden)
            }
        }
    }

    @Test func adminsManagePeopleAndPasswordsNeverShow() async throws {
        try await TestApp.run { _, client in
            let weak = ByteBuffer(string: "{\"username\": \"x\", \"displayName\": \"\", \"password\": \"short\"}")
            try await client.execute(uri: "/api/people", method: .post, headers: Self.admin, body: weak) { response in
                #expect(response.status == .unprocessableContent)
                let fields = (response.json["errors"] as? [[String: String]])?.compactMap { $0["field"] }
                #expect(fields == ["username", "displayName", "password"])
                #expect((response.json["detail"] as? String)?.contains("at least 10 characters") == true)
                #expect(!response.text.contains("short\""))
            }
            try await Self.addAda(client)
            let clash = ByteBuffer(
                string: "{\"username\": \"ADA\", \"displayName\": \"Other\", \"password\": \"0123456789\"}")
            try await client.execute(uri: "/api/people", method: .post, headers: Self.admin, body: clash) {
                #expect($0.status == .conflict)
            }
            try await client.execute(uri: "/api/people", method: .get, headers: Self.admin) { response in
                #expect(!response.text.contains("analytical-engine"))
                #expect(!response.text.contains("password"))
                let names = (response.json["people"] as? [[String: Any]])?.compactMap { $0["username"] as? String }
                #expect(names == ["Ada", "admin"])
            }
            let promote = ByteBuffer(string: "{\"role\": \"admin\", \"studentId\": \"305491\"}")
            try await client.execute(uri: "/api/people/ada", method: .patch, headers: Self.admin, body: promote) {
                #expect($0.json["role"] as? String == "admin")
                #expect($0.json["studentId"] as? String == "305491")
            }
            // A new password ends the person's sessions.
            let session = try await Self.signIn(client, "ada", "analytical-engine")
            let token = try #require(session.json["token"] as? String)
            let reset = ByteBuffer(string: "{\"password\": \"difference-engine\"}")
            try await client.execute(uri: "/api/people/ada", method: .patch, headers: Self.admin, body: reset) {
                #expect($0.status == .ok)
                #expect(!$0.text.contains("difference-engine"))
            }
            try await client.execute(uri: "/api/me", method: .get, headers: [.authorization: "Bearer \(token)"]) {
                #expect($0.status == .unauthorized)
            }
            #expect(try await Self.signIn(client, "ada", "difference-engine").status == .created)
        }
    }

    @Test func removingAPersonReleasesTheirBookingsAtOnce() async throws {
        try await TestApp.run(at: TestTime.weekdayMorning, configure: { $0.loadDemoData = true }) { app, client in
            let grace = try await app.signedIn("grace")
            try await client.execute(
                uri: "/api/rooms/mina/bookings", method: .post, headers: grace, body: ByteBuffer(string: "{}")
            ) {
                #expect($0.json["spots"] as? Int == 38)
            }
            try await client.execute(uri: "/api/people/grace", method: .delete, headers: Self.admin) {
                #expect($0.status == .noContent)
            }
            try await client.execute(uri: "/api/rooms/mina", method: .get) { #expect($0.json["spots"] as? Int == 39) }
            try await client.execute(uri: "/api/me", method: .get, headers: grace) {
                #expect($0.status == .unauthorized)
            }
        }
    }

    @Test func aCookieSessionNeedsTheCSRFTokenToChangeThings() async throws {
        try await TestApp.run(at: TestTime.weekdayMorning, configure: { $0.loadDemoData = true }) { app, client in
            let accounts = app.features.accounts
            let (token, _) = try await accounts.sessions.start(for: "ada", kind: .web)
            let cookie = "quad_session=\(token); quad_csrf=abcdefghijklmnopqrstuvwxyz0123456789ABCD"
            try await client.execute(
                uri: "/api/rooms/mina/bookings", method: .post,
                headers: [.cookie: cookie, .contentType: "application/json"],
                body: ByteBuffer(string: "{}")
            ) { #expect($0.status == .forbidden) }
            try await client.execute(
                uri: "/api/rooms/mina/bookings", method: .post,
                headers: [
                    .cookie: cookie, .contentType: "application/json",
                    CSRF.header: "abcdefghijklmnopqrstuvwxyz0123456789ABCD",
                ],
                body: ByteBuffer(string: "{}")
            ) { #expect($0.status == .created) }
            // Reading needs no token.
            try await client.execute(uri: "/api/me", method: .get, headers: [.cookie: cookie]) {
                #expect($0.json["username"] as? String == "ada")
            }
        }
    }

    /// Signing out ends the session and tells the browser to drop what Quad keeps there for offline use (the
    /// service worker's copies of pages), so a shared computer keeps nothing personal.
    @Test func signingOutLeavesNothingPersonalInTheBrowser() async throws {
        try await TestApp.run(at: TestTime.weekdayMorning, configure: { $0.loadDemoData = true }) { app, client in
            let (token, _) = try await app.features.accounts.sessions.start(for: "ada", kind: .web)
            let csrf = "abcdefghijklmnopqrstuvwxyz0123456789ABCD"
            let cookie = "quad_session=\(token); quad_csrf=\(csrf)"
            try await client.execute(
                uri: "/signout", method: .post,
                headers: [
                    .cookie: cookie, .contentType: "application/x-www-form-urlencoded", .origin: "http://localhost",
                ],
                body: ByteBuffer(string: "csrf=\(csrf)")
            ) { response in
                #expect(response.status == .seeOther)
                #expect(response.headers[HTTPField.Name("Clear-Site-Data")!] == #""cache", "storage""#)
            }
            try await client.execute(uri: "/api/me", method: .get, headers: [.cookie: cookie]) {
                #expect($0.status == .unauthorized)
            }
        }
    }
}

extension LoginThrottle {
    /// A failed try: taken, and never given back.
    func fail(_ username: String, _ address: String) async throws {
        guard case .reserved = try await reserve(username: username, address: address) else {
            Issue.record("a try for \(username) from \(address) was refused")
            return
        }
    }

    /// The seconds a try for the pair would wait now (nil: it may go ahead), without taking one.
    func wait(_ username: String, _ address: String) async throws -> Int? {
        switch try await reserve(username: username, address: address) {
        case .wait(let seconds): return seconds
        case .reserved(let id, _):
            try await cancel(reservation: id)
            return nil
        }
    }
}
