import Foundation
import QuadCore
import QuadPlatform

typealias RoomsSnapshot = Snapshot<RoomsNow>

/// The rooms with their free seats during one quarter hour, in booking order.
struct RoomsNow: Sendable {
    var slot: Int
    var rooms: [RoomRecord]
}

extension Snapshot<RoomsNow> {
    /// The rooms in booking order; `GET /api/rooms` encoded once per change and per quarter hour (free seats change
    /// only when bookings start or end, on the quarter hour).
    convenience init(store: RoomStore) {
        self.init(clock: store.clock) {
            let now = store.clock.now
            let loaded = try await store.all()
            let byId = Dictionary(uniqueKeysWithValues: loaded.map { ($0.id, $0) })
            return RoomsNow(
                slot: SlotRange.slot(containing: now),
                rooms: Room.sortedForBooking(loaded.map { $0.room(baseURL: "") }).compactMap { byId[$0.id] })
        } isStale: { loaded, now in
            SlotRange.slot(containing: now) != loaded.slot
        } encode: { loaded, baseURL, _ in
            try Self.json(
                RoomList(rooms: loaded.rooms.map { $0.room(baseURL: baseURL) }),
                expires: SlotRange.instant(ofSlot: loaded.slot + 1))
        }
    }

    /// The rooms, in booking order, with their free seats now.
    func rooms() async throws -> [RoomRecord] { try await loaded().rooms }
}

struct RoomList: Codable, Sendable {
    var rooms: [Room]
}
