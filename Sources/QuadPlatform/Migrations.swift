import Foundation
import Logging
import SQLKit

/// One step of the schema. Ids are global and only ever grow; a released migration is never edited.
public struct Migration: Sendable {
    public let id: Int
    public let name: String
    public let apply: @Sendable (any SQLDatabase, Database.Engine) async throws -> Void

    public init(
        id: Int, name: String, apply: @escaping @Sendable (any SQLDatabase, Database.Engine) async throws -> Void
    ) {
        self.id = id
        self.name = name
        self.apply = apply
    }

    /// A migration made of SQL statements that read the same on both engines.
    public init(id: Int, name: String, statements: [String]) {
        self.init(id: id, name: name) { database, _ in
            for statement in statements { try await database.raw(SQLQueryString(statement)).run() }
        }
    }
}

public struct MigrationError: Error, CustomStringConvertible {
    public var description: String
}

/// Quad cannot start: the message says why, for the operator.
public struct StartupError: Error, CustomStringConvertible {
    public var description: String
}

/// Applies what is missing, in order, each migration in its own transaction, and records it in `quad_migrations`.
enum Migrator {
    static let lockKey = 0x5155_4144  // "QUAD"

    /// Returns true when the database was empty before (so demo data may be loaded).
    @discardableResult
    static func migrate(
        _ database: Database, _ migrations: [Migration], now: Date, logger: Logger
    ) async throws -> Bool {
        let ids = migrations.map(\.id)
        precondition(ids == ids.sorted() && Set(ids).count == ids.count, "migration ids must be unique and ascending")

        try await database.withConnection { sql in
            try await sql.raw(
                """
                CREATE TABLE IF NOT EXISTS quad_migrations (
                    id INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)
                """
            ).run()
        }
        let applied = try await database.withConnection { sql in
            try await sql.raw("SELECT id FROM quad_migrations ORDER BY id").all().map {
                try $0.decode(column: "id", as: Int.self)
            }
        }
        if let newest = applied.last, newest > (ids.last ?? 0) {
            throw MigrationError(
                description: "The database has migration \(newest), newer than this Quad knows (\(ids.last ?? 0)): "
                    + "it was used by a newer version. Upgrade Quad or use another database."
            )
        }
        let appliedSet = Set(applied)
        for migration in migrations where !appliedSet.contains(migration.id) {
            logger.info("Applying migration \(migration.id) \(migration.name)")
            try await database.transaction { sql in
                // Two instances starting together on PostgreSQL take turns, and the second skips what the first did.
                if database.engine == .postgres {
                    try await sql.raw("SELECT pg_advisory_xact_lock(\(bind: Self.lockKey))").run()
                    let done = try await sql.raw("SELECT id FROM quad_migrations WHERE id = \(bind: migration.id)")
                        .first()
                    if done != nil { return }
                }
                try await migration.apply(sql, database.engine)
                try await sql.insert(into: "quad_migrations")
                    .columns("id", "name", "applied_at")
                    .values(
                        SQLBind(migration.id), SQLBind(migration.name),
                        SQLBind(Timestamp.string(now))
                    )
                    .run()
            }
        }
        return applied.isEmpty
    }
}
