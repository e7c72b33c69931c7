import Foundation
import Hummingbird
import OpenAPIHummingbird
import QuadCore
import QuadPlatform
import SQLKit
import ServiceLifecycle

/// The Rooms service: its store, its snapshot and the events that keep every instance's snapshot fresh.
package final class Rooms: Feature, PersonRemoval {
    let store: RoomStore
    let snapshot: RoomsSnapshot
    let platform: Platform

    package init(platform: Platform) {
        self.platform = platform
        self.store = RoomStore(database: platform.database, clock: platform.clock)
        self.snapshot = RoomsSnapshot(store: store)
    }

    typealias Change = RoomEvent
    /// The hub's event for a room's change (its spots, a new room, one removed).
    static let eventType = "room"

    /// Call after a committed change: this instance's snapshot is dropped at once, the others' when the event reaches them.
    func changed(_ id: String, spots: Int?, _ kind: Change.Kind) async {
        snapshot.invalidate()
        await platform.events.publish(Self.eventType, Change(id: id, spots: spots, change: kind))
    }

    package func release(
        _ usernameKey: String, in sql: any SQLDatabase
    ) async throws -> @Sendable () async -> Void {
        let released = try await RoomStore.releaseBookings(of: usernameKey, in: sql)
        return { for (room, spots) in released { await self.changed(room, spots: spots, .spots) } }
    }

    func room(_ id: String, request: Request) async throws -> Room {
        guard let record = try await store.find(id) else { throw Problem.notFound("There is no room \(id).") }
        return record.room(baseURL: request.baseURL(trustProxy: platform.configuration.trustProxy))
    }
}

extension Rooms {
    package static var migrations: [Migration] { RoomStore.migrations }
    package var link: ServiceLink? { ServiceLink(key: "rooms", path: "/rooms") }

    package func register(on routes: Routes, web: WebShell) throws {
        RoomsRoutes(rooms: self, web: web).register(on: routes)
        try RoomsOperations(rooms: self).registerHandlers(
            on: routes.router, configuration: .quad, middlewares: .quad(snapshots: ["listRooms": snapshot.answer]))
    }

    /// Drops the snapshot when another instance changes a room.
    package var services: [any Service] {
        [SnapshotInvalidation(events: platform.events, type: Self.eventType, snapshot: snapshot)]
    }

    package func loadDemoData(announce: @escaping @Sendable (String) -> Void) async throws {
        try await RoomsDemo.load(store, images: platform.images)
    }

    package var fastPath: [String: SnapshotFastPath.Lookup] { ["/api/rooms": snapshot.lookup] }
}
