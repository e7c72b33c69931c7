import Foundation
import Hummingbird
import Logging
import QuadAccounts
import QuadLibrary
import QuadPlatform
import QuadRooms
import QuadSpecials
import QuadTimetable
import QuadToday
import QuadWaiting
import QuadWaitingLines
import ServiceLifecycle

import struct HummingbirdCore.HTTPServerBuilder

/// Builds Quad: opens and migrates the database, builds the features on the platform, loads demo data into a
/// new database, and composes them into one router.
///
/// `announce` receives the lines meant for the operator once (the URL, a generated admin token).
public func buildApplication(
    _ configuration: ServerConfiguration, announce: @escaping @Sendable (String) -> Void = Announce.stdout
) async throws -> some ApplicationProtocol {
    var logger =
        configuration.logJSON
        ? Logger(label: "quad", factory: { JSONLogHandler(label: $0) })
        : Logger(label: "quad", factory: { TextLogHandler(label: $0) })
    logger.logLevel = configuration.logLevel

    let database = try await Database.open(configuration.database, logger: logger)
    let features: Features
    do {
        features = try await Features.start(configuration, database: database, logger: logger, announce: announce)
    } catch {
        await database.close()
        throw error
    }
    let quad = try await Quad.assemble(features)
    var app = Application(
        router: quad.router, server: quad.server,
        // A burst of connections (10,000 event streams opening, or a client opening hundreds it may not keep) waits in
        // the kernel's queue rather than overflowing it: an overflow drops the next SYN, which costs a second.
        configuration: .init(
            address: .hostname(configuration.hostname, port: configuration.port),
            serverName: SecurityHeaders.serverName, backlog: 4096),
        onServerRunning: { channel in
            let port = channel.localAddress?.port ?? configuration.port
            announce("Quad is listening on http://\(configuration.hostname):\(port)")
        },
        logger: logger
    )
    // The database closes last, once everything before it in the shutdown order has stopped.
    app.addServices([DatabaseService(database: database)] + quad.services)
    return app
}

/// Quad put together on its features: the router (every route behind the one door), the HTTP server in front of it
/// (with the fast path), and the services beside it. `buildApplication` serves exactly this; the tests build it too
/// (`TestApp`), so what they run is what people use, services included.
package struct Quad {
    package let router: QuadRouter
    package let server: HTTPServerBuilder
    /// The event hub, idempotency's clean-up, and each feature's (the lines' keeper, the rooms' time keeper, the
    /// kept answers' invalidation): everything but the database's closing, which belongs to who opened it.
    package let services: [any Service]

    /// `extra`: test-only routes, behind the same middleware.
    package static func assemble(_ features: Features, extra: (Routes) -> Void = { _ in }) async throws -> Quad {
        let platform = features.platform
        var services: [any Service] = [platform.events, platform.idempotency, AuditKeeper(trail: platform.audit)]
        if let courier = platform.courier { services.append(courier) }
        if let backups = platform.backups { services.append(backups) }
        return Quad(
            router: try await buildRouter(platform, features: features.all, people: features.accounts, extra: extra),
            server: .quad(platform, features: features.all, people: features.accounts),
            services: services + features.all.flatMap(\.services))
    }
}

/// The services Quad offers, built on the platform, each handed at construction what it needs of another (so
/// nothing is connected later, and nothing can be forgotten): the campus's time zone (`CampusTime`, the Timetable's
/// setting) for Rooms, the Library and Waiting; the waiting lines' engine for Rooms and the Library, which keep
/// lines, and mail (`PersonMail`, whose courier writes with Accounts' `MailRecipients`); a person's loans
/// (`PersonLoans`, the Library) for Waiting; bookings (`PersonCalendar`, Rooms), reminders (`PersonReminders`,
/// Waiting) and student accounts (`StudentAccounts`) for the Timetable's calendar feed; and what each feature releases
/// when Accounts removes a person (`PersonRemoval`, `PersonKeys`); every part of a person's day for Today
/// (`TodayPart`). The access layer asks Accounts who a credential signs in.
package struct Features: Sendable {
    package let platform: Platform
    package let campus: CampusZone
    package let lines: WaitingLists
    package let rooms: Rooms
    package let accounts: Accounts
    package let specials: Specials
    package let library: Library
    package let timetable: Timetable
    package let waiting: Waiting
    package let today: TodayFeature

    /// In the order the navigation shows them.
    package var all: [any Feature] { [rooms, accounts, specials, library, timetable, waiting, today] }
    /// In the order their demo data is loaded: the campus's time zone (the Timetable's) before the rooms' bookings
    /// made at its times, and people before their loans.
    var demoOrder: [any Feature] { [timetable, accounts, rooms, specials, library, waiting, today] }

    static let types: [any Feature.Type] = [
        Rooms.self, Accounts.self, Specials.self, Library.self, Timetable.self, Waiting.self, TodayFeature.self,
    ]
    /// Every feature's tables.
    package static var migrations: [Migration] { types.flatMap { $0.migrations } }

    package init(platform: Platform) {
        self.platform = platform
        campus = CampusZone(platform: platform)
        let mail = PersonMail(mailer: platform.mailer)
        lines = WaitingLists(platform: platform, mail: mail, campus: campus)
        rooms = Rooms(platform: platform, campus: campus, lines: lines, mail: mail)
        library = Library(platform: platform, campus: campus, lines: lines, mail: mail)
        waiting = Waiting(platform: platform, lines: lines, loans: library, campus: campus)
        timetable = Timetable(
            platform: platform, campus: campus, calendar: rooms, reminders: waiting,
            students: StudentDirectory(platform: platform))
        specials = Specials(platform: platform, mail: mail)
        // The Library before the lines: a removed person's books pass to the next in line, not to them.
        accounts = Accounts(
            platform: platform, removals: [rooms, timetable, library, lines, specials], keys: timetable)
        today = TodayFeature(platform: platform, campus: campus, parts: [waiting, rooms, timetable, specials])
    }

    /// Starts the platform with every feature's tables, makes sure an admin exists, and loads the demo data
    /// into a database just created.
    package static func start(
        _ configuration: ServerConfiguration, database: Database, logger: Logger,
        announce: @escaping @Sendable (String) -> Void
    ) async throws -> Features {
        let (platform, isNew) = try await Platform.start(
            configuration, database: database, migrations: migrations, webs: types.map { $0.files },
            letters: types.flatMap { $0.letters }, recipients: MailDirectory(clock: configuration.clock),
            logger: logger,
            announce: announce)
        let features = Features(platform: platform)
        try await features.accounts.ensureAdmin(announce: announce)
        if isNew && configuration.loadDemoData {
            logger.info("New database: loading demo data")
            for feature in features.demoOrder { try await feature.loadDemoData(announce: announce) }
        }
        return features
    }
}
