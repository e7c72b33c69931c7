import Foundation
import QuadTestSupport
import SQLKit
import Testing

@testable import QuadPlatform
@testable import QuadServer

@Suite struct StoreTests {
    @Test(arguments: TestDatabase.engines)
    func migrationsRunOnceAndAreRecorded(engine: Database.Engine) async throws {
        try await TestDatabase.withDatabase(engine) { database in
            let fresh = try await Migrator.migrate(
                database, Platform.migrations, now: TestTime.start, logger: TestDatabase.logger)
            let again = try await Migrator.migrate(
                database, Platform.migrations, now: TestTime.start, logger: TestDatabase.logger)
            #expect(fresh)
            #expect(!again)
            let ids = try await database.withConnection { sql in
                try await sql.raw("SELECT id FROM quad_migrations ORDER BY id").all().map {
                    try $0.decode(column: "id", as: Int.self)
                }
            }
            #expect(ids == Platform.migrations.map(\.id))
        }
    }

    @Test(arguments: TestDatabase.engines)
    func aDatabaseNewerThanTheBinaryIsRefused(engine: Database.Engine) async throws {
        try await TestDatabase.withDatabase(engine) { database in
            let future = Migration(id: 9999, name: "from the future", statements: ["CREATE TABLE later (id INTEGER)"])
            try await Migrator.migrate(
                database, Platform.migrations + [future], now: TestTime.start, logger: TestDatabase.logger)
            let error = await #expect(throws: MigrationError.self) {
                try await Migrator.migrate(
                    database, Platform.migrations, now: TestTime.start, logger: TestDatabase.logger)
            }
            #expect(error?.description.contains("newer") == true)
        }
    }

    @Test(arguments: TestDatabase.engines)
    func aFailedMigrationLeavesNothingBehind(engine: Database.Engine) async throws {
        try await TestDatabase.withDatabase(engine) { database in
            let broken = Migration(
                id: 50, name: "broken", statements: ["CREATE TABLE half (id INTEGER)", "THIS IS NOT SQL"])
            await #expect(throws: (any Error).self) {
                try await Migrator.migrate(
                    database, Platform.migrations + [broken], now: TestTime.start, logger: TestDatabase.logger)
            }
            let recorded = try await database.withConnection { sql in
                try await sql.raw("SELECT id FROM quad_migrations WHERE id = 50").first()
            }
            #expect(recorded == nil)
            // The table the first statement made was rolled back with the migration.
            await #expect(throws: (any Error).self) {
                try await database.withConnection { try await $0.raw("SELECT id FROM half").run() }
            }
        }
    }

    @Test(arguments: TestDatabase.engines)
    func aTransactionThatThrowsWritesNothing(engine: Database.Engine) async throws {
        struct Refused: Error {}
        try await TestDatabase.withDatabase(engine) { database in
            try await database.withConnection { try await $0.raw("CREATE TABLE notes (body TEXT)").run() }
            await #expect(throws: Refused.self) {
                try await database.transaction { sql in
                    try await sql.raw("INSERT INTO notes (body) VALUES ('half')").run()
                    throw Refused()
                }
            }
            try await database.transaction { sql in try await sql.raw("INSERT INTO notes (body) VALUES ('whole')").run()
            }
            let bodies = try await database.withConnection { sql in
                try await sql.raw("SELECT body FROM notes").all().map { try $0.decode(column: "body", as: String.self) }
            }
            #expect(bodies == ["whole"])
        }
    }

    @Test func sqliteFileRunsInWALWithFullSynchronousWritesAndKeepsData() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("quad-\(UUID().uuidString).sqlite")
            .path
        defer { TestDatabase.removeSQLite(at: path) }
        let database = try await Database.open(.sqlite(path: path), logger: TestDatabase.logger)
        let (journal, synchronous) = try await database.withConnection { sql in
            let journal = try await sql.raw("PRAGMA journal_mode").first()?.decode(
                column: "journal_mode", as: String.self)
            let synchronous = try await sql.raw("PRAGMA synchronous").first()?.decode(
                column: "synchronous", as: Int.self)
            return (journal, synchronous)
        }
        #expect(journal == "wal")
        #expect(synchronous == 2)  // FULL
        try await Migrator.migrate(database, Platform.migrations, now: TestTime.start, logger: TestDatabase.logger)
        await database.close()

        let reopened = try await Database.open(.sqlite(path: path), logger: TestDatabase.logger)
        #expect(
            try await !Migrator.migrate(reopened, Platform.migrations, now: TestTime.start, logger: TestDatabase.logger)
        )
        await reopened.close()
    }

    @Test(arguments: TestDatabase.engines)
    func concurrentTransactionsDoNotInterleave(engine: Database.Engine) async throws {
        try await TestDatabase.withDatabase(engine) { database in
            try await database.withConnection {
                try await $0.raw("CREATE TABLE counter (n INTEGER NOT NULL)").run()
                try await $0.raw("INSERT INTO counter (n) VALUES (0)").run()
            }
            // Read-then-write increments lose updates unless each transaction sees the last one's result.
            let lock = engine == .postgres ? " FOR UPDATE" : ""
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<40 {
                    group.addTask {
                        try await database.transaction { sql in
                            let n = try await sql.raw("SELECT n FROM counter\(unsafeRaw: lock)").first()!.decode(
                                column: "n", as: Int.self)
                            try await sql.raw("UPDATE counter SET n = \(bind: n + 1)").run()
                        }
                    }
                }
                try await group.waitForAll()
            }
            let n = try await database.withConnection {
                try await $0.raw("SELECT n FROM counter").first()!.decode(column: "n", as: Int.self)
            }
            #expect(n == 40)
        }
    }
}
