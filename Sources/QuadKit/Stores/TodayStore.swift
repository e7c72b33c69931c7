import Foundation
import Observation
import QuadCore

/// The person's Today screen: their day as the server draws it (what is held for them first, their bookings, lines,
/// loans, classes, the specials), and the badge's count (`day.needsYou`). Live: their own `waiting` events, and
/// rooms, books and specials changing, refresh it at once. An offer is taken or declined from here in one tap.
@MainActor
@Observable
public final class TodayStore: LiveStore {
    public private(set) var day: Today?
    public private(set) var isOffline = false
    public private(set) var lastError: String?

    public let session: KitSession
    /// The language the day is drawn in (nil: the server's default).
    public let language: String?
    @ObservationIgnored public private(set) var link: LiveLink?
    private var refresher: Refresher? { link?.refresher }
    @ObservationIgnored private let intents = OfferIntents()

    public init(session: KitSession, language: String? = nil) {
        self.session = session
        self.language = language
        link = LiveLink(session: session) { [weak self] in try await self?.fetch() }
    }

    /// How many things need the person now: the badge (0 before the first answer).
    public var needsYou: Int { day?.needsYou ?? 0 }

    private func fetch() async throws {
        do {
            day = try await session.client.today(language: language)
            isOffline = false
            lastError = nil
        } catch {
            let kit = KitError.from(error)
            if kit.isOffline { isOffline = true }
            lastError = kit.description
            throw kit
        }
    }

    public func apply(_ event: ServerEvent) async {
        switch event.kind {
        case .waiting, .room, .book, .special, .reset:
            await refresher?.refreshAfterChange()
        default:
            break
        }
    }

    /// Takes the offer of `placeId` (an item of the `offers` section); what it gave, or the server's reason.
    public func accept(_ placeId: String) async throws -> AcceptedOfferNote {
        do {
            let accepted = try await intents.accept(placeId, client: session.client)
            await refresher?.refreshAfterChange()
            return accepted
        } catch {
            lastError = String(describing: error)
            throw error
        }
    }

    /// Declines the offer of `placeId`, or leaves that line.
    public func decline(_ placeId: String) async throws {
        try await session.client.leaveLine(placeId: placeId)
        await refresher?.refreshAfterChange()
    }
}
