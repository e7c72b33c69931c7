import Foundation
import QuadCore
import QuadTestSupport
import SQLKit
import Testing

@testable import QuadPlatform
@testable import QuadRooms
@testable import QuadServer

/// A batch of bookings written in one transaction (`reserveAll`, SQLite's `BookingBatcher`) gets the answers the same
/// bookings get one at a time: each sees those made before it in the batch, and the rooms' free seats after it.
@Suite struct ReservationBatchTests {
    /// A new database with two rooms: "race", three seats of which an untimed booking (Sam's) holds one; "lined",
    /// one seat, with Zed waiting in its line for `wanted`.
    static func rooms(
        _ engine: Database.Engine, wanted: SlotRange, _ body: (ReservationStore) async throws -> Void
    ) async throws {
        try await TestDatabase.withLocation(engine) { location in
            let database = try await Database.open(location, logger: TestDatabase.logger)
            do {
                try await Migrator.migrate(
                    database, (Platform.migrations + Features.migrations).sorted { $0.id < $1.id },
                    now: TestTime.start, logger: TestDatabase.logger)
                let clock = ManualClock(now: TestTime.start)
                let rooms = RoomStore(database: database, clock: clock, campus: FixedCampus.melbourne)
                _ = try await rooms.create(
                    RoomRecord(id: "race", name: "Race", building: "North", capacity: 3, seats: 3))
                _ = try await rooms.create(
                    RoomRecord(id: "lined", name: "Lined", building: "North", capacity: 1, seats: 1))
                let store = ReservationStore(
                    database: database, clock: clock, campus: FixedCampus.melbourne,
                    waiting: .testing(database, clock: clock))
                try await database.transaction { sql in
                    try await sql.raw(
                        """
                        INSERT INTO room_bookings (id, room_id, person, person_key, owner, created_at)
                        VALUES ('standing', 'race', 'Sam', 'sam', 'sam', '2026-01-01T00:00:00Z')
                        """
                    ).run()
                    _ = try await store.waiting.join(
                        .init(kind: .room, thing: "lined", detail: "\(wanted.lower)-\(wanted.upper)-seat"),
                        owner: "zed", name: "Zed", label: "Lined", sql)
                }
                try await body(store)
            } catch {
                await database.close()
                throw error
            }
            await database.close()
        }
    }

    static func outcome(_ result: Result<ReservationStore.Reserved, any Error>) -> String {
        switch result {
        case .success(let reserved): "booked, \(reserved.spots) free now"
        case .failure(let problem as Problem):
            problem.type == "about:blank" ? "\(problem.status.code)" : problem.type.components(separatedBy: ":").last!
        case .failure(is ValidationFailure): "invalid"
        case .failure(let error): "error: \(error)"
        }
    }

    static func stored(_ store: ReservationStore, _ range: SlotRange) async throws -> [String] {
        var all: [String] = []
        for room in ["race", "lined"] {
            all += try await store.reservations(roomId: room, during: range).map {
                "\(room) \($0.owner) \($0.hold.rawValue) \($0.seats) \($0.range.lower)-\($0.range.upper)"
            }
        }
        return all.sorted()
    }

    @Test(arguments: TestDatabase.engines)
    func aBatchAnswersEachBookingAsOneAtATime(engine: Database.Engine) async throws {
        let now = SlotRange.slot(containing: TestTime.start)
        let slots = { (lower: Int, count: Int) in SlotRange(lower: now + lower, upper: now + lower + count)! }
        let (a, b, c, d) = (slots(0, 4), slots(2, 4), slots(8, 4), slots(12, 4))
        func intent(
            _ owner: String, _ room: String, _ range: SlotRange, _ hold: Hold = .seat, seats: Int = 1
        )
            -> ReservationIntent
        {
            ReservationIntent(
                roomId: room, range: range, hold: hold, seats: seats, owner: owner, person: owner.capitalized,
                checkInBy: nil)
        }
        let intents = [
            intent("ada", "race", a), intent("bob", "race", b),
            intent("cy", "race", slots(3, 1)),  // Ada's and Bob's: both seats held then
            intent("ada", "race", c),  // another time: hers too
            intent("sam", "race", c),  // holds an untimed booking there
            intent("dan", "race", c, seats: 3), intent("eve", "nowhere", a),
            intent("fay", "race", c, .room),  // Ada holds a seat then
            intent("gus", "race", c),  // the other seat
            intent("amy", "lined", a),  // its one seat is offered to Zed, first in line
            intent("hal", "race", slots(0, 1)),  // the last seat now
            intent("ivy", "race", d, .room), intent("jo", "race", d),  // Ivy holds the whole room then
        ]
        let expected = [
            "booked, 1 free now", "booked, 1 free now", "room-full", "booked, 1 free now", "already-booked", "invalid",
            "404", "slot-taken", "booked, 1 free now", "held-for-line", "booked, 0 free now", "booked, 0 free now",
            "room-full",
        ]
        var oneAtATime: ([String], [String]) = ([], [])
        try await Self.rooms(engine, wanted: a) { store in
            var outcomes: [String] = []
            for intent in intents {
                do { outcomes.append(Self.outcome(.success(try await store.reserve(intent)))) } catch {
                    outcomes.append(Self.outcome(.failure(error)))
                }
            }
            oneAtATime = (outcomes, try await Self.stored(store, slots(-10, 40)))
        }
        try await Self.rooms(engine, wanted: a) { store in
            let campus = await store.campusClock()
            let results = try await store.database.transaction { sql in
                try await store.reserveAll(intents, sql, campus: campus)
            }
            let outcomes = results.map(Self.outcome)
            #expect(outcomes == expected)
            #expect(outcomes == oneAtATime.0)
            let stored = try await Self.stored(store, slots(-10, 40))
            #expect(stored == oneAtATime.1)
            #expect(stored.count == 6)
        }
    }
}
