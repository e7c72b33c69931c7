import Foundation
import Observation
import QuadCore

/// The person's notifications screen: offers held for them (accept in one tap), their places in line, their loans
/// and which reminders they get. Live: their own `waiting` events (sent only to their connections) and `book`
/// events refresh it at once.
@MainActor
@Observable
public final class NotificationsStore: LiveStore {
    public private(set) var notes = KitNotifications()
    public private(set) var isOffline = false
    public private(set) var lastError: String?
    /// The last offer made to them that the screen has not shown yet (from a live event), for a banner.
    public private(set) var newOffer: WaitingEvent?

    public let session: KitSession
    @ObservationIgnored public private(set) var link: LiveLink?
    private var refresher: Refresher? { link?.refresher }
    @ObservationIgnored private let intents = OfferIntents()

    public init(session: KitSession) {
        self.session = session
        link = LiveLink(session: session) { [weak self] in try await self?.fetch() }
    }

    private func fetch() async throws {
        do {
            notes = try await session.client.notifications()
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
        case .waiting:
            if let change = event.decode(WaitingEvent.self), change.change == .offered { newOffer = change }
            await refresher?.refreshAfterChange()
        case .book, .reset:
            await refresher?.refreshAfterChange()
        default:
            break
        }
    }

    /// Takes the offer held in `placeId`; what it gave, or the server's reason (the offer ended, say).
    public func accept(_ placeId: String) async throws -> AcceptedOfferNote {
        do {
            let accepted = try await intents.accept(placeId, client: session.client)
            if newOffer?.place == placeId { newOffer = nil }
            await refresher?.refreshAfterChange()
            return accepted
        } catch {
            lastError = String(describing: error)
            throw error
        }
    }

    /// Leaves the line of `placeId` (declines its offer).
    public func leave(_ placeId: String) async throws {
        try await session.client.leaveLine(placeId: placeId)
        await refresher?.refreshAfterChange()
    }

    public func setReminders(off: Set<ReminderKind>) async throws {
        try await session.client.setReminders(off: off)
        await refresher?.refreshAfterChange()
    }
}
