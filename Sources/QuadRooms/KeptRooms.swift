import Foundation
import QuadCore
import QuadPlatform

/// The rooms with their free seats during one quarter hour, in booking order.
struct RoomsNow: Sendable {
    var slot: Int
    var rooms: [RoomRecord]
}

/// The rooms as every page and poll reads them: loaded once per change and per quarter hour (free seats change only
/// when bookings start or end, on the quarter hour), and `GET /api/rooms` encoded once from that per base URL.
struct KeptRooms: Sendable {
    let loaded: Kept<One, RoomsNow>
    let list: KeptAnswer
    /// Each person's `GET /api/me/bookings` (`KeptMyBookings`).
    let mine: KeptAnswer

    init(store: RoomStore, reservations: ReservationStore, platform: Platform) {
        let loaded = Kept<One, RoomsNow>(
            hub: platform.events, clock: platform.clock, droppedBy: [.event(.room)],
            expires: { SlotRange.instant(ofSlot: $0.slot + 1) }
        ) { try await Self.load(store) }
        self.loaded = loaded
        self.mine = KeptMyBookings.answer(store: store, reservations: reservations, platform: platform)
        self.list = KeptAnswer(
            operation: Operations.ListRooms.id, path: "/api/rooms", platform: platform, droppedBy: [.event(.room)]
        ) { baseURL in
            let now = try await loaded.value()
            return try EncodedAnswer.json(
                RoomList(rooms: now.rooms.map { $0.room(baseURL: baseURL) }),
                expires: SlotRange.instant(ofSlot: now.slot + 1))
        }
    }

    private static func load(_ store: RoomStore) async throws -> RoomsNow {
        let now = store.clock.now
        let loaded = try await store.all()
        let byId = Dictionary(uniqueKeysWithValues: loaded.map { ($0.id, $0) })
        return RoomsNow(
            slot: SlotRange.slot(containing: now),
            rooms: Room.sortedForBooking(loaded.map { $0.room(baseURL: "") }).compactMap { byId[$0.id] })
    }

    /// The rooms, in booking order, with their free seats now.
    func rooms() async throws -> [RoomRecord] { try await loaded.value().rooms }
}

struct RoomList: Codable, Sendable {
    var rooms: [Room]
}
