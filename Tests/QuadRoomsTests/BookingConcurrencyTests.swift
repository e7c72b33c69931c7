import Foundation
import Hummingbird
import HummingbirdTesting
import QuadCore
import QuadTestSupport
import Testing

@testable import QuadPlatform
@testable import QuadRooms
@testable import QuadServer

/// Under any concurrency there are never more bookings than spots, and spots never go below 0.
@Suite struct BookingConcurrencyTests {
    @Test(arguments: TestDatabase.engines)
    func twoHundredPeopleRaceForTwentySpots(engine: Database.Engine) async throws {
        try await TestApp.run(engine) { app, client in
            let store = app.features.rooms.store
            _ = try await store.create(
                RoomRecord(id: "race", name: "Race", building: "North Hall", capacity: 20, seats: 20))
            var people: [HTTPFields] = []
            for person in 0..<200 { people.append(try await app.signedIn("person\(person)")) }
            let everyone = people
            let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for headers in everyone {
                    group.addTask {
                        // As a client does: "busy, try again" (503, every PostgreSQL connection held for the pool's
                        // whole wait, as on a loaded CI machine) is asked again; it booked nothing.
                        var status = try await client.book("race", as: headers).status
                        for _ in 0..<10 where status == .serviceUnavailable {
                            status = try await client.book("race", as: headers).status
                        }
                        return status
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let tally = Dictionary(grouping: statuses.map(\.code), by: { $0 }).mapValues(\.count)
            #expect(statuses.filter { $0 == .created }.count == 20, "\(tally)")
            #expect(statuses.filter { $0 == .conflict }.count == 180, "\(tally)")
            let room = try #require(try await store.find("race"))
            let bookings = try await app.held(in: "race")
            #expect(room.spots == 0)
            #expect(bookings.count == 20)
            #expect(Occupancy(seats: 20, holds: bookings.map { ($0.range, $0.hold) }).peakSeatsHeld == 20)
        }
    }

    /// Without an idempotency key (a double tap in a client that sends none), one person still gets one
    /// spot per room, while their bookings in other rooms, made at the same moment, all go through.
    @Test(arguments: TestDatabase.engines)
    func onePersonRacingForOneRoomHoldsOneSpot(engine: Database.Engine) async throws {
        try await TestApp.run(engine, at: TestTime.weekdayMorning, configure: { $0.loadDemoData = true }) {
            app, client in
            let ada = try await app.signedIn("ada")
            let rooms = ["mina", "mina", "mina", "mina", "mina", "mina", "yana", "ljerka", "helmold", "septima"]
            let answers = try await withThrowingTaskGroup(of: (String, TestResponse).self) { group in
                for room in rooms { group.addTask { (room, try await client.book(room, as: ada)) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let mina = answers.filter { $0.0 == "mina" }.map(\.1)
            #expect(mina.filter { $0.status == .created }.count == 1)
            #expect(
                mina.filter { $0.status == .conflict }.allSatisfy {
                    ($0.json["type"] as? String)?.hasSuffix("already-booked") == true
                })
            #expect(answers.filter { $0.0 != "mina" }.allSatisfy { $0.1.status == .created })
            let store = app.features.rooms.store
            #expect(try await app.held(in: "mina").count == 1)
            #expect(try await store.find("mina")?.spots == 38)
            #expect(try await store.find("yana")?.spots == 33)
        }
    }

    @Test(arguments: TestDatabase.engines)
    func fiftyRepeatsOfOneIdempotentRequestBookOnce(engine: Database.Engine) async throws {
        try await TestApp.run(engine, at: TestTime.weekdayMorning, configure: { $0.loadDemoData = true }) {
            app, client in
            var signedIn = try await app.signedIn("ada")
            signedIn[.idempotencyKey] = "one-intent"
            let headers = signedIn
            let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for _ in 0..<50 {
                    group.addTask { try await client.book("mina", as: headers).status }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.allSatisfy { $0 == .created || $0 == .conflict })
            #expect(try await app.held(in: "mina").count == 1)
            #expect(try await app.features.rooms.store.find("mina")?.spots == 38)
            // The retry after the storm replays the first answer.
            let retry = try await client.book("mina", as: headers)
            #expect(retry.status == .created)
            #expect(retry.headers[.idempotentReplayed] == "true")
        }
    }

    @Test(arguments: TestDatabase.engines)
    func aBookingReachesAnotherClientsEventStream(engine: Database.Engine) async throws {
        try await TestApp.run(engine, at: TestTime.weekdayMorning, configure: { $0.loadDemoData = true }) {
            app, client in
            var people: [HTTPFields] = []
            for attempt in 0..<50 { people.append(try await app.signedIn("watcher\(attempt)")) }
            let everyone = people
            try await app.listening {
                let watcher = app.platform.events.subscribe(after: nil, types: [.room])
                // On PostgreSQL the hub hears its own events through LISTEN, which starts in the background.
                try await eventually("LISTEN is up") { app.platform.events.isListening }
                #expect(try await client.book("mina", as: everyone[0]).status == .created)
                let event = try #require(await first(watcher.events), "the booking's event")
                let change = try JSONDecoder().decode(Rooms.Change.self, from: Data(event.data.utf8))
                #expect(event.type == "room" && change.id == "mina" && change.change == .spots)
                #expect((change.spots ?? 99) < 39)
                watcher.cancel()
            }
        }
    }
}

extension TestApp {
    /// The bookings of `room` that have not ended.
    func held(in room: String) async throws -> [Reservation] {
        let now = SlotRange.slot(containing: clock.now)
        return try await features.rooms.reservations.reservations(
            roomId: room, during: SlotRange(lower: now, upper: now + 100_000)!)
    }
}
