import Foundation
import Hummingbird
import HummingbirdTesting
import QuadCore
import QuadTestSupport
import SQLKit
import Testing

@testable import QuadAccounts
@testable import QuadLibrary
@testable import QuadPlatform
@testable import QuadRooms
@testable import QuadServer
@testable import QuadSpecials
@testable import QuadTimetable

/// What an allowed caller can still do with unusual input: every limit is a 4xx problem, nothing is held for
/// good, no secret is kept in clear, and every answer carries the default security headers.
@Suite struct BoundsTests {
    static let admin: HTTPFields = [.authorization: "Bearer \(TestApp.adminToken)", .contentType: "application/json"]

    @Test func aBodyOverTheJSONLimitIs413WhateverTypeItDeclares() async throws {
        try await TestApp.run { _, client in
            let big = ByteBuffer(repeating: UInt8(ascii: "a"), count: BodyLimit.json + 1)
            for (uri, type) in [
                ("/api/rooms", "image/png"), ("/api/rooms", "application/json"), ("/signin", "image/png"),
                ("/signin", "application/x-www-form-urlencoded"), ("/api/books/delete", "multipart/form-data"),
            ] {
                var headers = Self.admin
                headers[.contentType] = type
                try await client.execute(uri: uri, method: .post, headers: headers, body: big) { response in
                    #expect(response.status == .contentTooLarge, "\(uri) as \(type)")
                    #expect(response.headers[.contentType] == "application/problem+json")
                }
            }
        }
    }

    @Test func aSignInWithAnIdempotencyKeyKeepsNoToken() async throws {
        try await TestApp.run { app, client in
            _ = try await app.signedIn("ada")
            var headers: HTTPFields = [.contentType: "application/json"]
            headers[.idempotencyKey] = "sign-in-1"
            var tokens: [String] = []
            for _ in 0..<2 {
                try await client.execute(
                    uri: "/api/sessions", method: .post, headers: headers,
                    body: ByteBuffer(string: #"{"username": "ada", "password": "password-ada"}"#)
                ) { response in
                    #expect(response.status == .created)
                    #expect(response.headers[.idempotentReplayed] == nil)
                    tokens += [response.json["token"] as? String].compactMap { $0 }
                }
            }
            // The retry signed in again: a new session, and no answer was stored to replay.
            #expect(tokens.count == 2 && tokens[0] != tokens[1])
            let kept = try await app.platform.database.withConnection { sql in
                try await sql.raw("SELECT COUNT(*) AS n FROM idempotency_keys").first()?.decode(
                    column: "n", as: Int.self)
            }
            #expect(kept == 0)
        }
    }

    @Test func everyAnswerCarriesTheSecurityHeadersAndPersonalOnesArePrivate() async throws {
        try await TestApp.run { app, client in
            let ada = try await app.signedIn("ada")
            for (uri, headers) in [
                ("/", HTTPFields()), ("/rooms", [:]), ("/api/rooms", [:]), ("/nowhere", [:]), ("//api/rooms", [:]),
                ("/api/me", ada),
            ] {
                try await client.execute(uri: uri, method: .get, headers: headers) { response in
                    #expect(response.headers[.init("X-Content-Type-Options")!] == "nosniff", "\(uri)")
                    let policy = response.headers[.init("Content-Security-Policy")!] ?? ""
                    #expect(policy.contains("frame-ancestors 'none'") && policy.contains("script-src 'self'"), "\(uri)")
                    #expect(response.headers[.init("Referrer-Policy")!] == "same-origin", "\(uri)")
                }
            }
            try await client.execute(uri: "/api/me", method: .get, headers: ada) {
                #expect($0.headers[.cacheControl]?.hasPrefix("private") == true)
            }
            try await client.execute(uri: "/api/rooms", method: .get) {
                #expect($0.headers[.cacheControl]?.contains("private") != true)
            }
        }
    }

    @Test func anEventStreamGivesItsSlotBackWhenNeverReadOrWhenItsReaderLeaves() async throws {
        try await TestDatabase.withDatabase(.sqlite) { database in
            let hub = EventHub(
                database: database, capacity: 4096, clock: TestTime.clock(), logger: TestDatabase.logger)
            let streams = EventStreams(hub: hub, heartbeat: .seconds(30), maxPerClient: 2)
            let client = "10.0.0.9"
            // Answered and never read (a HEAD, a connection closed first): dropped, they give their slots back.
            for _ in 0..<5 {
                let held = try (0..<2).map { _ in
                    try streams.open(client: client, person: nil, asked: .init(lastEventId: nil, types: nil))
                }
                #expect(held.count == 2 && streams.held(by: client) == 2)
                #expect(throws: Problem.self) {
                    try streams.open(client: client, person: nil, asked: .init(lastEventId: nil, types: nil))
                }
            }
            #expect(streams.held(by: client) == 0)
            // Read, then left by its reader (the client gone, a write failed).
            do {
                var frames = try streams.open(client: client, person: nil, asked: .init(lastEventId: nil, types: nil))
                    .makeAsyncIterator()
                let first = try #require(try await frames.next())
                #expect(String(decoding: first, as: UTF8.self).hasPrefix("retry: "))
                #expect(streams.held(by: client) == 1)
            }
            #expect(streams.held(by: client) == 0)
            // Answered and read once, then never again (a reader that stopped reading): cut off, not buffered.
            var stalled = try streams.open(client: client, person: nil, asked: .init(lastEventId: nil, types: nil))
                .makeAsyncIterator()
            _ = try await stalled.next()
            for index in 0..<(EventStreams.backlog + 20) {
                await hub.publishForTesting("room", ["id": "r\(index)"])
            }
            let deadline = ContinuousClock.now + .seconds(10)
            while streams.held(by: client) > 0, ContinuousClock.now < deadline { await Task.yield() }
            #expect(streams.held(by: client) == 0)
        }
    }

