import Foundation
import QuadCore
import QuadPlatform

typealias RoomsSnapshot = Snapshot<[RoomRecord]>

extension Snapshot<[RoomRecord]> {
    /// The rooms in booking order; `GET /api/rooms` encoded once per change.
    convenience init(store: RoomStore) {
        self.init(clock: store.clock) {
            let loaded = try await store.all()
            let byId = Dictionary(uniqueKeysWithValues: loaded.map { ($0.id, $0) })
            return Room.sortedForBooking(loaded.map { $0.room(baseURL: "") }).compactMap { byId[$0.id] }
        } encode: { rooms, baseURL, _ in
            try Self.json(RoomList(rooms: rooms.map { $0.room(baseURL: baseURL) }))
        }
    }

    /// The rooms, in booking order.
    func rooms() async throws -> [RoomRecord] { try await loaded() }
}

struct RoomList: Codable, Sendable {
    var rooms: [Room]
}
