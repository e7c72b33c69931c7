import Foundation
import Logging
import QuadCore
import QuadPlatform
import QuadWaitingLines
import ServiceLifecycle

/// Rooms in time without a cron job: on every five-minute mark of the server's clock, releases the bookings nobody
/// checked in by their deadline (deadlines fall on those marks, `BookingPolicy.checkInDeadline`), and on every
/// quarter hour announces the rooms whose free seats changed: a booking started or ended, the building opened or
/// closed.
///
/// Every instance runs it. A release is one `DELETE … RETURNING`, so each booking is released once and announced by
/// the instance that deleted it; a quarter hour is announced by the one instance that moves `room_clock` on to it.
struct RoomTimeKeeper: Service {
    let rooms: Rooms
    static let mark: TimeInterval = 300

    func run() async throws {
        try await MarkKeeper(every: Self.mark, clock: rooms.platform.clock) { await tick() }.run()
    }

    /// What is due at the server's clock now.
    func tick() async {
        let now = rooms.platform.clock.now
        do {
            let (released, count, waiting) = try await rooms.reservations.releaseUncheckedIn(at: now)
            rooms.platform.metrics.count(.released(reason: "no-check-in"), count)
            try await rooms.changed(released)
            await rooms.lines.announce(waiting)
            let slot = SlotRange.slot(containing: now)
            // This instance's list of rooms is read anew for the new quarter hour (`KeptRooms`); the open pages
            // hear of the rooms whose seats changed.
            if try await rooms.reservations.claim(slot: slot) {
                let before = try await rooms.store.all(at: SlotRange.instant(ofSlot: slot - 1))
                let after = try await rooms.store.all(at: SlotRange.instant(ofSlot: slot))
                let was = Dictionary(uniqueKeysWithValues: before.map { ($0.id, $0.spots) })
                for room in after where was[room.id] != room.spots {
                    await rooms.changed(room.id, spots: room.spots, .spots)
                }
            }
        } catch is CancellationError {
            // The server is stopping: nothing failed, and the next start does what is due then.
        } catch {
            Logger(label: "quad.rooms").error("Keeping rooms in time failed: \(error)")
        }
    }
}
