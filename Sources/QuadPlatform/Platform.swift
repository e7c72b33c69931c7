import Foundation
import Logging
import QuadCore
import QuadMail

/// What every feature shares: the store, events, admin access, images and the web shell.
public struct Platform: Sendable {
    public let configuration: ServerConfiguration
    public let database: Database
    public let events: EventHub
    public let admin: AdminAuth
    public let images: ImageStore
    /// Mail waiting to go, and what went.
    package let outbox: Outbox
    /// Takes the outbox's mail to the relay; nil when no relay is set (`QUAD_SMTP_URL`).
    package let courier: MailCourier?
    /// Sends mail, or nil when Quad sends none (made once, with the courier).
    package let mailer: Mailer?
    package let idempotency: IdempotencyStore
    /// Shared by the router's middleware and the fast path, so a client has one budget.
    let rateLimiter: RateLimiter?
    /// Pages the router rendered, answered again by the fast path until anything changes.
    package let pages: PageCache
    /// `GET /api/events`, opened by the router or the fast path, with one count of each client's streams.
    let eventStreams: EventStreams
    public let logger: Logger
    /// Rotating copies of the SQLite database (`QUAD_BACKUP_DIR`), when set.
    public let backups: RotatingBackups?
    /// What `/metrics` tells a monitoring system.
    package let metrics: QuadMetrics
    /// Every admin action and security event (`/admin/audit`).
    package let audit: AuditTrail
    /// The one clock (see `ServerConfiguration.clock`).
    public var clock: any QuadClock { configuration.clock }

    /// Migrates the database (the platform's tables and the features' `migrations`) and sets up admin access.
    /// `isNew` says the database was just created, for the server to load the demo data. `webs`: the features' web
    /// files, for mail's templates; `letters`: the features' messages; `recipients`: where a person's mail goes.
    package static func start(
        _ configuration: ServerConfiguration, database: Database, migrations features: [Migration],
        webs: [WebFiles] = [], letters: [LetterWriter] = [], recipients: any MailRecipients = PersonMail.Nobody(),
        logger: Logger, announce: @Sendable (String) -> Void
    ) async throws -> (platform: Platform, isNew: Bool) {
        if configuration.testing {
            logger.warning("Testing mode: the clock reads \(configuration.clock.now.formatted(.iso8601))")
        }
        let fresh = try await Migrator.migrate(
            database, (migrations + features).sorted { $0.id < $1.id }, now: configuration.clock.now, logger: logger)
        let admin = try await AdminAuth.setUp(configured: configuration.adminToken, database: database) { token in
            announce("Admin token (shown once, only its hash is kept): \(token)")
        }
        let outbox = Outbox(database: database, clock: configuration.clock)
        // Mail's templates are read only when Quad sends mail.
        let desk =
            configuration.smtpRelay == nil
            ? nil
            : MailDesk(
                letters: letters, recipients: recipients,
                templates: try MailTemplates(
                    webs: webs, sources: configuration.webDirectory, checkTemplates: configuration.testing),
                configuration)
        let mailer = desk.flatMap { Self.mailer(configuration, outbox: outbox, desk: $0, logger: logger) }
        let metrics = database.metrics
        let events = EventHub(
            database: database, capacity: configuration.eventBufferSize, clock: configuration.clock, logger: logger,
            metrics: metrics)
        let platform = Platform(
            configuration: configuration, database: database, events: events,
            admin: admin, images: ImageStore(database: database, clock: configuration.clock),
            outbox: outbox, courier: mailer?.courier, mailer: mailer,
            idempotency: IdempotencyStore(database: database, clock: configuration.clock),
            rateLimiter: configuration.rateLimit > 0
                ? RateLimiter(rate: configuration.rateLimit, burst: configuration.rateBurst, clock: configuration.clock)
                : nil,
            pages: PageCache(hub: events, clock: configuration.clock),
            eventStreams: EventStreams(
                hub: events, heartbeat: configuration.eventHeartbeat,
                maxPerClient: configuration.maxEventStreamsPerClient),
            logger: logger, backups: Self.backups(configuration, logger: logger), metrics: metrics,
            audit: AuditTrail(
                database: database, clock: configuration.clock, logger: logger, days: configuration.auditDays))
        return (platform, fresh)
    }

    static func backups(_ configuration: ServerConfiguration, logger: Logger) -> RotatingBackups? {
        guard let settings = configuration.backups, case .sqlite(let path) = configuration.database else { return nil }
        return RotatingBackups(path: path, settings: settings, clock: configuration.clock, logger: logger)
    }

    /// The mailer, and its courier to the relay the configuration names (greeting it as the public address's host).
    static func mailer(
        _ configuration: ServerConfiguration, outbox: Outbox, desk: MailDesk, logger: Logger
    ) -> Mailer? {
        guard let relay = configuration.smtpRelay else { return nil }
        logger.info("Mail goes through \(relay.description)")
        let courier = MailCourier(
            outbox: outbox,
            client: SMTPClient(
                relay: relay, extraTrustRoots: configuration.smtpTrustedCertificates, heloName: desk.host),
            desk: desk, logger: logger)
        return Mailer(outbox: outbox, courier: courier, desk: desk)
    }

    /// The platform's own tables; features number theirs from 100 (Rooms), 200, 300, 400, 500
    /// (and 6 and 7, the waiting lines' engine's: 6 from when it was the platform's; 8 is the mail outbox's).
    package static let migrations: [Migration] = [
        Migration(id: 1, name: "events sequence") { sql, engine in
            if engine == .postgres { try await sql.raw("CREATE SEQUENCE quad_event_ids").run() }
        },
        AdminAuth.migration,
        IdempotencyStore.migration,
        ImageStore.migration,
        IdempotencyStore.forgetSecrets,
        Outbox.migration,
        Outbox.aboutMigration,
        Outbox.lettersMigration,
        AuditTrail.migration,
    ]
}
