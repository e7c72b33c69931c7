import Foundation
import Hummingbird
import QuadCore

/// What needs a signed-in person now, drawn on every page they open: the badge's count (offers held for them, notices
/// not yet dismissed, check-ins open now, overdue loans: what Today marks `needsYou`) and the offers, so one is seen
/// wherever they are.
package struct Attention: Sendable, Equatable {
    package var count = 0
    package var offers: [HeldOffer] = []
    /// When it changes by itself (an offer ends, a check-in opens or closes, a loan falls due): a page showing it is
    /// kept no longer, and an open page asks again then.
    package var changesAt: Date?

    package struct HeldOffer: Sendable, Equatable {
        package var id: String
        package var label: String
        package var until: Date

        package init(id: String, label: String, until: Date) {
            self.id = id
            self.label = label
            self.until = until
        }
    }

    package init(count: Int = 0, offers: [HeldOffer] = [], changesAt: Date? = nil) {
        self.count = count
        self.offers = offers
        self.changesAt = changesAt
    }

    /// The changes on the hub that may change it: a place in line, a notice, a loan, a booking (check-in).
    package static let changes: [HubChange] = [.event(.waiting), .event(.notice), .event(.book), .event(.room)]

    /// Both parts together.
    package static func + (lhs: Attention, rhs: Attention) -> Attention {
        Attention(
            count: lhs.count + rhs.count,
            offers: (lhs.offers + rhs.offers).sorted { ($0.until, $0.id) < ($1.until, $1.id) },
            changesAt: [lhs.changesAt, rhs.changesAt].compactMap { $0 }.min())
    }

    /// The earliest of `instants` still to come after `now`.
    package static func next(_ instants: [Date?], after now: Date) -> Date? {
        instants.compactMap { $0 }.filter { $0 > now }.min()
    }
}

/// A feature's share of what needs a person now. Asked on every page they open: it reads only what it must.
package protocol AttentionPart: Sendable {
    func attention(for person: Person, at now: Date) async throws -> Attention
}

/// Asks every feature's part what needs the signed-in person, for the pages' frame (`RequestInfo.attention`): on a
/// page's GET only (an API call, an asset, a fragment or a form's answer draws no frame, or is about to change it).
struct AttentionMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    let parts: [any AttentionPart]
    let clock: any QuadClock

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard let person = RequestInfo.current.person, request.method == .get || request.method == .head,
            Self.drawsTheFrame(request)
        else { return try await next(request, context) }
        var info = RequestInfo.current
        info.attention = try await Self.attention(for: person, parts: parts, at: clock.now)
        return try await RequestInfo.$current.withValue(info) { try await next(request, context) }
    }

    static func attention(for person: Person, parts: [any AttentionPart], at now: Date) async throws -> Attention {
        var all = Attention()
        for part in parts { all = all + (try await part.attention(for: person, at: now)) }
        return all
    }

    /// A page (or the badge's own answer) rather than the API, a file, an event stream or a page's live fragment.
    static func drawsTheFrame(_ request: Request) -> Bool {
        let path = request.uri.path
        if path == WebShell.attentionPath { return true }
        return !path.hasPrefix("/api/") && !path.hasPrefix("/assets/") && path != "/sw.js"
            && path != "/manifest.webmanifest" && request.uri.queryParameters.get("fragment") == nil
    }
}
