import Foundation
import Logging
import QuadCore
import QuadPlatform
import QuadWaitingLines
import SQLKit
import Testing

/// The engines store tests run on: SQLite always, PostgreSQL when `QUAD_TEST_POSTGRES_URL` is set (CI sets it).
package enum TestDatabase {
    package static let postgresURL = ProcessInfo.processInfo.environment["QUAD_TEST_POSTGRES_URL"].flatMap {
        $0.isEmpty ? nil : $0
    }

    package static var engines: [Database.Engine] {
        postgresURL == nil ? [.sqlite] : [.sqlite, .postgres]
    }

    package static let logger: Logger = {
        var logger = Logger(label: "quad-test")
        logger.logLevel = .warning
        return logger
    }()

    /// A new, empty database of `engine`: an SQLite file, as `quad serve` uses (WAL, a second connection for
    /// reads), or a PostgreSQL schema of its own; removed afterwards.
    package static func withLocation<R>(
        _ engine: Database.Engine, _ body: (DatabaseLocation) async throws -> R
    ) async throws -> R {
        switch engine {
        case .sqlite:
            let path = FileManager.default.temporaryDirectory.appendingPathComponent(
                "quad-test-\(UUID().uuidString).sqlite"
            ).path
            defer { removeSQLite(at: path) }
            return try await body(.sqlite(path: path))
        case .postgres:
            let url = try #require(postgresURL)
            let schema = "t" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(16)
            // Small pools: many tests run at once against one server's limited connection slots.
            let separator = url.contains("?") ? "&" : "?"
            let admin = try await Database.open(.postgres(url: url + separator + "pool=1"), logger: logger)
            try await admin.withConnection { try await $0.raw("CREATE SCHEMA \(ident: schema)").run() }
            do {
                let result = try await body(.postgres(url: url + separator + "pool=2&schema=" + schema))
                try await admin.withConnection { try await $0.raw("DROP SCHEMA \(ident: schema) CASCADE").run() }
                await admin.close()
                return result
            } catch {
                try? await admin.withConnection { try await $0.raw("DROP SCHEMA \(ident: schema) CASCADE").run() }
                await admin.close()
                throw error
            }
        }
    }

    /// Removes an SQLite database's files: its own, its journal's, and the lock a server using it holds
    /// (`ServingLock`), which the tests left behind by the thousand.
    package static func removeSQLite(at path: String) {
        for suffix in ["", "-wal", "-shm", ".lock"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    /// An open, empty database of `engine`, closed afterwards.
    package static func withDatabase<R>(
        _ engine: Database.Engine, _ body: (Database) async throws -> R
    ) async throws -> R {
        try await withLocation(engine) { location in
            let database = try await Database.open(location, logger: logger)
            do {
                let result = try await body(database)
                await database.close()
                return result
            } catch {
                await database.close()
                throw error
            }
        }
    }
}

extension WaitingLists {
    /// The waiting lines of a store built by hand (no server around it): their events go to a hub of their own.
    package static func testing(_ database: Database, clock: any QuadClock) -> WaitingLists {
        WaitingLists(
            database: database,
            events: EventHub(database: database, capacity: 16, clock: clock, logger: TestDatabase.logger),
            clock: clock, terms: .default, mail: .off, campus: FixedCampus.melbourne)
    }
}
