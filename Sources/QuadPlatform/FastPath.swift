import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOHTTPTypesHTTP1
import QuadCore

/// Answers the hottest GETs (`/api/rooms`, `/api/specials`, `/api/books`, a student's own `/api/schedules`, polled
/// by every open page and app) from their kept, encoded answer (gzipped when the client takes it) in the channel
/// pipeline, on the event loop, before Hummingbird's router: for visitors, and for people signed in (a bearer
/// token or the session cookie) whose session this instance remembers (`SessionCache`).
///
/// Why: measured with `Benchmarks/run`, the router path (Swift concurrency hops, five middlewares) cost
/// about 54 µs of CPU per `/api/rooms` request against nginx's 17–20 µs for the same bytes; the issue asks
/// for ≥ 0.8× nginx's throughput and ≥ 1.0× on 304s. Here it costs about 10 µs. Anything the kept answer
/// cannot answer exactly as the router would (credentials it does not know at once, the admin token, a query
/// string, nothing kept yet, not HTTP/1.1 keep-alive, an earlier request on this connection still being
/// answered, a client over its rate limit) goes on to the router untouched, so the answers are the same either
/// way; tests compare them.
///
/// A poll usually reaches it read by `RequestScanner`, ahead of the decoder (`answerScanned`); a connection's requests
/// go through the decoder from the first one the scanner leaves.
///
/// It also answers a page asked for again exactly as before (`PageCache`): the router's own answer, kept; and
/// opens event streams (`GET /api/events`) here, for the same callers, written by the event loop
/// (`PipelineEventStream`).
package final class FastPath: ChannelDuplexHandler, RemovableChannelHandler {
    package typealias InboundIn = HTTPServerRequestPart
    package typealias InboundOut = HTTPServerRequestPart
    package typealias OutboundIn = HTTPServerResponsePart
    package typealias OutboundOut = HTTPServerResponsePart

    /// What every connection's fast path reads, made once per server: a class, so that each connection's handler
    /// holds a reference rather than a copy (a held event stream is a connection; see `ConnectionState`).
    package final class Routes: Sendable {
        /// The features' kept answers, by path, each with its entry in the contract: its operationId (for `/metrics`)
        /// and who may call it. A kept answer is given here only to a caller its rule allows; the router answers
        /// everyone else (its 401 or 403), as it answers a path missing here (or missing in the contract).
        let kept: [String: (answer: any AnyKeptAnswer, operation: AccessTable.Entry)]
        /// `QUAD_TRUST_PROXY`'s addresses: a request from one is counted as from the client it forwards.
        let trustedProxies: Set<String>
        var trustProxy: Bool { !trustedProxies.isEmpty }
        let rateLimiter: RateLimiter?
        let logger: Logger
        /// The line each answer given here writes, as the router's do.
        let requestLog: RequestLog
        let clock: any QuadClock
        /// What a session token is remembered by (its hash), worked out once for a connection's requests.
        let sessionKey: @Sendable (String) -> String
        /// The person a session signs in, by its key, when known without waiting (nil: the router finds out).
        let session: @Sendable (String) -> Person?
        /// Pages the router rendered, to answer again (nil: none are kept).
        let pages: PageCache?
        /// Event streams, opened here (nil: by the router).
        let streams: EventStreams?
        /// Counts the answers given here, as the router's are (`/metrics`), under each kept answer's operation.
        let metrics: QuadMetrics?

        init(
            kept: [String: any AnyKeptAnswer], trustedProxies: Set<String>, rateLimiter: RateLimiter?, logger: Logger,
            clock: any QuadClock, sessionKey: @escaping @Sendable (String) -> String,
            session: @escaping @Sendable (String) -> Person?, pages: PageCache?,
            streams: EventStreams?, metrics: QuadMetrics? = nil, operations: [String: AccessTable.Entry]
        ) {
            self.metrics = metrics
            // One lookup a request.
            self.kept = kept.reduce(into: [:]) { kept, pair in
                if let operation = operations[pair.key] { kept[pair.key] = (pair.value, operation) }
            }
            self.trustedProxies = trustedProxies
            self.rateLimiter = rateLimiter
            self.logger = logger
            self.requestLog = RequestLog(logger: logger)
            self.clock = clock
            self.sessionKey = sessionKey
            self.session = session
            self.pages = pages
            self.streams = streams
        }
    }

    /// An event stream asked for, to open once the request has been read.
    private struct StreamOpening {
        let slot: StreamSlot
        let asked: EventStreams.Asked
        let person: Person?
        let rateLimit: String?
    }

    /// A class, held until the request's end and then written: a struct held so (boxed) was copied out and destroyed
    /// for each answer, its strings and buffer retained and released (about 1.4 % of a kept 304's CPU in `perf`).
    private final class Answer {
        let path: String
        /// Its operation's id in the contract (for `/metrics`).
        let operationId: String
        let ifNoneMatch: String?
        let body: ByteBuffer
        let etag: String
        let rateLimit: String?
        /// Signed in: the answer is the person's (`Cache-Control: private`), as the access layer marks it.
        let personal: Bool
        /// The gzipped bytes (the client takes them); `varies`: the answer depends on `Accept-Encoding`.
        let gzip: Bool
        let varies: Bool

        init(
            path: String, operationId: String, ifNoneMatch: String?, body: ByteBuffer, etag: String,
            rateLimit: String?, personal: Bool, gzip: Bool, varies: Bool
        ) {
            self.path = path
            self.operationId = operationId
            self.ifNoneMatch = ifNoneMatch
            self.body = body
            self.etag = etag
            self.rateLimit = rateLimit
            self.personal = personal
            self.gzip = gzip
            self.varies = varies
        }
    }

    private struct Caller {
        let person: Person?
    }

    private let routes: Routes
    /// When the request being answered began (for its latency in `/metrics`).
    private var headAt = ContinuousClock.now
    /// Requests handed to the router and not yet fully answered: until they are, answering here would
    /// put a pipelined response ahead of theirs.
    private var routerRequests = 0
    /// The request being answered here (its body and end are dropped, then the answer is written).
    private var answering: Answer?
    private var forwarding = false
    /// Something of the client's was handed on to the router since its last `channelReadComplete`: until then, a
    /// read the fast path answered whole is none of the router's.
    private var handedOn = false
    /// A kept page being answered here (with its `RateLimit` header, when counted).
    private var answeringPage: Boxed<(page: PageCache.Page, rateLimit: String?, path: Substring)>?
    /// The page request handed to the router whose answer may be kept (what it arrived with), and the answer's
    /// head and bytes as they go by.
    private var capture: Boxed<(key: PageCache.Key, person: Person?, stamp: PageCache.Stamp)>?
    private var captured: Boxed<(head: HTTPResponseHead, keep: String, body: ByteBuffer)>?
    /// The page this connection's request is drawing for everyone who asks for it meanwhile (`PageCache.draw`).
    private var drawing: Boxed<PageCache.Key>?
    /// A page request waiting for another connection to draw the same page, with what the client sent after it, and
    /// whether the channel asked to read more meanwhile (it does not until the request goes on).
    private var parked: Boxed<(token: Int, deadline: NIODeadline, parts: [HTTPServerRequestPart], readPending: Bool)>?
    /// Counts the requests parked, so that a wake-up meant for an earlier one is ignored.
    private var parkings = 0
    /// A read asked for while the client was not reading its answers, to do once it does.
    private var readHeld = false
    /// The parked request is going on, and until when it may still wait (nil: a request not parked yet). Each time
    /// a page drawn for it is not kept (a change came while it was drawn: the demo's readings come several at once),
    /// one of those waiting draws it again for the others, until then; past it, the router answers each.
    private var waitingUntil: NIODeadline?
    /// An event stream being opened here, then open: the connection is the stream's from then on.
    private var opening: Boxed<StreamOpening>?
    private var stream: PipelineEventStream?
    /// What this connection's answers here had in common with the one before (none until it has one).
    private var connection: ConnectionState?
    private var encoder: ChannelHandlerContext?
    /// The connection's deadlines, told of each request's parts and each answer's end (none once a stream is open).
    private var deadlines: ConnectionDeadlines?

    /// A value held out of line: the handler is one per connection, and costs a pointer for each thing it holds
    /// only now and then. Measured with `Benchmarks/run streams-10k` (heaptrack): held inline, they made the
    /// handler 1.1 kB, of the 17.5 kB an open event stream cost.
    private final class Boxed<Value> {
        var value: Value
        init(_ value: Value) { self.value = value }
    }

    /// The heads of the last answers, by ETag and `Date`: a poller on a kept-alive connection asks for the same
    /// answer many times a second. With the same answers as bytes on the wire, written from the encoder's place
    /// in the pipeline (past it): the encoder would only turn the same head into the same bytes again, about a
    /// microsecond a response (its request decoder does not hand it each request's method: `decoupleDecoder`). And the
    /// connection's Host, with the base URL worked out from it.
    private final class ConnectionState {
        typealias Heads = (etag: String, date: String, ok: HTTPResponseHead, notModified: HTTPResponseHead)
        /// Each answer whole (its body after it when small: `keptAnswerBuffer`), with a place for its `X-Request-Id`
        /// where the level writes request lines (`logLine`); or, where each answer adds a field of its own length
        /// (`RateLimit`), its head alone, unterminated.
        final class Wire {
            let etag: String
            let date: String
            var ok: ByteBuffer
            var notModified: ByteBuffer
            /// Where each answer's id goes in `ok` and `notModified` (nil when they carry none or are heads alone).
            let idAt: (ok: Int, notModified: Int)?
            let whole: Bool
            /// Whether `ok` holds the body too: else it is written after it, a buffer of its own.
            let withBody: Bool

            init(
                etag: String, date: String, ok: (ByteBuffer, Int?), notModified: (ByteBuffer, Int?), whole: Bool,
                withBody: Bool
            ) {
                self.etag = etag
                self.date = date
                self.ok = ok.0
                self.notModified = notModified.0
                idAt = ok.1.flatMap { okAt in notModified.1.map { (okAt, $0) } }
                self.whole = whole
                self.withBody = withBody
            }
        }
        var heads: Heads?
        var personalHeads: Heads?
        var wire: Wire?
        var personalWire: Wire?
        var lastHost: (host: String?, baseURL: String)?
        /// The session token of the connection's last signed-in request, with its key: a client sends the same one
        /// each time, and hashing it (SHA-256, then hex) cost a signed-in poll about 2 % of its time (perf of
        /// `rooms-304-cookie`, issue 41).
        var lastSession: (token: String, key: String)?
        /// The buffer of the last answer written whole with its id (`write`), for the next, if small (a 304's).
        var answerBuffer: ByteBuffer?
    }

    private func connectionState() -> ConnectionState {
        if let connection { return connection }
        let made = ConnectionState()
        connection = made
        return made
    }

    init(routes: Routes, deadlines: ConnectionDeadlines?) {
        self.routes = routes
        self.deadlines = deadlines
    }

    package func handlerAdded(context: ChannelHandlerContext) {
        encoder = try? context.pipeline.syncOperations.context(handlerType: HTTPResponseEncoder.self)
    }

    package func handlerRemoved(context: ChannelHandlerContext) {
        encoder = nil
        deadlines = nil
        stream?.stop()
        doneDrawing()
        parked = nil
    }

    package func channelInactive(context: ChannelHandlerContext) {
        stream?.stop()
        doneDrawing()
        parked = nil
        context.fireChannelInactive()
    }

    /// A parked request reads nothing more until it goes on (a client pipelining behind it is held back).
    ///
    /// Nor is anything more read while the client is not reading its answers (the channel is not writable: what waits
    /// for the socket is past its high-water mark), until it does (`channelWritabilityChanged`). Why: answers given
    /// here are written at once, whoever reads them; a client that pipelined polls and read nothing had every answer
    /// wait in the connection (4,000 polls held about 10 MB, and more polls more). Held so, what waits is at most what
    /// one read brings (`QuadHTTP1Channel`'s receive buffer, 64 kB at most) answered. An open stream is left to
    /// itself: a closed socket shows in what it reads.
    package func read(context: ChannelHandlerContext) {
        if let parked {
            parked.value.readPending = true
            return
        }
        if stream == nil, !context.channel.isWritable {
            readHeld = true
            return
        }
        context.read()
    }

    package func channelWritabilityChanged(context: ChannelHandlerContext) {
        if readHeld, context.channel.isWritable {
            readHeld = false
            read(context: context)
        }
        context.fireChannelWritabilityChanged()
    }

    /// A stream's connection that fails (a reset, or what the decoder still had of the client's bytes) is closed: the
    /// error is not passed on, since the router would answer it in the middle of the stream.
    package func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let stream else { return context.fireErrorCaught(error) }
        stream.stop()
        context.close(promise: nil)
    }

    package func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // The server is stopping: the stream ends as the router's would, and the connection with it.
        if let stream, event is ChannelShouldQuiesceEvent {
            stream.end()
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // A connection whose stream is open is the stream's: anything more the client sends waits behind the
        // endless answer, as it would behind the router's.
        // (Once open, the request decoder is gone: what comes is bytes.)
        if stream != nil { return }
        let part = unwrapInboundIn(data)
        deadlines?.arrived(part, context: context)
        take(part, data, context: context)
    }

    /// A request's part (`data`, unwrapped), as it arrived or as a parked request goes on.
    private func take(_ part: HTTPServerRequestPart, _ data: NIOAny, context: ChannelHandlerContext) {
        if let parked {
            parked.value.parts.append(part)
            return
        }
        if let opening {
            if case .end = part {
                self.opening = nil
                open(opening.value, context: context)
            }
            return
        }
        switch part {
        case .head(let head):
            headAt = ContinuousClock.now
            if routerRequests == 0, !forwarding {
                let fields = FastPathFields(head.headers)
                if let answer = answer(head, fields, remote: context.channel.remoteAddress) {
                    answering = answer
                    return
                }
                if let asked = streamOpening(head, fields, remote: context.channel.remoteAddress) {
                    opening = Boxed(asked)
                    return
                }
                if let pages = routes.pages {
                    let token = parkings + 1
                    switch page(
                        head, fields, pages: pages, remote: context.channel.remoteAddress, wake: waker(token, context))
                    {
                    case .kept(let found):
                        answeringPage = Boxed(found)
                        return
                    case .wait(let deadline):
                        park(head, token: token, deadline: deadline, context: context)
                        return
                    case .router: break
                    }
                }
            }
            routerRequests += 1
            forwarding = true
            handOn(data, context: context)
        case .body:
            if answering == nil, answeringPage == nil { handOn(data, context: context) }
        case .end:
            if let answer = answering {
                answering = nil
                write(answer, context: context)
            } else if let page = answeringPage?.value {
                answeringPage = nil
                write(page.page, rateLimit: page.rateLimit, path: page.path, context: context)
            } else {
                forwarding = false
                handOn(data, context: context)
            }
        }
    }

    /// A kept-alive HTTP/1.1 `GET` of `target` with no body, read whole by `RequestScanner` before the decoder: answered
    /// here, as `take` answers one from the decoder, when its kept answer can be (true). False: nothing is done or
    /// counted, and the decoder reads the request.
    func answerScanned(_ target: String, _ fields: FastPathFields, context: ChannelHandlerContext) -> Bool {
        guard stream == nil, parked == nil, opening == nil, routerRequests == 0, !forwarding, answering == nil,
            answeringPage == nil
        else { return false }
        headAt = ContinuousClock.now
        guard let answer = answer(target, fields, remote: context.channel.remoteAddress) else { return false }
        deadlines?.headArrived(context: context)
        deadlines?.endArrived(context: context)
        write(answer, context: context)
        return true
    }

    private func handOn(_ data: NIOAny, context: ChannelHandlerContext) {
        handedOn = true
        context.fireChannelRead(data)
    }

    /// Passed on only after a read that handed the router something: otherwise the handlers behind have nothing to
    /// complete, and the router's (`NIOAsyncChannelHandler`) took about 4 % of a signed-in poll's time looking (perf
    /// of `rooms-304-cookie`, issue 41).
    package func channelReadComplete(context: ChannelHandlerContext) {
        guard handedOn else { return }
        handedOn = false
        context.fireChannelReadComplete()
    }

    package func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(var head):
            let keep = head.headers.first(name: PageCache.keepHeaderName)
            if let capture = capture?.value { routes.pages?.answered(capture.key, mayBeKept: keep != nil) }
            guard let keep else { break }
            head.headers.remove(name: PageCache.keepHeaderName)
            if capture != nil, head.status == .ok, !head.headers.contains(name: "set-cookie") {
                captured = Boxed((head, keep, context.channel.allocator.buffer(capacity: 0)))
            }
            context.write(wrapOutboundOut(.head(head)), promise: promise)
            return
        case .body(.byteBuffer(var bytes)):
            captured?.value.body.writeBuffer(&bytes)
        case .body:
            captured = nil
        case .end:
            routerRequests = max(0, routerRequests - 1)
            if let capture = capture?.value, let captured = captured?.value {
                routes.pages?.keep(
                    capture.key, head: captured.head, body: captured.body, person: capture.person,
                    stamp: capture.stamp, keep: captured.keep)
            }
            capture = nil
            captured = nil
            deadlines?.answerEnded(context: context)
            context.write(data, promise: promise)
            doneDrawing()
            return
        }
        context.write(data, promise: promise)
    }

    private func answer(_ head: HTTPRequestHead, _ fields: FastPathFields, remote: SocketAddress?) -> Answer? {
        guard head.method == .GET, head.version == .http1_1, head.isKeepAlive else { return nil }
        return answer(head.uri, fields, remote: remote)
    }

    /// The kept answer to a kept-alive HTTP/1.1 `GET` of `target`, when it is one (nil: the router answers).
    private func answer(_ target: String, _ fields: FastPathFields, remote: SocketAddress?) -> Answer? {
        guard let kept = routes.kept[target],
            let caller = caller(fields), kept.operation.rule.decide(caller.person?.role) == .allowed,
            let found = kept.answer.cached(baseURL: baseURL(fields), person: caller.person),
            let rateLimit = take(clientKey(caller.person, fields, remote))
        else { return nil }
        let sent = found.representation(acceptEncoding: fields.acceptEncoding)
        return Answer(
            path: target, operationId: kept.operation.operationId ?? "GET \(target)",
            ifNoneMatch: fields.ifNoneMatch,
            body: sent.body, etag: sent.etag, rateLimit: rateLimit, personal: caller.person != nil, gzip: sent.gzip,
            varies: sent.varies)
    }

    /// An event stream to open here: `GET /api/events` with nothing in its query but `lastEventId` and `types`, once
    /// each and as plain text, from a caller known at once, within the client's share of streams and of requests.
    /// Else nil, and the router answers.
    private func streamOpening(
        _ head: HTTPRequestHead, _ fields: FastPathFields, remote: SocketAddress?
    ) -> StreamOpening? {
        guard let streams = routes.streams, encoder != nil, head.method == .GET, head.version == .http1_1,
            head.isKeepAlive,
            let query = Self.eventsQuery(head.uri), fields.lastEventIds <= 1, let caller = caller(fields),
            case let client = clientKey(caller.person, fields, remote), let slot = streams.slot(for: client)
        else { return nil }
        guard let rateLimit = take(client) else {
            slot.release()
            return nil
        }
        return StreamOpening(
            slot: slot,
            asked: .init(
                lastEventId: fields.lastEventId ?? query["lastEventId"].map(String.init),
                types: query["types"].map(String.init)),
            person: caller.person, rateLimit: rateLimit)
    }

    /// The query of a `/api/events` target (empty without one), when it has nothing but `lastEventId` and `types`,
    /// once each, without percent-encoding.
    static func eventsQuery(_ target: String) -> [Substring: Substring]? {
        let path = "/api/events"
        guard target.hasPrefix(path) else { return nil }
        let rest = target.dropFirst(path.count)
        guard !rest.isEmpty else { return [:] }
        guard rest.first == "?" else { return nil }
        var query: [Substring: Substring] = [:]
        for pair in rest.dropFirst().split(separator: "&", omittingEmptySubsequences: false) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, parts[0] == "lastEventId" || parts[0] == "types", query[parts[0]] == nil,
                !parts[1].contains(where: { $0 == "%" || $0 == "+" })
            else { return nil }
            query[parts[0]] = parts[1]
        }
        return query
    }

    /// Opens the stream with the head the router gives it.
    private func open(_ opening: StreamOpening, context: ChannelHandlerContext) {
        guard let streams = routes.streams, let encoder else { return }
        var headers = HTTPHeaders(
            [
                ("Content-Type", "text/event-stream"),
                ("Cache-Control", opening.person == nil ? "no-cache" : SecurityHeaders.personal("no-cache")),
                ("X-Accel-Buffering", "no"), ("Date", HTTPDate.text(routes.clock.now)),
                ("Server", SecurityHeaders.serverName),
            ] + SecurityHeaders.all)
        if let state = opening.rateLimit, let limiter = routes.rateLimiter {
            headers.add(name: HTTPField.Name.rateLimitPolicy.rawName, value: limiter.policyHeader)
            headers.add(name: HTTPField.Name.rateLimit.rawName, value: state)
        }
        if routes.logger.logLevel <= .info {
            routes.logger.info("GET /api/events 200", metadata: ["stream": "pipeline"])
        }
        stream = PipelineEventStream(
            context: context, wire: encoder, head: HTTPResponseHead(version: .http1_1, status: .ok, headers: headers),
            slot: opening.slot, streams: streams, asked: opening.asked,
            person: opening.person?.username.lowercased())
        // Nothing the client sends from now on is read as HTTP: the request decoder goes, with what it keeps for
        // the next request (measured with heaptrack: about 1.5 kB of an open stream's 17.5 kB).
        if let decoder = try? context.pipeline.syncOperations.context(
            handlerType: ByteToMessageHandler<HTTPRequestDecoder>.self)
        {
            context.pipeline.removeHandler(context: decoder, promise: nil)
        }
        // Nor does it have HTTP parts for the deadlines to follow: a stream has none.
        deadlines = nil
    }

    /// `wait`: another connection is drawing the same page; the request waits for it (`wake`), then goes on.
    private enum PageOutcome {
        case kept((page: PageCache.Page, rateLimit: String?, path: Substring))
        case wait(until: NIODeadline)
        case router
    }

    /// A page kept for this request (`PageCache`); when there is none, and the router's answer may be kept, what
    /// the request arrived with is noted (`capture`) for when the answer goes by, and the request draws the page for
    /// everyone who asks for it meanwhile, or waits for the one drawing it (or, when all the kept page missed is a
    /// feed's reading, is answered with it: `PageCache.feeds`).
    private func page(
        _ head: HTTPRequestHead, _ fields: FastPathFields, pages: PageCache, remote: SocketAddress?,
        wake: @autoclosure () -> @Sendable () -> Void
    ) -> PageOutcome {
        let waitedUntil = waitingUntil
        waitingUntil = nil
        // Pages are for browsers: a bearer token or a conditional request is the router's.
        guard head.method == .GET, head.version == .http1_1, head.isKeepAlive, fields.authorization == nil,
            fields.ifNoneMatch == nil, fields.ifModifiedSince == nil, let caller = caller(fields)
        else { return .router }
        let key = PageCache.Key(
            target: head.uri, cookies: fields.cookie ?? "", acceptLanguage: fields.acceptLanguage ?? "",
            baseURL: baseURL(fields), gzip: Gzip.accepted(fields.acceptEncoding ?? ""))
        guard let page = pages.page(key, person: caller.person) else {
            guard let stamp = pages.stamp() else { return .router }
            let deadline = waitedUntil ?? .now() + Self.longestWait
            if NIODeadline.now() < deadline {
                switch pages.draw(key, for: caller.person, orWait: wake()) {
                case .wait: return .wait(until: deadline)
                case .kept(let page): return kept(page)
                case .draw: drawing = Boxed(key)
                case .alone: break
                }
            }
            capture = Boxed((key, caller.person, stamp))
            return .router
        }
        return kept(page)

        func kept(_ page: PageCache.Page) -> PageOutcome {
            guard let rateLimit = take(clientKey(caller.person, fields, remote)) else { return .router }
            return .kept((page, rateLimit, head.uri.prefix { $0 != "?" }))
        }
    }

    /// How long a page request waits for another connection to draw the page at most, before the router answers it.
    static let longestWait = TimeAmount.seconds(2)

    /// Parks a page request until the page it asks for is drawn, or `deadline`.
    private func park(_ head: HTTPRequestHead, token: Int, deadline: NIODeadline, context: ChannelHandlerContext) {
        parkings = token
        parked = Boxed((token, deadline, [.head(head)], false))
        let wake = waker(token, context)
        context.eventLoop.scheduleTask(deadline: deadline) { wake() }
    }

    /// Wakes the request parked as `token` on this connection's event loop (from whichever thread drew the page).
    private func waker(_ token: Int, _ context: ChannelHandlerContext) -> @Sendable () -> Void {
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        return {
            bound.eventLoop.execute {
                let (handler, context) = bound.value
                handler.resume(token, context: context)
            }
        }
    }

    /// The parked request goes on: answered from the page now kept, else by the router; then what the client sent
    /// after it, in order.
    private func resume(_ token: Int, context: ChannelHandlerContext) {
        guard let parked, parked.value.token == token else { return }
        self.parked = nil
        waitingUntil = parked.value.deadline
        for part in parked.value.parts { take(part, wrapInboundOut(part), context: context) }
        waitingUntil = nil
        // Outside a read from the socket: the router takes what it was handed once a read is complete.
        channelReadComplete(context: context)
        if parked.value.readPending { read(context: context) }
    }

    /// The page this connection drew is written (or its connection gone): whoever waits for it goes on.
    private func doneDrawing() {
        guard let drawing else { return }
        self.drawing = nil
        routes.pages?.drawn(drawing.value)
    }

    /// Who asks: a visitor (`person` nil), or someone whose session is remembered; nil when the router must judge
    /// (credentials not known at once: the admin token, a session this instance does not remember, another scheme).
    /// The credentials are read as the router reads them (`Credential`).
    private func caller(_ fields: FastPathFields) -> Caller? {
        // Its lines joined in one: an empty one holds no cookie.
        switch Credential.read(authorization: fields.authorization, cookies: CollectionOfOne(fields.cookie ?? "")) {
        case .none: return Caller(person: nil)
        case .otherScheme: return nil
        case .bearer(let token), .sessionCookie(let token): return routes.session(sessionKey(token)).map(Caller.init)
        }
    }

    private func sessionKey(_ token: String) -> String {
        let state = connectionState()
        if let last = state.lastSession, last.token == token { return last.key }
        let key = routes.sessionKey(token)
        state.lastSession = (token, key)
        return key
    }

    /// How the client reached Quad, as the router works it out.
    private func baseURL(_ fields: FastPathFields) -> String {
        if routes.trustProxy {
            return BaseURL.make(
                forwardedProto: fields.forwardedProto, forwardedHost: fields.forwardedHost, host: fields.host)
        }
        // A connection keeps its Host: work its base URL out once.
        let host = fields.host
        let state = connectionState()
        if host != state.lastHost?.host {
            state.lastHost = (host, BaseURL.make(forwardedProto: nil, forwardedHost: nil, host: host))
        }
        return state.lastHost!.baseURL
    }

    /// Whom the client's limits count, as the router counts them (`ClientKey`, `AppRequestContext.clientKey`): the
    /// person, else the address (behind a trusted proxy, the client it forwards for).
    private func clientKey(_ person: Person?, _ fields: FastPathFields, _ remote: SocketAddress?) -> String {
        if let person { return ClientKey.of(person) }
        let peer = remote?.ipAddress
        guard routes.trustProxy else { return peer ?? "local" }
        return ClientKey.forwardedClient(
            forwardedFor: fields.forwardedFor, peer: peer, trusted: routes.trustedProxies)
            ?? peer ?? "local"
    }

    /// Counts the request against the client's budget as the router counts it (`clientKey`: the person when signed
    /// in, else the address): the `RateLimit` header to send (`.some(nil)` without a limiter), or nil when the
    /// client is over it (the router gives the 429; the bucket, being empty, stays empty).
    private func take(_ client: @autoclosure () -> String) -> String?? {
        guard let limiter = routes.rateLimiter else { return .some(nil) }
        let decision = limiter.take(client())
        return decision.allowed ? .some(decision.header) : nil
    }

    private func write(_ answer: Answer, context: ChannelHandlerContext) {
        let notModified = HTTPCache.matches(ifNoneMatch: answer.ifNoneMatch, etag: answer.etag)
        let date = HTTPDate.text(routes.clock.now)
        let state = connectionState()
        var heads = answer.personal ? state.personalHeads : state.heads
        if heads?.etag != answer.etag || heads?.date != date {
            let policy =
                answer.personal
                ? SecurityHeaders.personal(CachePolicy.revalidate.rawValue) : CachePolicy.revalidate.rawValue
            let validators =
                [("ETag", answer.etag), ("Cache-Control", policy)]
                + (answer.varies ? [("Vary", "Accept-Encoding")] : [])
            let ok =
                validators + [("Content-Type", "application/json"), ("Content-Length", "\(answer.body.readableBytes)")]
                + (answer.gzip ? [("Content-Encoding", "gzip")] : [])
            // The limiter's policy is the same for every answer; where the client stands (`RateLimit`) is each one's.
            let common =
                [("Date", date), ("Server", SecurityHeaders.serverName)] + SecurityHeaders.all
                + (routes.rateLimiter.map { [(HTTPField.Name.rateLimitPolicy.rawName, $0.policyHeader)] } ?? [])
            heads = (
                answer.etag, date, HTTPResponseHead(version: .http1_1, status: .ok, headers: HTTPHeaders(ok + common)),
                HTTPResponseHead(version: .http1_1, status: .notModified, headers: HTTPHeaders(validators + common))
            )
            if answer.personal { state.personalHeads = heads } else { state.heads = heads }
        }
        var head = notModified ? heads!.notModified : heads!.ok
        // Logged before it is sent (as a kept page is): whoever reads the answer finds the line written.
        let took = ContinuousClock.now - headAt
        let id = logLine(answer.path, status: head.status.code, took: took, kept: "answer")
        if let encoder {
            // Whole when nothing is the answer's own but its id (no limiter): its id is written over the last one, in
            // place (`Wire.idAt`). Measured with `Benchmarks/compare` (issue 41): copying the head and the body into a
            // buffer of the answer's own (`writeWhole`) for each answer cost about a microsecond at `info` more than at
            // `warning`, where no answer carries an id.
            let whole = answer.rateLimit == nil
            var wire = answer.personal ? state.personalWire : state.wire
            if wire?.etag != answer.etag || wire?.date != date || wire?.whole != whole
                || (wire?.idAt != nil) != (whole && id != nil)
            {
                let allocator = context.channel.allocator
                let withID = id != nil
                // What every open connection may hold is small: a larger body is the kept answer's own, shared.
                let withBody = answer.body.readableBytes <= Self.keptAnswerBuffer
                wire = ConnectionState.Wire(
                    etag: answer.etag, date: date,
                    ok: Self.kept(
                        heads!.ok, body: withBody ? answer.body : nil, whole: whole, withID: withID,
                        allocator: allocator),
                    notModified: Self.kept(
                        heads!.notModified, body: nil, whole: whole, withID: withID, allocator: allocator),
                    whole: whole, withBody: withBody)
                if answer.personal { state.personalWire = wire } else { state.wire = wire }
            }
            let kept = wire!
            if !whole {
                writeWhole(
                    notModified ? kept.notModified : kept.ok, date: nil, rateLimit: answer.rateLimit, id: id,
                    body: notModified ? nil : answer.body, to: encoder, context: context)
            } else {
                if let id, let idAt = kept.idAt {
                    // In place when the last answer is written by now (else a copy: the socket still holds that one).
                    if notModified {
                        Self.write(id, at: idAt.notModified, in: &kept.notModified)
                    } else {
                        Self.write(id, at: idAt.ok, in: &kept.ok)
                    }
                }
                if notModified || kept.withBody {
                    encoder.writeAndFlush(NIOAny(notModified ? kept.notModified : kept.ok), promise: nil)
                } else {
                    encoder.write(NIOAny(kept.ok), promise: nil)
                    encoder.writeAndFlush(NIOAny(answer.body), promise: nil)
                }
                deadlines?.answerEnded(context: context)
            }
        } else {
            if let id { head.headers.add(name: "X-Request-Id", value: id.text) }
            if let state = answer.rateLimit { head.headers.add(name: HTTPField.Name.rateLimit.rawName, value: state) }
            context.write(wrapOutboundOut(.head(head)), promise: nil)
            if !notModified { context.write(wrapOutboundOut(.body(.byteBuffer(answer.body))), promise: nil) }
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            deadlines?.answerEnded(context: context)
        }
        routes.metrics?.request(
            operation: answer.operationId,
            status: Int(head.status.code), duration: took)
    }

    /// A kept page, as the router answered it, with this moment's `Date` (and the client's `RateLimit`).
    private func write(_ page: PageCache.Page, rateLimit: String?, path: Substring, context: ChannelHandlerContext) {
        let date = HTTPDate.text(routes.clock.now)
        if let wire = page.wire, let encoder {
            // Its head as written once when kept, then this answer's date, the client's rate limit and the id, in the
            // connection's buffer, past the encoder (as a kept answer's). Measured with `Benchmarks/compare` (issue
            // 41): copying the head's fields and encoding them again for each answer cost a kept page 4–5 µs of CPU,
            // 15–19 % of it.
            let took = ContinuousClock.now - headAt
            let id = logLine(path, status: page.head.status.code, took: took, kept: "page")
            routes.metrics?.request(
                operation: "GET (a page kept in memory)", status: Int(page.head.status.code), duration: took)
            writeWhole(wire, date: date, rateLimit: rateLimit, id: id, body: page.body, to: encoder, context: context)
            return
        }
        var head = page.head
        head.headers.add(name: "Date", value: date)
        // Its `RateLimit-Policy` is kept with it (the same for all).
        if let rateLimit { head.headers.add(name: HTTPField.Name.rateLimit.rawName, value: rateLimit) }
        // Logged before it is sent: whoever reads the answer finds the line written.
        let took = ContinuousClock.now - headAt
        if let id = logLine(path, status: page.head.status.code, took: took, kept: "page") {
            head.headers.add(name: "X-Request-Id", value: id.text)
        }
        // Under one label: a kept page's address has its room or book in it, which would make a series of each.
        routes.metrics?.request(
            operation: "GET (a page kept in memory)", status: Int(page.head.status.code), duration: took)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(page.body))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        deadlines?.answerEnded(context: context)
    }

    /// Writes an answer whole, past the encoder: its head as kept (unterminated), its own `Date`, `RateLimit` and id
    /// when given, the blank line, and its body. The head, its fields and a body of a few kB go in one buffer: one
    /// write to the socket rather than three (measured with `Benchmarks/run`, the three buffers' `writev` and the
    /// pipeline's writes cost a 304 with its log line about a microsecond more). The buffer is the connection's own,
    /// which its last answer, written by now, has left with no one else holding it: none allocated for each answer
    /// (else `clear` makes a new one).
    private func writeWhole(
        _ head: ByteBuffer, date: String?, rateLimit: String?, id: AnswerID?, body: ByteBuffer?,
        to encoder: ChannelHandlerContext, context: ChannelHandlerContext
    ) {
        let inline = body.map { $0.readableBytes <= Self.inlineBody } ?? true
        let fields =
            (date.map { Self.dateField.count + $0.utf8.count + Self.endOfLine.count } ?? 0)
            + (rateLimit.map { Self.rateLimitField.count + $0.utf8.count + Self.endOfLine.count } ?? 0)
            + (id.map { Self.idField.count + $0.utf8Count + Self.endOfLine.count } ?? 0) + Self.endOfLine.count
        let state = connectionState()
        var whole = state.answerBuffer ?? context.channel.allocator.buffer(capacity: 1024)
        state.answerBuffer = nil
        whole.clear(minimumCapacity: head.readableBytes + fields + (inline ? body?.readableBytes ?? 0 : 0))
        whole.writeImmutableBuffer(head)
        if let date {
            whole.writeBytes(Self.dateField)
            whole.writeString(date)
            whole.writeBytes(Self.endOfLine)
        }
        if let rateLimit {
            whole.writeBytes(Self.rateLimitField)
            whole.writeString(rateLimit)
            whole.writeBytes(Self.endOfLine)
        }
        if let id {
            whole.writeBytes(Self.idField)
            whole.writeWithUnsafeMutableBytes(minimumWritableBytes: id.utf8Count) {
                id.write(to: $0.bindMemory(to: UInt8.self))
            }
            whole.writeBytes(Self.endOfLine)
        }
        whole.writeBytes(Self.endOfLine)
        if inline, let body { whole.writeImmutableBuffer(body) }
        if whole.capacity <= Self.keptAnswerBuffer { state.answerBuffer = whole }
        if inline {
            encoder.writeAndFlush(NIOAny(whole), promise: nil)
        } else {
            encoder.write(NIOAny(whole), promise: nil)
            encoder.writeAndFlush(NIOAny(body!), promise: nil)
        }
        deadlines?.answerEnded(context: context)
    }

    /// The largest body copied into its answer's buffer (beside its head and its request's id) rather than written
    /// as a buffer of its own.
    static let inlineBody = 8 << 10

    /// The largest buffer a connection keeps for its next answer (a 304's head and id take under 1 kB), and the
    /// largest body a connection keeps after its kept head: what every open connection may hold, so small.
    static let keptAnswerBuffer = 2 << 10

    /// What a kept head is followed by: each answer's own fields, then the blank line.
    private static let dateField = Array("Date: ".utf8)
    private static let idField = Array("X-Request-Id: ".utf8)
    private static let rateLimitField = Array((HTTPField.Name.rateLimit.rawName + ": ").utf8)
    private static let endOfLine = Array("\r\n".utf8)

    /// A kept answer as bytes: its head, then, when `whole`, a place for its id (`withID`), the blank line and
    /// `body`; and where the id goes.
    private static func kept(
        _ head: HTTPResponseHead, body: ByteBuffer?, whole: Bool, withID: Bool, allocator: ByteBufferAllocator
    ) -> (ByteBuffer, Int?) {
        var bytes = Self.bytes(head, allocator: allocator, terminated: false)
        guard whole else { return (bytes, nil) }
        var idAt: Int?
        if withID {
            bytes.writeBytes(Self.idField)
            idAt = bytes.writerIndex
            bytes.writeRepeatingByte(UInt8(ascii: "0"), count: AnswerID.length)
            bytes.writeBytes(Self.endOfLine)
        }
        bytes.writeBytes(Self.endOfLine)
        if var body { bytes.writeBuffer(&body) }
        return (bytes, idAt)
    }

    /// Writes `id` over the one at `offset` in `bytes`.
    private static func write(_ id: AnswerID, at offset: Int, in bytes: inout ByteBuffer) {
        bytes.withUnsafeMutableReadableBytes { room in
            _ = id.write(to: UnsafeMutableBufferPointer(rebasing: room.bindMemory(to: UInt8.self)[offset...]))
        }
    }

    /// A response head as HTTP/1.1 writes it; not `terminated`, without the blank line that ends it.
    static func bytes(
        _ head: HTTPResponseHead, allocator: ByteBufferAllocator, terminated: Bool = true
    ) -> ByteBuffer {
        var buffer = allocator.buffer(capacity: 256)
        buffer.writeString("HTTP/1.1 \(head.status.code) \(head.status.reasonPhrase)\r\n")
        for (name, value) in head.headers { buffer.writeString("\(name): \(value)\r\n") }
        if terminated { buffer.writeString("\r\n") }
        return buffer
    }

    /// The log line of a GET answered here, as the router writes its own (`RequestLog`): with an id, which the answer
    /// also carries as `X-Request-Id`. Nil when the level writes no such line (nor sends an id).
    private func logLine(_ path: some StringProtocol, status: UInt, took: Duration, kept: String) -> AnswerID? {
        guard routes.requestLog.isOn else { return nil }
        let id = AnswerID.next()
        routes.requestLog.write(method: "GET", path: path, status: status, elapsed: took, id: id, kept: kept)
        return id
    }
}

