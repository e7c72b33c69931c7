import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import OpenAPIHummingbird
import QuadCore
import ServiceLifecycle

extension HTTPServerBuilder {
    /// HTTP/1.1, with the fast path (the features' kept answers and pages) in front of the router.
    package static func quad(
        _ platform: Platform, features: [any Feature], people: any PersonDirectory
    ) -> HTTPServerBuilder {
        let routes = FastPath.Routes(
            kept: Dictionary(features.flatMap(\.keptAnswers).map { ($0.path, $0) }) { first, _ in first },
            trustedProxies: platform.configuration.trustedProxies, rateLimiter: platform.rateLimiter,
            logger: platform.logger, clock: platform.clock, sessionKey: { people.sessionKey(token: $0) },
            session: { people.rememberedPerson(sessionKey: $0) },
            pages: platform.pages, streams: platform.eventStreams, metrics: platform.metrics,
            operations: Self.operations(of: features.flatMap(\.keptAnswers).map(\.path)))
        let (limits, warning) = ConnectionLimits.forProcess(platform.configuration)
        if let warning { platform.logger.warning("\(warning)") }
        return .init { responder in
            QuadHTTP1Channel(
                base: HTTP1Channel(responder: responder), routes: routes, limits: limits)
        }
    }
}

extension HTTPServerBuilder {
    /// The contract's entry of each kept answer's path (all are GETs without parameters): its operationId for
    /// `/metrics`, its access rule for the fast path. None when the contract cannot be read: the router answers all.
    static func operations(of paths: [String]) -> [String: AccessTable.Entry] {
        guard let table = try? AccessTable() else { return [:] }
        return Dictionary(paths.compactMap { path in table.entry(.get, endpoint: path).map { (path, $0) } }) {
            first, _ in first
        }
    }
}

/// The router with every middleware and route behind the front door; separate from the application so tests
/// can drive it directly. It refuses to start when a route declares no access.
package func buildRouter(
    _ platform: Platform, features: [any Feature], people: any PersonDirectory,
    extra: (Routes) -> Void = { _ in }
) async throws -> QuadRouter {
    let router = Router(context: AppRequestContext.self, options: .autoGenerateHeadEndpoints)
    let routes = Routes(router: router, access: try AccessTable())
    let table = RouteTable()
    let records = RecordFiles(features.flatMap(\.recordSets), calendars: features.flatMap(\.calendarExports))
    let recordsLink =
        (records.kinds.isEmpty ? [] : [AdminLink(title: "records.title", path: RecordsRoutes.path)])
        + [AdminLink(title: "audit.title", path: AuditRoutes.path)]
    let web = try await WebShell(
        services: features.compactMap(\.link), adminLinks: features.flatMap(\.adminLinks) + recordsLink,
        webs: features.map(\.web),
        clock: platform.clock,
        sources: platform.configuration.webDirectory,
        checkTemplates: platform.configuration.testing, status: InstanceStatus(platform: platform))
    let trustProxy = platform.configuration.trustProxy

    let requestLog = RequestLog(logger: platform.logger)
    router.add(middleware: RequestLogMiddleware(log: requestLog))
    router.add(middleware: MetricsMiddleware(metrics: platform.metrics, table: routes.access))
    // Outside the error middleware: it judges by the status sent, whatever threw it.
    router.add(middleware: PageCache.Changes(pages: platform.pages))
    router.add(
        middleware: ErrorMiddleware(routes: table) { problem, request, _ in web.errorPage(problem, request: request) })
    router.add(
        middleware: AccessMiddleware(
            people: people, admin: platform.admin, table: routes.access, limiter: platform.rateLimiter,
            trustedProxies: platform.configuration.trustedProxies,
            metrics: MetricsAccess(
                addresses: platform.configuration.metricsFrom, token: platform.configuration.metricsToken)))
    if let limiter = platform.rateLimiter { router.add(middleware: RateLimitMiddleware(limiter: limiter)) }
    router.add(middleware: BodyLimitMiddleware(table: routes.access))
    router.add(middleware: ContractLimitsMiddleware(table: routes.access))
    // Outside the cache's comparison: a 304 is decided on the plain answer, which a gzipped one's weak ETag matches.
    router.add(middleware: ResponseCompression())
    router.add(middleware: HTTPCacheMiddleware())
    router.add(middleware: IdempotencyMiddleware(store: platform.idempotency, table: routes.access))
    // Innermost: the headers a handler adds (`RequestInfo.headers`) are in place before the cache compares the
    // ETag and before an idempotent answer is kept.
    router.add(middleware: RequestInfoMiddleware(trustProxy: trustProxy))
    router.add(middleware: AuditMiddleware(trail: platform.audit, table: routes.access))
    router.add(middleware: AttentionMiddleware(parts: features.compactMap(\.attention), clock: platform.clock))

    web.register(on: routes)
    RecordsRoutes(records: records, web: web).register(on: routes)
    AuditRoutes(trail: platform.audit, web: web).register(on: routes)
    try PlatformOperations(
        platform: platform,
        eventStreams: platform.eventStreams, records: records
    ).registerHandlers(on: router, configuration: .quad, middlewares: .quad())
    for feature in features { try feature.register(on: routes, web: web) }
    extra(routes)

    let served = router.routes.map { (path: $0.path.description, method: $0.method) }
    let uncovered = routes.access.uncovered(served)
    guard uncovered.isEmpty else {
        throw AccessTable.ContractError("These routes declare no access: \(uncovered.joined(separator: ", "))")
    }
    for route in served { table.add(path: route.path, method: route.method) }
    return QuadRouter(
        router: router, access: routes.access, log: requestLog,
        appLinkPaths: features.reduce(into: [:]) { all, feature in all.merge(feature.appLinkPaths) { first, _ in first }
        }, formOrigins: platform.configuration.organisation.map { [$0.origin] } ?? [])
}

