import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import OpenAPIHummingbird
import QuadAPI
import ServiceLifecycle

/// Builds Quad: opens and migrates the database, loads demo data into a new one, and wires the
/// platform and every feature into one router.
///
/// `announce` receives the lines meant for the operator once (the URL, a generated admin token).
public func buildApplication(
    _ configuration: Configuration, announce: @escaping @Sendable (String) -> Void = Announce.stdout
) async throws -> some ApplicationProtocol {
    var logger = Logger(label: "quad")
    logger.logLevel = configuration.logLevel

    let database = try await Database.open(configuration.database, logger: logger)
    let platform: Platform
    do {
        platform = try await Platform.start(configuration, database: database, logger: logger, announce: announce)
    } catch {
        await database.close()
        throw error
    }

    let features = Features(platform: platform)
    let router = try await buildRouter(platform, features)
    var app = Application(
        router: router,
        server: .quad(features),
        configuration: .init(address: .hostname(configuration.hostname, port: configuration.port), serverName: "Quad"),
        onServerRunning: { channel in
            let port = channel.localAddress?.port ?? configuration.port
            announce("Quad is listening on http://\(configuration.hostname):\(port)")
        },
        logger: logger
    )
    app.addServices(
        [DatabaseService(database: database), platform.events, platform.idempotency] + features.services)
    return app
}

extension HTTPServerBuilder {
    /// HTTP/1.1, with the snapshot fast path in front of the router.
    static func quad(_ features: Features) -> HTTPServerBuilder {
        let routes = features.fastPathRoutes
        return .init { responder in QuadHTTP1Channel(base: HTTP1Channel(responder: responder), routes: routes) }
    }
}

/// The router with every middleware and route behind the front door; separate from the application so tests
/// can drive it directly. It refuses to start when a route declares no access.
func buildRouter(
    _ platform: Platform, _ features: Features, extra: (Routes) -> Void = { _ in }
) async throws -> QuadRouter {
    let router = Router(context: AppRequestContext.self, options: .autoGenerateHeadEndpoints)
    let routes = Routes(router: router, access: try AccessTable())
    let table = RouteTable()
    let web = try await WebShell(services: Features.links, directory: platform.configuration.webDirectory)
    let trustProxy = platform.configuration.trustProxy

    router.add(middleware: RequestLogMiddleware())
    router.add(
        middleware: ErrorMiddleware(routes: table) { problem, request, _ in web.errorPage(problem, request: request) })
    router.add(
        middleware: AccessMiddleware(
            accounts: features.accounts, table: routes.access, limiter: platform.rateLimiter,
            trustedProxies: platform.configuration.trustedProxies))
    if let limiter = platform.rateLimiter { router.add(middleware: RateLimitMiddleware(limiter: limiter)) }
    router.add(middleware: BodyLimitMiddleware(table: routes.access))
    router.add(middleware: HTTPCacheMiddleware())
    router.add(middleware: IdempotencyMiddleware(store: platform.idempotency, table: routes.access))
    // Innermost: the headers a handler adds (`RequestInfo.headers`) are in place before the cache compares the
    // ETag and before an idempotent answer is kept.
    router.add(middleware: RequestInfoMiddleware(trustProxy: trustProxy))

    web.register(on: routes)
    RoomsRoutes(rooms: features.rooms, web: web).register(on: routes)
    SpecialsRoutes(specials: features.specials, web: web).register(on: routes)
    LibraryRoutes(library: features.library, web: web).register(on: routes)
    AccountsRoutes(accounts: features.accounts, rooms: features.rooms, web: web).register(on: routes)
    AccountRoutes(accounts: features.accounts, web: web).register(on: routes)
    TimetableRoutes(timetable: features.timetable, web: web).register(on: routes)
    try APIHandler(
        platform: platform, rooms: features.rooms, accounts: features.accounts, specials: features.specials,
        library: features.library, timetable: features.timetable,
        eventStreams: EventStreams(
            hub: platform.events, heartbeat: platform.configuration.eventHeartbeat,
            maxPerClient: platform.configuration.maxEventStreamsPerClient)
    ).registerHandlers(
        on: router,
        configuration: .init(
            dateTranscoder: RFC3339Dates(), jsonEncodingOptions: [.sortedKeys, .withoutEscapingSlashes]),
        middlewares: [
            EmptyBodyAsNone(),
            SnapshotAnswers(snapshots: [
                "listRooms": { baseURL in
                    let encoded = try await features.rooms.snapshot.encoded(baseURL: baseURL)
                    return (encoded.body, encoded.etag)
                },
                "listSpecials": { baseURL in
                    let encoded = try await features.specials.snapshot.encoded(baseURL: baseURL)
                    return (encoded.body, encoded.etag)
                },
            ]),
        ])
    extra(routes)

    let served = router.routes.map { (path: $0.path.description, method: $0.method) }
    let uncovered = routes.access.uncovered(served)
    guard uncovered.isEmpty else {
        throw AccessTable.ContractError("These routes declare no access: \(uncovered.joined(separator: ", "))")
    }
    for route in served { table.add(path: route.path, method: route.method) }
    return QuadRouter(router: router, access: routes.access)
}