/// HTTP/1.1 as Hummingbird serves it, with `FastPath` placed just after the HTTP/1 decoder, ahead of
/// the conversion to Swift HTTP Types (which the answers it gives need not pay for), and `RequestScanner` just before
/// the decoder.
struct QuadHTTP1Channel: ServerChildChannel {
    package let base: HTTP1Channel
    package let routes: FastPath.Routes
    package let limits: ConnectionLimits

    /// The connection as Hummingbird serves it, and when it first needs the router (`RouterWake`).
    struct Value: ServerChildChannelValue {
        let base: HTTP1Channel.Value
        let routerNeeded: EventLoopFuture<Void>
        var channel: any Channel { base.channel }
    }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        // Counted before anything else is set up; a refused connection is answered by its first handler and closed
        // (a failed setup would end the server's accept loop).
        let refusal = limits.refusal(channel)
        return base.setup(channel: channel, logger: logger).flatMapThrowing { value in
            let pipeline = channel.pipeline.syncOperations
            if let refusal {
                try pipeline.addHandler(refusal, position: .first)
                return Value(base: value, routerNeeded: channel.eventLoop.makeSucceededVoidFuture())
            }
            // Each connection keeps its last receive buffer for the next read, at the size NIO reads into (2 kB at
            // first): most requests are a few hundred bytes, and an event stream's connection reads one. Measured with
            // `Benchmarks/run streams-10k`: 10,000 streams held 20 MB of them. It grows for larger requests.
            try channel.syncOptions?.setOption(
                ChannelOptions.recvAllocator,
                value: AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 512, maximum: 65536))
            try Self.decoupleDecoder(pipeline, limits: base.configuration.httpDecoder)
            let codec = try pipeline.context(handlerType: HTTP1ToHTTPServerCodec.self)
            let deadlines = ConnectionDeadlines(limits)
            try pipeline.addHandler(deadlines.start, position: .first)
            let fastPath = FastPath(routes: routes, deadlines: deadlines)
            try pipeline.addHandler(fastPath, position: .before(codec.handler))
            let decoder = try pipeline.context(handlerType: ByteToMessageHandler<HTTPRequestDecoder>.self)
            try pipeline.addHandler(
                RequestScanner(fastPath: fastPath, limits: base.configuration.httpDecoder),
                position: .before(decoder.handler))
            try pipeline.addHandler(UnreadableRequest(), position: .before(codec.handler))
            if !(routes.clock is SystemClock) {
                try pipeline.addHandler(ClockDateHeader(clock: routes.clock), position: .before(codec.handler))
            }
            let wake = RouterWake(on: channel.eventLoop)
            try pipeline.addHandler(wake, position: .before(codec.handler))
            return Value(base: value, routerNeeded: wake.needed)
        }
    }

    /// Puts a request decoder with Hummingbird's limits in place of the one NIO set up, which hands the response encoder
    /// each request's method (so that it frames an answer to a `HEAD` without a body) and which the encoder lets go only
    /// when it writes that request's response head.
    ///
    /// Why: `FastPath` writes kept answers as the bytes they were the last time, past the encoder (the encoder
    /// would turn the same head into the same bytes each time: measured with `Benchmarks/run`, kept reads at
    /// 0.64–0.74x nginx through it, 0.71–0.87x past it). Answered past the encoder with NIO's decoder, each poll's
    /// method stayed queued until the connection closed (under the mixed load, Quad grew from 112 to 336 MB in 20
    /// minutes). A `HEAD` has no body without the encoder's help: Hummingbird answers it with an empty body, and the fast
    /// path answers only a `GET`.
    static func decoupleDecoder(
        _ pipeline: ChannelPipeline.SynchronousOperations, limits: HTTP1Channel.Configuration.DecoderConfiguration
    ) throws {
        var configuration = NIOHTTPDecoderLimitConfiguration()
        configuration.maxHeaderFieldSize = limits.maxHeaderFieldSize
        configuration.maxHeaderListSize = limits.maxHeaderListSize
        configuration.maxHeaderFieldCount = limits.maxHeaderFieldCount
        let nio = try pipeline.context(handlerType: ByteToMessageHandler<HTTPRequestDecoder>.self)
        try pipeline.addHandler(
            ByteToMessageHandler(HTTPRequestDecoder(limitConfiguration: configuration)), position: .after(nio.handler))
        pipeline.removeHandler(context: nio, promise: nil)
    }

    func handle(value: Value, logger: Logger) async {
        try? await value.routerNeeded.get()
        await base.handle(value: value.base, logger: logger)
    }
}

/// With a clock other than the system's (tests, `QUAD_NOW`), every answer's `Date` header tells that clock's time
/// (Hummingbird writes the system's): pages follow the server's `Date` for their own clock.
final class ClockDateHeader: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    package let clock: any QuadClock

    package init(clock: any QuadClock) {
        self.clock = clock
    }

    package func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .head(var head) = unwrapOutboundIn(data) else {
            context.write(data, promise: promise)
            return
        }
        head.headers.replaceOrAdd(name: "Date", value: HTTPDate.text(clock.now))
        context.write(wrapOutboundOut(.head(head)), promise: promise)
    }
}

/// The `Date` header's text, formatted once a second rather than once a response.
enum HTTPDate {
    private static let cache = NIOLockedValueBox((second: 0, text: ""))

    package static func text(_ now: Date) -> String {
        let second = Int(now.timeIntervalSince1970)
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
