import Foundation
import QuadCore
import QuadTestSupport
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
            defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
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

    @Test func sessionsEndAfterThirtyDaysIdle() async throws {
        try await TestDatabase.withDatabase(.sqlite) { database in
            let platform = try await Features.start(
                {
                    var c = TestApp.configuration(); c.loadDemoData = true; return c
                }(), database: database,
                logger: TestDatabase.logger
            ) { _ in }.platform
            let clock = ManualClock(now: TestTime.start)
            let sessions = SessionStore(database: platform.database, clock: clock)
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
            #expect(try await accounts.people.verify(username: "admin", password: password)?.isAdmin == true)
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
