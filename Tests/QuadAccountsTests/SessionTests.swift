import Foundation
import QuadCore
import QuadTestSupport
import ServiceLifecycle
import Testing

@testable import QuadAccounts
@testable import QuadPlatform
@testable import QuadRooms
@testable import QuadServer

@Suite struct SessionTests {
    /// A database that survives closing: a SQLite file, or the PostgreSQL schema.
    static func withDurableLocation(
        _ engine: Database.Engine, _ body: (DatabaseLocation) async throws -> Void
    ) async throws {
        if engine == .sqlite {
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("quad-\(UUID().uuidString).sqlite")
                .path
            defer { TestDatabase.removeSQLite(at: path) }
            try await body(.sqlite(path: path))
        } else {
            try await TestDatabase.withLocation(engine, body)
        }
    }

    @Test(arguments: TestDatabase.engines)
    func sessionsSurviveARestart(engine: Database.Engine) async throws {
        try await Self.withDurableLocation(engine) { location in
            var configuration = TestApp.configuration(location)
            configuration.loadDemoData = true
            let first = try await Database.open(location, logger: TestDatabase.logger)
            let platform = try await Features.start(configuration, database: first, logger: TestDatabase.logger) { _ in
            }.platform
            let (token, _) = try await Features(platform: platform).accounts.sessions.start(for: "kier", kind: .web)
            await first.close()

            let second = try await Database.open(location, logger: TestDatabase.logger)
            let restarted = try await Features.start(configuration, database: second, logger: TestDatabase.logger) {
                _ in
            }.platform
            let person = try await Features(platform: restarted).accounts.sessions.person(for: token)
            #expect(person?.username == "kier")
            #expect(person?.studentId == "305491")
            await second.close()
        }
    }

    /// Who a token signs in is read from memory once known, and a sign-out, a role change, a new password or a
    /// removal takes effect on the very next request.
    @Test func whatChangesASessionTakesEffectAtOnce() async throws {
        try await TestApp.run(at: TestTime.weekdayMorning, configure: { $0.loadDemoData = true }) { app, _ in
            let accounts = app.features.accounts
            let sessions = accounts.sessions
            let (ada, _) = try await sessions.start(for: "ada", kind: .web)
            let (again, _) = try await sessions.start(for: "ada", kind: .api)
            let (grace, _) = try await sessions.start(for: "grace", kind: .web)
            #expect(try await sessions.person(for: ada)?.role == .member)
            #expect(sessions.cache.entry(SessionStore.hash(ada)) != nil, "the second read comes from memory")

            _ = try await accounts.people.update(
                "ada", displayName: nil, role: .admin, studentId: nil, password: nil, keys: accounts.keys)
            #expect(try await sessions.person(for: ada)?.role == .admin)
            try await sessions.end(ada)
            #expect(try await sessions.person(for: ada) == nil)
            #expect(try await sessions.person(for: again) != nil)
            _ = try await accounts.people.update(
                "ada", displayName: nil, role: nil, studentId: nil, password: "a new password for ada",
                keys: accounts.keys)
            #expect(try await sessions.person(for: again) == nil)

            #expect(try await sessions.person(for: grace) != nil)
            _ = try await accounts.people.delete("grace", removals: accounts.removals, keys: accounts.keys)
            #expect(try await sessions.person(for: grace) == nil)
        }
    }

    /// Two instances on one PostgreSQL database: a sign-out or a role change on one takes effect on the other at
    /// once, although the other had the session in memory.
    // (A guard against a hang, not a speed test: on 2 busy cores the whole suite's minute passes while it waits.)
    @Test(.enabled(if: TestDatabase.postgresURL != nil), .timeLimit(.minutes(5)))
    func aChangeOnOneInstanceTakesEffectOnTheOther() async throws {
        try await TwoInstances.run(loadDemoData: true) { firstQuad, secondQuad in
            let first = firstQuad.accounts
            let second = secondQuad.accounts
            let (token, _) = try await first.sessions.start(for: "ada", kind: .web)
            let (other, _) = try await first.sessions.start(for: "ada", kind: .api)
            #expect(try await second.sessions.person(for: token)?.role == .member)
            #expect(try await second.sessions.person(for: other)?.role == .member)
            #expect(second.sessions.cache.entry(SessionStore.hash(token)) != nil)

            _ = try await first.people.update(
                "ada", displayName: nil, role: .admin, studentId: nil, password: nil, keys: first.keys)
            try await eventually("the role change reaches the other instance", timeout: .seconds(2)) {
                try await second.sessions.person(for: token)?.role == .admin
            }
            try await first.sessions.end(token)
            try await eventually("the sign-out reaches the other instance", timeout: .seconds(2)) {
                try await second.sessions.person(for: token) == nil
            }
            #expect(try await second.sessions.person(for: other)?.role == .admin)
        }
    }

    @Test func sessionsEndAfterThirtyDaysIdle() async throws {
        try await TestDatabase.withDatabase(.sqlite) { database in
            let platform = try await Features.start(
                {
                    var c = TestApp.configuration(); c.loadDemoData = true; return c
                }(), database: database,
                logger: TestDatabase.logger
            ) { _ in }.platform
            let clock = ManualClock(now: TestTime.start)
            let sessions = SessionStore(database: platform.database, clock: clock, hub: platform.events)
            let (token, _) = try await sessions.start(for: "ada", kind: .api)
            clock.advance(by: .seconds(29 * 24 * 3600))
            #expect(try await sessions.person(for: token) != nil)  // used: the 30 days start again
            clock.advance(by: .seconds(29 * 24 * 3600))
            #expect(try await sessions.person(for: token) != nil)
            clock.advance(by: .seconds(31 * 24 * 3600))
            #expect(try await sessions.person(for: token) == nil)
        }
    }

    @Test func theFirstStartCreatesAnAdminAndDemoPeopleWithPrintedPasswords() async throws {
        try await TestDatabase.withDatabase(.sqlite) { database in
            var configuration = TestApp.configuration()
            configuration.loadDemoData = true
            let printed = Announcements()
            let platform = try await Features.start(configuration, database: database, logger: TestDatabase.logger) {
                printed.record($0)
            }.platform
            let adminLine = try #require(printed.all.first { $0.hasPrefix("Admin account created") })
            let password = try #require(adminLine.split(separator: " ").dropLast(2).last.map(String.init))
            let accounts = Features(platform: platform).accounts
            #expect(
                try await accounts.people.verify(
                    username: "admin", password: password, place: try accounts.hashing.place())?.isAdmin == true)
            let demo = try #require(printed.all.first { $0.hasPrefix("Demo people") })
            #expect(demo.contains("kier (member)"))
            // Passwords are random: never the same twice, never in the code.
            _ = try await Features.start(configuration, database: database, logger: TestDatabase.logger) {
                printed.record($0)
            }.platform
            #expect(printed.all.filter { $0.hasPrefix("Admin account created") }.count == 1)
        }
    }
}
