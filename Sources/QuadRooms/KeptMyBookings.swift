import Foundation
import QuadCore
import QuadPlatform

/// `GET /api/me/bookings`, as each person's apps poll it: encoded once per person, and again only when something in
/// it may have changed. Every booking made, cancelled, released or given from a waiting line publishes its room's
/// event, as does a room renamed or removed; a check-in sends `checkInNotice`; a booking over leaves the list at the
/// quarter hour it ends, when the answer goes stale by itself. Measured (issue 41): read from the database, three
/// queries a request, it ran at 0.05x nginx.
enum KeptMyBookings {
    /// A check-in changes a booking's `checkedIn` and no room's free seats: it is announced by this notice only.
    static let checkInNotice = "room-check-in"

    static func answer(store: RoomStore, reservations: ReservationStore, platform: Platform) -> KeptAnswer {
        KeptAnswer(
            operation: Operations.ListMyBookings.id, path: "/api/me/bookings", platform: platform,
            droppedBy: [.event(.room), .notice(checkInNotice)],
            // The access layer lets only members and admins in (the fast path asks the operation's rule too).
            key: { _, person in person?.username.lowercased() }
        ) { username in
            // Read before the bookings: the list holds until the quarter hour after this one at most.
            let slot = SlotRange.slot(containing: platform.clock.now)
            let all = try await Rooms.bookings(of: username, store: store, reservations: reservations)
            return try EncodedAnswer.json(
                Components.Schemas.BookingList(all), expires: SlotRange.instant(ofSlot: slot + 1))
        }
    }
}
