@preconcurrency import AsyncKit
import Foundation
import Logging
import NIOCore
import NIOPosix
@preconcurrency import PostgresKit
import SQLKit
import SQLiteKit

/// The one store Quad talks to: SQLite (a file, or memory for tests) or PostgreSQL, behind SQLKit.
///
/// Feature code writes SQLKit queries against `withConnection` or `transaction` and never sees the engine,
/// except where SQL differs (`engine`).
public final class Database: Sendable {
    public enum Engine: String, Sendable { case sqlite, postgres }

    public let engine: Engine
    /// The server's metrics (`/metrics`), made with its database so that the waits for a connection are counted from
    /// the first query; the platform reports them all.
    package let metrics: QuadMetrics
    private let backend: Backend
    private let logger: Logger
    /// A SQLite file's lock, shared with every server using it (see `ServingLock`).
    private let serving: ServingLock?

    private enum Backend: Sendable {
        /// SQLite allows one writer: a single connection, with whole sessions taken in turn, keeps
        /// transactions from interleaving and never meets `SQLITE_BUSY`.
        case sqlite(SQLiteConnection, AsyncLock, reader: (SQLiteConnection, AsyncLock)?)
        case postgres(EventLoopGroupConnectionPool<PostgresConnectionSource>, SQLPostgresConfiguration)
    }

    public static func open(_ location: DatabaseLocation, logger: Logger) async throws -> Database {
        switch location {
        case .sqlite(let path):
            // Held while the database is open: a restore (`quad restore`) never replaces the file under it.
            guard let serving = ServingLock(path: path, exclusive: false) else {
                throw Backup.Failure("a restore of \(path) is under way (it holds \(path).lock)")
            }
            let connection = try await SQLiteConnection.open(storage: .file(path: path), logger: logger)
            // WAL lets readers run beside the writer; synchronous FULL makes an acknowledged commit durable.
            try await configureSQLite(connection, journal: "WAL")
            let reader = try await SQLiteConnection.open(storage: .file(path: path), logger: logger)
            try await reader.sql().raw("PRAGMA query_only = ON").run()
            return Database(
                engine: .sqlite, backend: .sqlite(connection, AsyncLock(), reader: (reader, AsyncLock())),
                logger: logger, serving: serving)
        case .sqliteMemory:
            let connection = try await SQLiteConnection.open(storage: .memory, logger: logger)
            try await configureSQLite(connection, journal: "MEMORY")
            return Database(engine: .sqlite, backend: .sqlite(connection, AsyncLock(), reader: nil), logger: logger)
        case .postgres(let url):
            // `?schema=NAME` keeps Quad's tables in their own schema (tests use one each).
            var components = URLComponents(string: url)
            let schema = components?.queryItems?.first { $0.name == "schema" }?.value
            // `?pool=N`: connections per event loop (default 8); many small instances (tests) share a server's slots.
            let poolSize = components?.queryItems?.first { $0.name == "pool" }?.value.flatMap { Int($0) }
            let otherItems = components?.queryItems?.filter { $0.name != "schema" && $0.name != "pool" } ?? []
            components?.queryItems = otherItems.isEmpty ? nil : otherItems
            var configuration = try SQLPostgresConfiguration(url: components?.string ?? url)
            if let schema { configuration.searchPath = [schema] }
            configuration.coreConfiguration.options.connectTimeout = .seconds(10)
            let pool = EventLoopGroupConnectionPool(
                source: PostgresConnectionSource(sqlConfiguration: configuration),
                maxConnectionsPerEventLoop: min(max(poolSize ?? 8, 1), 64),
                requestTimeout: .seconds(10),
                logger: logger,
                on: MultiThreadedEventLoopGroup.singleton
            )
            let database = Database(engine: .postgres, backend: .postgres(pool, configuration), logger: logger)
            do {
                try await database.withConnection { sql in
                    // A schema named in the URL is made on first use, like the SQLite file is.
                    if let schema {
                        try await sql.raw("CREATE SCHEMA IF NOT EXISTS \(ident: schema)").run()
                    } else {
                        try await sql.raw("SELECT 1").run()
                    }
                }
            } catch {
                try? await pool.shutdownAsync()
                throw error
            }
            return database
        }
    }

