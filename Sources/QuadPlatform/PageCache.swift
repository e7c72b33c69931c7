import Foundation
import HTTPTypes
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import QuadCore

/// Pages as the router answered them (head and bytes), kept so that `SnapshotFastPath` answers the same request
/// again without rendering: the same path and query, cookies (session, CSRF token, language), `Accept-Language`,
/// base URL and gzip choice, for the same person.
///
/// Why: measured with `Benchmarks/run`, a signed-in `/rooms` page cost 2.4 ms of CPU through the router (queries,
/// the view model, Mustache), `/timetable` 3.7 ms: 0.01–0.02× nginx serving the same HTML; the issue asks ≥ 0.25×.
///
/// Only a page that says it may be kept is (`WebShell.page(keep:)`, the internal `Quad-Keep` header, which the fast
/// path takes off every answer), and only a plain 200 that sets no cookie. A kept page is dropped:
/// - on any event or notice on the hub (any change on any instance: a booking, a special, a reading, a sign-out),
/// - on any unsafe request this instance answers (a change that tells nobody, such as a renamed account),
/// - when the page's own time is up (a countdown's next minute, a class starting),
/// - when the hub may have missed notices (its LISTEN restarted).
///
/// A page rendered while any of that happened is not kept: its version is taken when its request arrives, before
/// the router reads anything.
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
        let body: ByteBuffer
        let person: Person?
        let stamp: Stamp
        let expires: Date?
    }

    /// When a request arrived: what had changed by then (`version`), under which hub generation.
    package struct Stamp: Equatable, Sendable {
        let version: Int
        let generation: Int
    }

    /// The header a page route sets to say its answer may be kept: `change` (until anything changes) or the
    /// instant (ms since 1970) it goes stale by itself.
    package static let keepHeader = HTTPField.Name("Quad-Keep")!
    static let keepHeaderName = "quad-keep"

    private struct State {
        var pages: [Key: Page] = [:]
        var bytes = 0
        var version = 0
    }

    private let state = NIOLockedValueBox(State())
    private let hub: EventHub
    private let clock: any QuadClock
    /// At most this many bytes of pages; past it the cache starts again.
    private let capacity: Int

    package init(hub: EventHub, clock: any QuadClock, capacity: Int = 8 << 20) {
        self.hub = hub
        self.clock = clock
        self.capacity = capacity
        hub.onChange { [weak self] in self?.dropAll() }
    }

    /// The stamp of a request arriving now; nil when the hub may be missing notices (nothing is kept then).
    func stamp() -> Stamp? {
        guard let generation = hub.noticeGeneration else { return nil }
        return Stamp(version: state.withLockedValue { $0.version }, generation: generation)
    }

    /// Something changed, or may have: every kept page goes, and none rendered before now is kept.
    package func dropAll() {
        state.withLockedValue { state in
            state.version += 1
            state.pages.removeAll(keepingCapacity: true)
            state.bytes = 0
        }
    }

    /// The page kept for `key`, if it is still good for `person` (who signs this request now).
    func page(_ key: Key, person: Person?) -> Page? {
        guard let generation = hub.noticeGeneration else { return nil }
        let now = clock.now
        return state.withLockedValue { state in
            guard let page = state.pages[key], page.stamp == Stamp(version: state.version, generation: generation),
                page.person == person, page.expires.map({ now < $0 }) ?? true
            else { return nil }
            return page
        }
    }

    /// Keeps the router's answer to a request that arrived at `stamp`, if nothing changed since.
    func keep(_ key: Key, head: HTTPResponseHead, body: ByteBuffer, person: Person?, stamp: Stamp, keep: String) {
        guard hub.noticeGeneration == stamp.generation else { return }
        var expires: Date?
        if keep != "change" {
            guard let milliseconds = Double(keep) else { return }
            expires = Date(timeIntervalSince1970: milliseconds / 1000)
            guard clock.now < expires! else { return }
        }
        var head = head
        head.headers.remove(name: "date")
        let page = Page(head: head, body: body, person: person, stamp: stamp, expires: expires)
        state.withLockedValue { state in
            guard state.version == stamp.version else { return }
            if state.bytes + body.readableBytes > capacity {
                state.pages.removeAll(keepingCapacity: true)
                state.bytes = 0
            }
            state.bytes += body.readableBytes - (state.pages[key]?.body.readableBytes ?? 0)
            state.pages[key] = page
        }
    }

    /// The `Quad-Keep` value for a page that stays the same until something changes or, when given, until `until`.
    package static func keepValue(until: Date?) -> String {
        until.map { String(Int64(($0.timeIntervalSince1970 * 1000).rounded(.down))) } ?? "change"
    }
}
