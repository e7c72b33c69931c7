import Foundation
import HTTPTypes
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTPTypes

/// Answers the hottest anonymous GETs (`GET /api/rooms`, polled by every open page and app) from their
/// encoded snapshot in the channel pipeline, on the event loop, before Hummingbird's router.
///
/// Why: measured with `Benchmarks/run`, the router path (Swift concurrency hops, five middlewares) cost
/// about 54 µs of CPU per `/api/rooms` request against nginx's 20 µs for the same bytes; the issue asks
/// for ≥ 0.8× nginx's throughput and ≥ 1.0× on 304s. Anything the snapshot cannot answer exactly as the
/// router would (credentials, a query string, no snapshot yet, `Connection: close`, an earlier request
/// on this connection still being answered, a client over its rate limit) goes on to the router
/// untouched, so the answers are the same either way; a test compares them.
final class SnapshotFastPath: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// A snapshot's encoded bytes for a base URL, or nil when it must be built first (the router does).
    typealias Lookup = @Sendable (_ baseURL: String) -> (body: ByteBuffer, etag: String)?

    struct Routes: Sendable {
        var snapshots: [String: Lookup]
        var trustProxy: Bool
        var rateLimiter: RateLimiter?
        var logger: Logger
    }

    private let routes: Routes
    /// Requests handed to the router and not yet fully answered: until they are, answering here would
    /// put a pipelined response ahead of theirs.
    private var routerRequests = 0
    /// The request being answered here (its body and end are dropped, then the answer is written).
    private var answering: (request: HTTPRequest, body: ByteBuffer, etag: String, rateLimit: String?)?
    private var forwarding = false

    init(routes: Routes) {
        self.routes = routes
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        switch part {
        case .head(let request):
            if routerRequests == 0, !forwarding, let answer = answer(request, remote: context.channel.remoteAddress) {
                answering = answer
                return
            }
            routerRequests += 1
            forwarding = true
            context.fireChannelRead(data)
        case .body:
            if answering == nil { context.fireChannelRead(data) }
        case .end:
            guard let answer = answering else {
                forwarding = false
                context.fireChannelRead(data)
                return
            }
            answering = nil
            write(answer, context: context)
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { routerRequests = max(0, routerRequests - 1) }
        context.write(data, promise: promise)
    }

    private func answer(
        _ request: HTTPRequest, remote: SocketAddress?
    ) -> (
        request: HTTPRequest, body: ByteBuffer, etag: String, rateLimit: String?
    )? {
        guard request.method == .get, let path = request.path, let lookup = routes.snapshots[path],
            request.headerFields[.authorization] == nil, request.headerFields[.cookie] == nil,
            request.headerFields[.connection]?.lowercased().contains("close") != true,
            let snapshot = lookup(request.baseURL(trustProxy: routes.trustProxy))
        else { return nil }
        var rateLimit: String?
        if let limiter = routes.rateLimiter {
            let decision = limiter.take(remote?.ipAddress ?? "local")
            // The router gives the 429 (and the bucket, being empty, stays empty).
            guard decision.allowed else { return nil }
            rateLimit = "\"default\";r=\(decision.remaining);t=\(decision.seconds)"
        }
        return (request, snapshot.body, snapshot.etag, rateLimit)
    }

    private func write(
        _ answer: (request: HTTPRequest, body: ByteBuffer, etag: String, rateLimit: String?),
        context: ChannelHandlerContext
    ) {
        let notModified = HTTPCache.matches(ifNoneMatch: answer.request.headerFields[.ifNoneMatch], etag: answer.etag)
        var headers: HTTPFields = [.eTag: answer.etag, .cacheControl: CachePolicy.revalidate.rawValue]
        if !notModified {
            headers[.contentType] = "application/json"
            headers[.contentLength] = String(answer.body.readableBytes)
        }
        if let state = answer.rateLimit, let limiter = routes.rateLimiter {
            headers[.rateLimitPolicy] = limiter.policyHeader
            headers[.rateLimit] = state
        }
        headers[.date] = HTTPDate.now()
        headers[.server] = "Quad"
        let status: HTTPResponse.Status = notModified ? .notModified : .ok
        context.write(wrapOutboundOut(.head(HTTPResponse(status: status, headerFields: headers))), promise: nil)
        if !notModified { context.write(wrapOutboundOut(.body(answer.body)), promise: nil) }
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        if routes.logger.logLevel <= .info {
            routes.logger.info("GET \(answer.request.path ?? "") \(status.code)", metadata: ["snapshot": "true"])
        }
    }
}

/// The `Date` header's text, formatted once a second rather than once a response.
enum HTTPDate {
    private static let cache = NIOLockedValueBox((second: 0, text: ""))

    static func now() -> String {
        let second = Int(Date().timeIntervalSince1970)
        return cache.withLockedValue { cache in
            if cache.second != second {
                cache = (second, format(Date(timeIntervalSince1970: TimeInterval(second))))
            }
            return cache.text
        }
    }

    private static let formatter: DateFormatter = {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter
    }()

    // DateFormatter is not thread-safe: only ever called under the cache's lock.
    private static func format(_ date: Date) -> String { formatter.string(from: date) }
}