    /// PostgreSQL refuses a NUL in a query: a lookup by a name, a username or a student id that holds one
    /// answers like one that names nothing, never with a 500.
    @Test(arguments: TestDatabase.engines)
    func lookupsByTextWithANULAnswerNotFound(engine: Database.Engine) async throws {
        try await TestApp.run(engine) { app, client in
            let ada = try await app.signedIn("ada")
            try await client.execute(
                uri: "/api/book", method: .post, headers: ada, body: ByteBuffer(string: #"{"name": "Ljerka\u0000"}"#)
            ) { #expect($0.status == .notFound) }
            try await client.execute(
                uri: "/api/sessions", method: .post, headers: [.contentType: "application/json"],
                body: ByteBuffer(string: #"{"username": "ada\u0000", "password": "password-ada"}"#)
            ) { #expect($0.status == .unauthorized) }
            try await client.execute(uri: "/api/schedules?student=30%0049", method: .get, headers: Self.admin) {
                #expect($0.status == .notFound)
            }
        }
    }

    @Test func deletingBooksTakesAtMostAHundredIds() async throws {
        try await TestApp.run { _, client in
            let ids = (1...(BookValidation.maxDeletedAtOnce + 1)).map(String.init).joined(separator: ",")
            try await client.execute(
                uri: "/api/books/delete", method: .post, headers: Self.admin,
                body: ByteBuffer(string: "{\"ids\": [\(ids)]}")
            ) { response in
                #expect(response.status == .unprocessableContent)
                #expect(response.text.contains("at most 100"))
            }
        }
    }

    @Test func datesOutsideTwoThousandToTwentyNinetyNineAreRefused() async throws {
        try await TestApp.run { app, client in
            let kier = try await app.signedIn("kier")
            try await client.execute(uri: "/api/schedules?date=9999-01-04", method: .get, headers: kier) {
                #expect($0.status == .badRequest)
            }
            try await client.execute(
                uri: "/api/specials", method: .post, headers: Self.admin,
                body: ByteBuffer(
                    string:
                        #"{"display_name": "Far", "width": 1, "height": 1, "original_price": "2", "price": "1", "validFrom": "9999-01-01T00:00Z"}"#
                )
            ) { response in
                #expect(response.status == .unprocessableContent)
                #expect(response.text.contains("validFrom"))
            }
        }
        #expect(throws: ValidationFailure.self) {
            try TimetableInput.campus(
                name: "Far", timeZone: "UTC", semesterStart: "9999-03-01", teachingWeeks: "12", breaks: "")
        }
    }

    @Test func openSignUpIsThrottledPerAddressBeforeAnyHash() async throws {
        try await TestApp.run(configure: { $0.openSignup = true }) { _, client in
            var statuses: [HTTPResponse.Status] = []
            for index in 0..<6 {
                let form =
                    "csrf=\(CSRFTests.token)&username=new\(index)&displayName=New&password=long-enough-password"
                try await client.execute(
                    uri: "/signup", method: .post,
                    headers: [
                        .contentType: "application/x-www-form-urlencoded", .cookie: "quad_csrf=\(CSRFTests.token)",
                    ],
                    body: ByteBuffer(string: form)
                ) { statuses.append($0.status) }
            }
            #expect(statuses.prefix(5).allSatisfy { $0 != .tooManyRequests })
            #expect(statuses.last == .tooManyRequests)
        }
    }

    @Test func onlyANamedProxyMaySayWhoTheClientIs() throws {
        let trusted: Set<String> = ["10.0.0.1"]
        let request = Request(
            head: .init(
                method: .get, scheme: nil, authority: nil, path: "/",
                headerFields: [.xForwardedFor: "6.6.6.6, 192.0.2.7, 10.0.0.1"]), body: .init(buffer: .init()))
        // The last hop that is not a trusted proxy: what comes before it is the client's to write.
        #expect(AccessMiddleware.forwardedClient(request, peer: "10.0.0.1", trusted: trusted) == "192.0.2.7")
        #expect(AccessMiddleware.forwardedClient(request, peer: "192.0.2.99", trusted: trusted) == nil)
        #expect(ServerConfiguration.parseProxies("10.0.0.1, ::1") == ["10.0.0.1", "::1"])
        #expect(ServerConfiguration.parseProxies("off") == [])
        #expect(ServerConfiguration.parseProxies("on") == nil)
    }
}
