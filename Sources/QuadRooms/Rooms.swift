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
        self.store = RoomStore(database: platform.database, clock: platform.clock, events: platform.events)
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

    /// Books a spot for `owner` and tells everyone: the snapshot here at once, the event with the booking itself on
    /// PostgreSQL (`RoomStore.book`), else after it.
    func book(roomId: String, owner: Person?) async throws -> (booking: Booking, spots: Int) {
        let booked = try await store.book(roomId: roomId, owner: owner)
        if booked.announced {
            snapshot.invalidate()
        } else {
            await changed(roomId, spots: booked.spots, .spots)
        }
        return (booked.booking, booked.spots)
    }

    /// A room's new spots as its event's JSON (`RoomEvent`, as `publish` encodes it), for a statement that computes
    /// `spots` (`EventHub.publication`): the event encoded with its keys sorted (`spots` last) and a placeholder
    /// number, which the column replaces. Nil if the encoding is not as expected (then the event is published after
    /// the statement).
    static func spotsEventJSON(_ id: String) -> SQLQueryString? {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        guard let data = try? encoder.encode(Change(id: id, spots: 0, change: .spots)) else { return nil }
        let json = String(decoding: data, as: UTF8.self)
        guard json.hasSuffix(#","spots":0}"#) else { return nil }
        return "\(bind: String(json.dropLast(2))) || spots::text || '}'"
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
    package var link: ServiceLink? {
        // The tab bar shows a door.
        ServiceLink(
            key: "rooms", path: "/rooms",
            icon: "M6 21V4h12v17M3 21h18M14.5 12.5h.01")
    }

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
