import Foundation
import Hummingbird
import QuadCore
import ServiceLifecycle

/// The Rooms service: its store, its snapshot and the events that keep every instance's snapshot fresh.
final class Rooms: Sendable {
    let store: RoomStore
    let snapshot: RoomsSnapshot
    let platform: Platform
    static let link = ServiceLink(key: "rooms", path: "/rooms")

    init(platform: Platform) {
        self.platform = platform
        self.store = RoomStore(database: platform.database, clock: platform.clock)
        self.snapshot = RoomsSnapshot(store: store)
    }

    /// What a `room` event says: which room, and its spots now (nil when it was deleted).
    struct Change: Codable, Sendable {
        var id: String
        var spots: Int?
        var change: Kind

        enum Kind: String, Codable, Sendable { case spots, updated, created, deleted }
    }

    /// Call after a committed change: this instance's snapshot is dropped at once, the others' when the event reaches them.
    func changed(_ id: String, spots: Int?, _ kind: Change.Kind) async {
        snapshot.invalidate()
        await platform.events.publish("room", Change(id: id, spots: spots, change: kind))
    }

    func room(_ id: String, request: Request) async throws -> Room {
        guard let record = try await store.find(id) else { throw Problem.notFound("There is no room \(id).") }
        return record.room(baseURL: request.baseURL(trustProxy: platform.configuration.trustProxy))
    }
}

/// Drops the rooms snapshot when another instance changes a room (its event arrives through the hub).
struct RoomsInvalidation: Service {
    let rooms: Rooms

    func run() async throws {
        await cancelWhenGracefulShutdown {
            // A subscription that fell behind is cut off: subscribe again (and drop the snapshot, as events were missed).
            while !Task.isCancelled {
                let subscription = rooms.platform.events.subscribe(after: nil, types: ["room"])
                for await _ in subscription.events { rooms.snapshot.invalidate() }
                subscription.cancel()
                rooms.snapshot.invalidate()
                try? await Task.sleep(for: .milliseconds(100))
            }
        }
    }
}