    private init(engine: Engine, backend: Backend, logger: Logger, serving: ServingLock? = nil) {
        self.metrics = QuadMetrics()
        self.engine = engine
        self.backend = backend
        self.logger = logger
        self.serving = serving
    }

    private static func configureSQLite(_ connection: SQLiteConnection, journal: String) async throws {
        let sql = connection.sql()
        try await sql.raw("PRAGMA journal_mode = \(unsafeRaw: journal)").run()
        try await sql.raw("PRAGMA synchronous = FULL").run()
        try await sql.raw("PRAGMA foreign_keys = ON").run()
    }

    /// Runs `body` on one connection that no other task uses meanwhile.
    public func withConnection<R: Sendable>(
        _ body: @escaping @Sendable (any SQLDatabase) async throws -> R
    )
        async throws -> R
    {
        if let refusal = ContractLimitGuard.refusal {
            return try await session { try await body(ReadOnlySQL(base: $0, refusal: refusal)) }
        }
        return try await session(body)
    }

    private func session<R: Sendable>(
        _ body: @escaping @Sendable (any SQLDatabase) async throws -> R
    )
        async throws -> R
    {
        // How long the connection took to come: SQLite's one writer, or a connection of PostgreSQL's pool.
        let asked = ContinuousClock.now
        let metrics = self.metrics
        switch backend {
        case .sqlite(let connection, let lock, _):
            return try await lock.withLock {
                metrics.connectionWait(ContinuousClock.now - asked)
                return try await body(connection.sql())
            }
        case .postgres(let pool, _):
            do {
                return try await pool.database(logger: logger).sql().withSession { sql in
                    metrics.connectionWait(ContinuousClock.now - asked)
                    return try await body(sql)
                }
            } catch ConnectionPoolTimeoutError.connectionRequestTimeout {
                throw Self.busy
            }
        }
    }

    /// Every connection stayed busy for the pool's whole wait: the request is the client's to retry, not a 500.
    static let busy = Problem(
        .serviceUnavailable, type: "database-busy", title: "Quad is busy",
        detail: "Quad's database is busy with other requests: try again in a moment.", headers: [.retryAfter: "1"])

    /// Runs `body`, which only reads, beside the writer where the engine allows it (a second SQLite
    /// connection: WAL lets it see every committed write without waiting for the one in progress).
    ///
    /// Why: every signed-in request looks its session up; on the writer's connection, those lookups
    /// queued behind bookings (measured in the booking storm of `Benchmarks/run`).
    public func read<R: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        if case .sqlite(_, _, let reader?) = backend {
            return try await reader.1.withLock { try await body(reader.0.sql()) }
        }
        return try await session(body)
    }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws,
    /// so nothing half-written reaches the store.
    public func transaction<R: Sendable>(
        _ body: @escaping @Sendable (any SQLDatabase) async throws -> R
    )
        async throws -> R
    {
        if let refusal = ContractLimitGuard.refusal { throw refusal }
        let begin = engine == .sqlite ? "BEGIN IMMEDIATE" : "BEGIN"
        return try await withConnection { database in
            try await database.raw(SQLQueryString(begin)).run()
            do {
                let waiting = BeforeCommit()
                let result = try await BeforeCommit.$current.withValue(waiting) { try await body(database) }
                try await waiting.run(database)
                try await database.raw("COMMIT").run()
                return result
            } catch {
                try? await database.raw("ROLLBACK").run()
                throw error
            }
        }
    }

    /// True while the database answers a trivial query.
    public func ping() async -> Bool {
        do {
            try await withConnection { try await $0.raw("SELECT 1").run() }
            return true
        } catch {
            return false
        }
    }

    /// The schema Quad's tables live in on PostgreSQL (`public` unless the URL says `?schema=`).
    package var schema: String {
        postgresConfiguration?.searchPath?.first ?? "public"
    }

    /// The PostgreSQL connection settings, for features that need a dedicated connection (LISTEN).
    var postgresConfiguration: SQLPostgresConfiguration? {
        if case .postgres(_, let configuration) = backend { configuration } else { nil }
    }

    public func close() async {
        switch backend {
        case .sqlite(let connection, let lock, let reader):
            if let reader { await reader.1.withLock { try? await reader.0.close() } }
            await lock.withLock { try? await connection.close() }
            serving?.release()
        case .postgres(let pool, _):
            try? await pool.shutdownAsync()
        }
    }
}
