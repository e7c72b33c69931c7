import Foundation
import Hummingbird
import Logging
import QuadAccounts
import QuadLibrary
import QuadPlatform
import QuadRooms
import QuadSpecials
import QuadTimetable
import ServiceLifecycle

/// Builds Quad: opens and migrates the database, builds the features on the platform, loads demo data into a
/// new database, and composes them into one router.
///
/// `announce` receives the lines meant for the operator once (the URL, a generated admin token).
public func buildApplication(
    _ configuration: ServerConfiguration, announce: @escaping @Sendable (String) -> Void = Announce.stdout
) async throws -> some ApplicationProtocol {
    var logger = Logger(label: "quad")
    logger.logLevel = configuration.logLevel

    let database = try await Database.open(configuration.database, logger: logger)
    let features: Features
    do {
        features = try await Features.start(configuration, database: database, logger: logger, announce: announce)
    } catch {
        await database.close()
        throw error
    }
    let platform = features.platform
    let router = try await buildRouter(platform, features: features.all, people: features.accounts)
    var app = Application(
        router: router,
        server: .quad(platform, features: features.all, people: features.accounts),
        // A burst of connections (10,000 event streams opening, or a client opening hundreds it may not keep) waits in
        // the kernel's queue rather than overflowing it: an overflow drops the next SYN, which costs a second.
        configuration: .init(
            address: .hostname(configuration.hostname, port: configuration.port), serverName: "Quad", backlog: 4096),
        onServerRunning: { channel in
            let port = channel.localAddress?.port ?? configuration.port
            announce("Quad is listening on http://\(configuration.hostname):\(port)")
        },
        logger: logger
    )
    app.addServices(
        [
            DatabaseService(database: database), platform.events, platform.idempotency,
            WaitingKeeper(waiting: platform.waiting, logger: logger),
        ]
            + features.all.flatMap(\.services))
    return app
}

/// The services Quad offers, built on the platform, and what each needs of another, handed to it here: Accounts
/// has Rooms release a removed person's bookings (`PersonRemoval`), Rooms and the Library keep time in the
/// Timetable's campus time zone (`CampusTime`), and the access layer asks Accounts who a credential signs in.
package struct Features: Sendable {
    package let platform: Platform
    package let rooms: Rooms
    package let accounts: Accounts
    package let specials: Specials
    package let library: Library
    package let timetable: Timetable

    /// In the order the navigation shows them (and their demo data is loaded: people before their loans).
    package var all: [any Feature] { [rooms, accounts, specials, library, timetable] }

    static let types: [any Feature.Type] = [
        Rooms.self, Accounts.self, Specials.self, Library.self, Timetable.self,
    ]
    /// Every feature's tables.
    package static var migrations: [Migration] { types.flatMap { $0.migrations } }

    package init(platform: Platform) {
        self.platform = platform
        timetable = Timetable(platform: platform)
        rooms = Rooms(platform: platform, campus: timetable)
        library = Library(platform: platform, campus: timetable)
        // The Library before the lines: a removed person's books pass to the next in line, not to them.
        accounts = Accounts(
            platform: platform, removals: [rooms, timetable, library, platform.waiting], keys: timetable)
        timetable.connect(calendar: rooms, students: accounts)
        specials = Specials(platform: platform)
        platform.waiting.connect(loans: library, campus: timetable)
    }

    /// Starts the platform with every feature's tables, makes sure an admin exists, and loads the demo data
    /// into a database just created.
    package static func start(
        _ configuration: ServerConfiguration, database: Database, logger: Logger,
        announce: @escaping @Sendable (String) -> Void
    ) async throws -> Features {
        let (platform, isNew) = try await Platform.start(
            configuration, database: database, migrations: migrations, logger: logger,
            announce: announce)
        let features = Features(platform: platform)
        try await features.accounts.ensureAdmin(announce: announce)
        if isNew && configuration.loadDemoData {
            logger.info("New database: loading demo data")
            for feature in features.all { try await feature.loadDemoData(announce: announce) }
        }
        return features
    }
}
