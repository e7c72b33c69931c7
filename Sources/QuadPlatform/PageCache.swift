import Foundation
import HTTPTypes
import Hummingbird
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import QuadCore

/// Pages as the router answered them (head and bytes), kept so that `FastPath` answers the same request
/// again without rendering: the same path and query, cookies (session, CSRF token, language), `Accept-Language`,
/// base URL and gzip choice, for the same person.
///
/// Why: measured with `Benchmarks/run`, a signed-in `/rooms` page cost 2.4 ms of CPU through the router (queries,
/// the view model, Mustache), `/timetable` 3.7 ms: 0.01–0.02× nginx serving the same HTML; the issue asks ≥ 0.25×.
///
/// Only a page that says it may be kept is (`WebShell.page(keptUntilChangeOf:)`, the internal `Quad-Keep` header,
/// which the fast path takes off every answer), and only a plain 200 that sets no cookie. A kept page is dropped:
/// - on any event or notice on the hub, from any instance, of a type it shows (a booking for `/rooms`, a reading for
///   `/timetable`; a sign-out or a changed account, `sessions`, for every page),
/// - after any unsafe request this instance answers that may have changed something (`Changes`: a change that
///   tells nobody, such as a renamed account, before its answer is sent),
/// - when the page's own time is up (a countdown's next minute, a class starting),
/// - when the hub may have missed notices (its LISTEN restarted).
///
/// A page rendered while any of that happened is not kept: its stamp is taken when its request arrives, before the
/// router reads anything.
///
/// Why by type: measured with `Benchmarks/run`, dropping every page on every event (the demo's readings, every 3 s)
/// made each `/rooms` reader draw the page again at once: p99 83 ms against nginx's 5 ms.
package final class PageCache: Sendable {
    /// What the router's answer depends on, read off the request as it arrived.
    package struct Key: Hashable, Sendable {
        let target: String
        let cookies: String
        let acceptLanguage: String
        let baseURL: String
        let gzip: Bool
    }

    package struct Page: Sendable {
        /// The router's head, without `Date` (written per answer) and without `Quad-Keep`.
        let head: HTTPResponseHead
        /// `head` as HTTP/1.1 writes it, unterminated (each answer adds its `Date`, its id and the blank line); nil
        /// when its length is not the body's (the encoder then frames it).
        let wire: ByteBuffer?
        let body: ByteBuffer
        let person: Person?
        let stamp: Stamp
        /// The types of change it shows.
        let types: [String]
        let expires: Date?
    }

    /// When a request arrived: how many changes of each type there had been, how many drops of every page, and the
    /// hub's generation.
    package struct Stamp: Sendable {
        let versions: [String: Int]
        let all: Int
        let generation: Int

        /// Whether nothing of `types` changed (and nothing was dropped) between `self` and `now`.
        func holds(_ types: [String], now: Stamp) -> Bool {
            all == now.all && generation == now.generation && types.allSatisfy { versions[$0] == now.versions[$0] }
        }
    }

    /// The header a page route sets to say its answer may be kept: `change` (until a change it shows) or the
    /// instant (ms since 1970) it goes stale by itself; the username it was drawn for (`-`: a visitor), which
    /// must be whom the fast path took the request to be from; the types of change it shows, with commas.
    package static let keepHeader = HTTPField.Name("Quad-Keep")!
    static let keepHeaderName = "quad-keep"

    private struct State {
        var pages: [Key: Page] = [:]
        var bytes = 0
        /// Changes heard, by type (event or notice), and drops of every page.
        var versions: [String: Int] = [:]
        var all = 0
        /// The feeds' changes (`feeds`) of the last `staleFor`, oldest first: each one's type, version and time.
        var fed: [(type: String, version: Int, at: Date)] = []

        func stamp(_ generation: Int) -> Stamp { Stamp(versions: versions, all: all, generation: generation) }
    }

    private let state = NIOLockedValueBox(State())
    /// The pages the router is drawing now, by key, with whom to wake once each is drawn: one request draws a page
    /// and the others for it wait (single flight, as `Kept` builds an answer once for all who ask). Why: measured with
    /// `Benchmarks/run` (issue 41), every reading the demo stores drops `/timetable` and Today, and each of the 64
    /// connections asking for them then drew its own copy at once: p99 of 213 and 279 ms against nginx's 5 ms.
    /// Bounded by the connections: each draws or waits for one page at a time.
    private let drawing = NIOLockedValueBox(Drawings())

    private struct Drawings {
        var waiting: [Key: [@Sendable () -> Void]] = [:]
        /// The hashes of the keys whose last answer said nothing of being kept (no `Quad-Keep`: `/health`, the
        /// contract, a 404, any route that keeps nothing): their requests go to the router side by side, not in
        /// single flight. Why: measured with `Benchmarks/run` (issue 41), 64 connections asking `GET /health` went
        /// through the router one at a time, each answer waking the 63 others to wait again: 709 answers a second,
        /// at 1.5 ms of Quad's CPU each, against nginx's 44,171. A hash's collision costs only that single flight.
        /// At most `maxUnkept`; past it, the set starts again.
        var unkept: Set<Int> = []
    }

    /// Keys remembered as keeping nothing, at most (32 kB of hashes).
    static let maxUnkept = 4096

    private let hub: EventHub
    private let clock: any QuadClock
    /// At most this many bytes of pages; past it the cache starts again.
    private let capacity: Int

    package init(hub: EventHub, clock: any QuadClock, capacity: Int = 8 << 20) {
        self.hub = hub
        self.clock = clock
        self.capacity = capacity
        hub.onChange { [weak self] type in self?.changed(type) }
    }

    private func changed(_ type: String) {
        let now = clock.now
        state.withLockedValue { state in
            state.versions[type, default: 0] += 1
            guard Self.feeds.contains(type) else { return }
            state.fed.append((type, state.versions[type]!, now))
            state.fed.removeFirst(state.fed.prefix { now.timeIntervalSince($0.at) > Self.staleFor }.count)
        }
    }

    /// Changes that come from a feed (a car park's reading, a departure's prediction), never from whoever reads the
    /// page: while one request draws a page again after one, the others are answered with the page kept before it, if
    /// the first change it missed is at most `staleFor` old. Why: measured with `Benchmarks/run` (issue 41), each of
    /// the demo's readings (every 3 s) made every `/timetable` and Today reader wait for the page to be drawn again
    /// (20–50 ms under load): p99 of 40 and 56 ms against nginx's 5. What a person did themselves (a booking, a
    /// hold, a sign-out) is never one of these: they always get the page that shows it.
    static let feeds: Set<String> = [EventKind.parking.rawValue, EventKind.departure.rawValue, HubChange.fed.name]
    static let staleFor: TimeInterval = 2

    /// Every page shows who is signed in.
    static let sessions = "sessions"

    /// The stamp of a request arriving now; nil when the hub may be missing notices (nothing is kept then).
    func stamp() -> Stamp? {
        guard let generation = hub.noticeGeneration else { return nil }
        return state.withLockedValue { $0.stamp(generation) }
    }

    /// Something changed, or may have: every kept page goes, and none rendered before now is kept.
    package func dropAll() {
        state.withLockedValue { state in
            state.all += 1
            state.pages.removeAll(keepingCapacity: true)
            state.bytes = 0
        }
    }

    /// The page kept for `key`, if it is still good for `person` (who signs this request now).
    func page(_ key: Key, person: Person?) -> Page? {
        guard let generation = hub.noticeGeneration else { return nil }
        let now = clock.now
        return state.withLockedValue { state in
            guard let page = state.pages[key], page.stamp.holds(page.types, now: state.stamp(generation)),
                page.person == person, page.expires.map({ now < $0 }) ?? true
            else { return nil }
            return page
        }
    }

    /// Keeps the router's answer to a request that arrived at `stamp` from `person`, if nothing changed since and the
    /// page was drawn for that person (`keep`: the `Quad-Keep` value).
    func keep(_ key: Key, head: HTTPResponseHead, body: ByteBuffer, person: Person?, stamp: Stamp, keep: String) {
        let parts = keep.split(separator: " ")
        guard parts.count == 3, parts[1] == (person?.username ?? "-"), hub.noticeGeneration == stamp.generation,
            key.size <= Self.maxKeySize
        else { return }
        var expires: Date?
        if parts[0] != "change" {
            guard let milliseconds = Double(parts[0]) else { return }
            expires = Date(timeIntervalSince1970: milliseconds / 1000)
            guard clock.now < expires! else { return }
        }
        var head = head
        head.headers.remove(name: "date")
        // Each answer's own: the request that drew the page is not the one it is answered to next, nor its client the
        // next one's (where that client stands with the limiter; its policy is the same for all).
        head.headers.remove(name: "x-request-id")
        head.headers.remove(name: HTTPField.Name.rateLimit.rawName)
        let types = [Self.sessions] + parts[2].split(separator: ",").map(String.init)
        let framed =
            head.headers[canonicalForm: "content-length"] == ["\(body.readableBytes)"]
            && !head.headers.contains(name: "transfer-encoding")
        let wire = framed ? FastPath.bytes(head, allocator: ByteBufferAllocator(), terminated: false) : nil
        let page = Page(
            head: head, wire: wire, body: body, person: person, stamp: stamp, types: types, expires: expires)
        // The body, with room for the key and the head.
        let size = { (page: Page) in page.body.readableBytes + key.size + 1024 }
        let now = clock.now
        state.withLockedValue { state in
            // Not over a page drawn later (one still good at this page's stamp, and still in time). A page whose time
            // is up is replaced: measured (issue 41), `/timetable`, whose countdown is up every minute, was drawn
            // for every request from then until the next reading changed the stamp (550 draws in 8 s).
            guard stamp.holds(types, now: state.stamp(stamp.generation)),
                state.pages[key].map({ !$0.stamp.holds($0.types, now: stamp) || $0.expires.map { now >= $0 } ?? false })
                    ?? true
            else { return }
            state.bytes -= state.pages[key].map(size) ?? 0
            if state.bytes + size(page) > capacity {
                state.pages.removeAll(keepingCapacity: true)
                state.bytes = 0
            }
            state.bytes += size(page)
            state.pages[key] = page
        }
    }

    /// What a request for a page that is not kept does (`draw(_:for:orWait:)`).
    enum Drawing {
        /// Draws it, and then calls `drawn(key)` once its answer is written or abandoned.
        case draw
        /// Draws it beside anyone else asking: its route kept nothing last time (`Drawings.unkept`).
        case alone
        /// Waits: someone else is drawing it; `wake` is called once they are done.
        case wait
        /// Is answered with the page kept before a feed's change, while someone else draws it again (`feeds`).
        case kept(Page)
    }

    /// A request from `person` for the page at `key`, which is not kept, draws it when no one else is drawing it.
    func draw(_ key: Key, for person: Person?, orWait wake: @escaping @Sendable () -> Void) -> Drawing {
        drawing.withLockedValue { drawing in
            if drawing.unkept.contains(key.hashValue) { return .alone }
            guard drawing.waiting[key] == nil else {
                if let page = pageBehindFeeds(key, person: person) { return .kept(page) }
                drawing.waiting[key]!.append(wake)
                return .wait
            }
            drawing.waiting[key] = []
            return .draw
        }
    }

    /// The router answered a request for `key` without saying it may be kept (`kept` false), or said so (true).
    func answered(_ key: Key, mayBeKept kept: Bool) {
        let hash = key.hashValue
        drawing.withLockedValue { drawing in
            if kept {
                drawing.unkept.remove(hash)
                return
            }
            if drawing.unkept.count >= Self.maxUnkept { drawing.unkept.removeAll(keepingCapacity: true) }
            drawing.unkept.insert(hash)
        }
    }

    /// The page kept for `key` for `person`, if all it missed is feeds' changes of the last `staleFor`.
    private func pageBehindFeeds(_ key: Key, person: Person?) -> Page? {
        guard let generation = hub.noticeGeneration else { return nil }
        let now = clock.now
        return state.withLockedValue { state in
            guard let page = state.pages[key], page.person == person, page.expires.map({ now < $0 }) ?? true,
                page.stamp.all == state.all, page.stamp.generation == generation
            else { return nil }
            for type in page.types where page.stamp.versions[type] != state.versions[type] {
                let missed = (page.stamp.versions[type] ?? 0) + 1
                guard Self.feeds.contains(type),
                    let first = state.fed.first(where: { $0.type == type && $0.version == missed }),
                    now.timeIntervalSince(first.at) <= Self.staleFor
                else { return nil }
            }
            return page
        }
    }

    /// Requests waiting for a page being drawn.
    var waiting: Int { drawing.withLockedValue { $0.waiting.values.map(\.count).reduce(0, +) } }

    /// The page for `key` is drawn (kept or not): whoever waits for it is woken.
    func drawn(_ key: Key) {
        for wake in drawing.withLockedValue({ $0.waiting.removeValue(forKey: key) }) ?? [] { wake() }
    }

    /// Requests whose target and headers take more than this are answered by the router each time.
    static let maxKeySize = 8 * 1024

    /// The `Quad-Keep` value for a page drawn for `person` that stays the same until a change of `types` or, when
    /// given, until `until`.
    package static func keepValue(until: Date?, person: Person?, types changes: [HubChange]) -> String {
        let types = changes.map(\.name)
        let until = until.map { String(Int64(($0.timeIntervalSince1970 * 1000).rounded(.down))) } ?? "change"
        return until + " " + (person?.username ?? "-") + " " + (types.isEmpty ? "," : types.joined(separator: ","))
    }

    /// Drops the kept pages once an unsafe request is answered, before its answer goes out: what it changed may
    /// tell nobody (a renamed account). A refusal (4xx) changed nothing, and does not: anyone can send one.
    struct Changes: RouterMiddleware {
        typealias Context = AppRequestContext
        let pages: PageCache

        func handle(
            _ request: Request, context: Context, next: (Request, Context) async throws -> Response
        ) async throws -> Response {
            guard ![.get, .head, .options].contains(request.method) else { return try await next(request, context) }
            do {
                let response = try await next(request, context)
                if !(400..<500).contains(response.status.code) { pages.dropAll() }
                return response
            } catch {
                pages.dropAll()
                throw error
            }
        }
    }
}

extension PageCache.Key {
    var size: Int { target.utf8.count + cookies.utf8.count + acceptLanguage.utf8.count + baseURL.utf8.count }
}