/// The router behind the front door (`FrontDoor`), with the access declarations it enforces.
struct QuadRouter: HTTPResponderBuilder {
    let router: Router<AppRequestContext>
    let access: AccessTable

    var routes: [Router<AppRequestContext>.RouteDescription] { router.routes }

    func buildResponder() -> FrontDoor { FrontDoor(router: router.buildResponder()) }
}

/// The services Quad offers (in the order the navigation shows them), built on the platform.
struct Features: Sendable {
    let rooms: Rooms
    let accounts: Accounts
    let specials: Specials
    let library: Library
    let timetable: Timetable

    init(platform: Platform) {
        rooms = Rooms(platform: platform)
        accounts = Accounts(platform: platform)
        specials = Specials(platform: platform)
        library = Library(platform: platform)
        timetable = Timetable(platform: platform)
    }

    /// What runs beside the server for the features.
    var services: [any Service] {
        [RoomsInvalidation(rooms: rooms), SessionSweeper(sessions: accounts.sessions)]
            + [SpecialsInvalidation(specials: specials), SpecialsSchedule(specials: specials)]
            + (timetable.platform.configuration.loadDemoData ? [TimetableSimulator(timetable: timetable)] : [])
    }

    /// The snapshots served before the router (see `SnapshotFastPath`).
    var fastPathRoutes: SnapshotFastPath.Routes {
        let snapshot = rooms.snapshot
        return SnapshotFastPath.Routes(
            snapshots: ["/api/rooms": { snapshot.cached(baseURL: $0).map { ($0.body, $0.etag) } }],
            trustProxy: rooms.platform.configuration.trustProxy, rateLimiter: rooms.platform.rateLimiter,
            logger: rooms.platform.logger, clock: rooms.platform.clock)
    }

    static let links = [Rooms.link, Specials.link, Library.link, Timetable.link]
    /// In id order (each feature has its own range of ids).
    static let migrations =
        ([RoomStore.migration] + SpecialStore.migrations + PeopleStore.migrations + LibraryStore.migrations
        + TimetableStore.migrations).sorted { $0.id < $1.id }

    static func loadDemoData(_ platform: Platform, announce: @Sendable (String) -> Void) async throws {
        try await RoomsDemo.load(RoomStore(database: platform.database, clock: platform.clock), images: platform.images)
        try await Accounts(platform: platform).loadDemoPeople(announce: announce)
        try await SpecialsDemo.load(
            SpecialStore(database: platform.database, clock: platform.clock), images: platform.images)
        try await LibraryDemo.load(Library(platform: platform))
        try await TimetableDemo.load(TimetableStore(database: platform.database), now: platform.clock.now)
    }
}

/// Closes the database once everything before it in the shutdown order has stopped.
struct DatabaseService: Service {
    let database: Database

    func run() async throws {
        try? await gracefulShutdown()
        await database.close()
    }
}

/// One line per request: method, path, status and time, with the request id. Never headers or query
/// strings, which can carry credentials.
struct RequestLogMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    )
        async throws -> Response
    {
        let start = ContinuousClock.now
        let response = try await next(request, context)
        let elapsed = ContinuousClock.now - start
        context.logger.info(
            "\(request.method.rawValue) \(request.uri.path) \(response.status.code)",
            metadata: [
                "request": .string(context.requestId),
                "ms": .string(
                    String(
                        format: "%.1f",
                        Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000)),
            ])
        return response
    }
}

/// Lines for the operator, written at once (stdout may be a pipe, which would otherwise buffer them).
public enum Announce {
    public static let stdout: @Sendable (String) -> Void = { line in
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
}
