import Foundation
import Hummingbird
import HummingbirdTesting
import NIOConcurrencyHelpers
import QuadCore
import QuadTestSupport
import Testing

@testable import QuadPlatform
@testable import QuadServer

@Suite struct IdempotencyTests {
    /// A route that counts how often it really ran, optionally slowly.
    final class Counter: Sendable {
        let runs = NIOLockedValueBox(0)
        func routes(delay: Duration = .zero) -> (Routes) -> Void {
            { routes in
                routes.on(.post, "/api/test/orders", .person) { request, _ -> Response in
                    try await Task.sleep(for: delay)
                    let n = self.runs.withLockedValue { n in
                        n += 1
                        return n
                    }
                    return Response(
                        status: .created, headers: [.contentType: "application/json"],
                        body: .init(byteBuffer: ByteBuffer(string: "{\"order\": \(n)}")))
                }
            }
        }
    }

    /// Ada's bearer header in `app` (made on first asking).
    static func ada(_ app: TestApp) async throws -> HTTPFields { try await app.signedIn("ada") }

    static func post(
        _ client: some TestClientProtocol, key: String, body: String, as person: HTTPFields
    ) async throws -> TestResponse {
        var headers = person
        headers[.idempotencyKey] = key
        return try await client.execute(
            uri: "/api/test/orders", method: .post, headers: headers, body: ByteBuffer(string: body)
        ) { $0 }
    }

    @Test(arguments: TestDatabase.engines)
    func aRepeatGetsTheFirstAnswerAgain(engine: Database.Engine) async throws {
        let counter = Counter()
        try await TestApp.run(engine, routes: counter.routes()) { app, client in
            let ada = try await Self.ada(app)
            let first = try await Self.post(client, key: "k1", body: "{\"item\": 1}", as: ada)
            let again = try await Self.post(client, key: "k1", body: "{\"item\": 1}", as: ada)
            #expect(first.status == .created && again.status == .created)
            #expect(first.text == again.text)
            #expect(again.headers[.idempotentReplayed] == "true")
            #expect(counter.runs.withLockedValue { $0 } == 1)

            let other = try await Self.post(client, key: "k2", body: "{\"item\": 1}", as: ada)
            #expect(other.json["order"] as? Int == 2)
        }
    }

    @Test(arguments: TestDatabase.engines)
    func theSameKeyWithAnotherBodyIsRefused(engine: Database.Engine) async throws {
        let counter = Counter()
        try await TestApp.run(engine, routes: counter.routes()) { app, client in
            let ada = try await Self.ada(app)
            _ = try await Self.post(client, key: "k", body: "{\"item\": 1}", as: ada)
            let reused = try await Self.post(client, key: "k", body: "{\"item\": 2}", as: ada)
            #expect(reused.status == .unprocessableContent)
            #expect(reused.headers[.contentType] == "application/problem+json")
            #expect(counter.runs.withLockedValue { $0 } == 1)
        }
    }

    @Test(arguments: TestDatabase.engines)
    func concurrentRepeatsRunOnceAndTheRestWaitOrReplay(engine: Database.Engine) async throws {
        let counter = Counter()
        try await TestApp.run(engine, routes: counter.routes(delay: .milliseconds(200))) { app, client in
            let ada = try await Self.ada(app)
            let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for _ in 0..<50 {
                    group.addTask { try await Self.post(client, key: "same", body: "{\"item\": 1}", as: ada).status }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(counter.runs.withLockedValue { $0 } == 1)
            #expect(statuses.allSatisfy { $0 == .created || $0 == .conflict })
            #expect(statuses.contains(.conflict))
            // Once the first is done, a repeat is answered from the store.
            let later = try await Self.post(client, key: "same", body: "{\"item\": 1}", as: ada)
            #expect(later.status == .created && later.json["order"] as? Int == 1)
        }
    }

    @Test func keysExpireAfterADay() async throws {
        try await TestDatabase.withDatabase(.sqlite) { database in
            let clock = ManualClock(now: TestTime.start)
            try await Migrator.migrate(database, Platform.migrations, now: clock.now, logger: TestDatabase.logger)
            let store = IdempotencyStore(database: database, clock: clock)
            guard case .claimed = try await store.claim(scope: "s", key: "k", fingerprint: "a") else {
                Issue.record("first claim should win")
                return
            }
            try await store.complete(scope: "s", key: "k", response: .init(status: 201, headers: [:], body: []))
            guard case .completed = try await store.claim(scope: "s", key: "k", fingerprint: "a") else {
                Issue.record("a repeat within a day replays")
                return
            }
            clock.advance(by: .seconds(24 * 3600 + 1))
            guard case .claimed = try await store.claim(scope: "s", key: "k", fingerprint: "b") else {
                Issue.record("after a day the key is free again")
                return
            }
        }
    }
}
