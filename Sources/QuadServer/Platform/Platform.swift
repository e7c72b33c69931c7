import Logging
import QuadCore

/// What every feature shares: the store, events, admin access, images and the web shell.
public struct Platform: Sendable {
    public let configuration: Configuration
    public let database: Database
    public let events: EventHub
    public let admin: AdminAuth
    public let images: ImageStore
    let idempotency: IdempotencyStore
    /// Shared by the router's middleware and the snapshot fast path, so a client has one budget.
    let rateLimiter: RateLimiter?
    public let logger: Logger
    /// The one clock (see `Configuration.clock`).
    public var clock: any QuadClock { configuration.clock }

    /// Migrates the database (the platform's and every feature's tables), sets up admin access, and loads
    /// the features' demo data into a database it has just created.
    static func start(
        _ configuration: Configuration, database: Database, logger: Logger, announce: @Sendable (String) -> Void
    ) async throws -> Platform {
        if configuration.testing {
            logger.warning("Testing mode: the clock reads \(configuration.clock.now.formatted(.iso8601))")
        }
        let fresh = try await Migrator.migrate(
            database, migrations + Features.migrations, now: configuration.clock.now, logger: logger)
        let admin = try await AdminAuth.setUp(configured: configuration.adminToken, database: database) { token in
            announce("Admin token (shown once, only its hash is kept): \(token)")
        }
        let platform = Platform(
            configuration: configuration, database: database,
            events: EventHub(
                database: database, capacity: configuration.eventBufferSize, clock: configuration.clock,
                logger: logger),
            admin: admin, images: ImageStore(database: database, clock: configuration.clock),
            idempotency: IdempotencyStore(database: database, clock: configuration.clock),
            rateLimiter: configuration.rateLimit > 0
                ? RateLimiter(rate: configuration.rateLimit, burst: configuration.rateBurst, clock: configuration.clock)
                : nil,
            logger: logger)
        try await Accounts(platform: platform).ensureAdmin(announce: announce)
        if fresh && configuration.loadDemoData {
            logger.info("New database: loading demo data")
            try await Features.loadDemoData(platform, announce: announce)
        }
        return platform
    }

    /// The platform's own tables; features number theirs from 100 (Rooms), 200, 300, 400.
    static let migrations: [Migration] = [
        Migration(id: 1, name: "events sequence") { sql, engine in
            if engine == .postgres { try await sql.raw("CREATE SEQUENCE quad_event_ids").run() }
        },
        AdminAuth.migration,
        IdempotencyStore.migration,
        ImageStore.migration,
        IdempotencyStore.forgetSecrets,
    ]
}