/// The router behind the front door (`FrontDoor`), with the access declarations it enforces.
package struct QuadRouter: HTTPResponderBuilder {
    package let router: Router<AppRequestContext>
    package let access: AccessTable
    /// The request log the router writes, for what the front door answers itself.
    let log: RequestLog
    /// The features' original apps' file names under an app link (`Feature.appLinkPaths`).
    let appLinkPaths: [String: String]
    /// Where forms may lead besides Quad: the organisation's provider, for signing out there.
    let formOrigins: [String]

    package var routes: [Router<AppRequestContext>.RouteDescription] { router.routes }

    package func buildResponder() -> FrontDoor {
        FrontDoor(
            router: router.buildResponder(), log: log, appLinkPaths: appLinkPaths,
            securityFields: SecurityHeaders.fields(formOrigins: formOrigins))
    }
}

/// Closes the database once everything before it in the shutdown order has stopped.
package struct DatabaseService: Service {
    package let database: Database

    package init(database: Database) { self.database = database }

    package func run() async throws {
        try? await gracefulShutdown()
        await database.close()
    }
}

/// One line per request (`RequestLog`): method, path, status and time, with the request id. Never headers or query
/// strings, which can carry credentials.
struct RequestLogMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    /// From the server's logger, not the request's (which carries Hummingbird's own copy of the id, to be merged into
    /// every line): the line says the id once, as `request`.
    let log: RequestLog

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    )
        async throws -> Response
    {
        let start = ContinuousClock.now
        var response = try await next(request, context)
        let elapsed = ContinuousClock.now - start
        // The id the log line carries, for someone reporting a problem to quote.
        response.headers[.xRequestID] = context.requestId
        log.write(
            method: request.method.rawValue, path: request.uri.path, status: UInt(response.status.code),
            elapsed: elapsed, id: context.requestId)
        return response
    }
}

/// Lines for the operator, written at once (stdout may be a pipe, which would otherwise buffer them), by the writer of
/// JSON log lines: each line whole, in order with them.
public enum Announce {
    public static let stdout: @Sendable (String) -> Void = { line in
        LogWriter.standardOutput.append((line + "\n").utf8, urgent: true)
    }
}

extension HTTPField.Name {
    static let xRequestID = HTTPField.Name("X-Request-Id")!
}
