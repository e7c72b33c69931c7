import Foundation
import QuadCore
import QuadTestSupport
import Testing

@testable import QuadPlatform
@testable import QuadRooms
@testable import QuadServer

/// Rooms in time under concurrency: however many people race, on SQLite and on PostgreSQL, and from two instances
/// (two connection pools on one database), the seats held at any instant never exceed the room's, and a whole-room
/// booking shares its time with nobody.
@Suite struct ReservationConcurrencyTests {
    /// Two stores on one new database, as two instances of Quad: on PostgreSQL each with a pool of its own. An
    /// SQLite file has one Quad (its writer's lock is the process's), so there both stores share it.
    static func twoInstances(
        _ engine: Database.Engine, seats: Int, _ body: (ReservationStore, ReservationStore) async throws -> Void
    ) async throws {
        try await TestDatabase.withLocation(engine) { location in
            let first = try await Database.open(location, logger: TestDatabase.logger)
            let second = engine == .postgres ? try await Database.open(location, logger: TestDatabase.logger) : first
            do {
                try await Migrator.migrate(
                    first, (Platform.migrations + Features.migrations).sorted { $0.id < $1.id }, now: TestTime.start,
                    logger: TestDatabase.logger)
                let clock = ManualClock(now: TestTime.start)
                let campus = FixedCampus.melbourne
                _ = try await RoomStore(database: first, clock: clock, campus: campus).create(
                    RoomRecord(id: "race", name: "Race", building: "North Hall", capacity: seats, seats: seats))
                try await body(
                    ReservationStore(
                        database: first, clock: clock, campus: campus, waiting: .testing(first, clock: clock)),
                    ReservationStore(
                        database: second, clock: clock, campus: campus, waiting: .testing(second, clock: clock)))
            } catch {
                await first.close()
                if engine == .postgres { await second.close() }
                throw error
            }
            await first.close()
            if engine == .postgres { await second.close() }
        }
    }

    /// A quarter-hour grid far from anything else: slots `lower ..< lower + count`.
    static func slots(_ lower: Int, _ count: Int) -> SlotRange { SlotRange(lower: lower, upper: lower + count)! }
    static let ten = 2_000_000  // a quarter hour in 2027

    /// What the stored reservations hold at their busiest quarter hour.
    static func peak(_ store: ReservationStore, seats: Int) async throws -> (peak: Int, count: Int) {
        let all = try await store.reservations(roomId: "race", during: slots(ten - 100, 200))
        return (Occupancy(seats: seats, holds: all.map { ($0.range, $0.hold) }).peakSeatsHeld, all.count)
    }

    static func attempt(_ body: () async throws -> Any) async -> String {
        do {
            _ = try await body()
            return "reserved"
        } catch let problem as Problem {
            return problem.type
        } catch {
            return "error: \(error)"
        }
    }

    @Test(arguments: TestDatabase.engines)
    func twoHundredPeopleRaceForTwentySeatsInOneSlot(engine: Database.Engine) async throws {
        try await Self.twoInstances(engine, seats: 20) { first, second in
            let results = await withTaskGroup(of: String.self) { group in
                for person in 0..<200 {
                    let store = person.isMultiple(of: 2) ? first : second
                    group.addTask {
                        await Self.attempt {
                            try await store.reserve(
                                roomId: "race", range: Self.slots(Self.ten, 2), hold: .seat, owner: "p\(person)",
                                person: "P\(person)")
                        }
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            // On a loaded machine an attempt may wait past the pool's limit for a connection: a 503 the client
            // retries, which decides nothing. Every other attempt is decided, and never more than the seats.
            let busy = results.filter { $0.hasSuffix("database-busy") }.count
            let reserved = results.filter { $0 == "reserved" }.count
            #expect(reserved == min(20, 200 - busy))
            #expect(results.filter { $0.hasSuffix("room-full") }.count == 200 - busy - reserved, "\(Set(results))")
            let held = try await Self.peak(first, seats: 20)
            #expect(held.peak == reserved && held.count == reserved)
        }
    }

    @Test(arguments: TestDatabase.engines)
    func seatBookingsRaceAWholeRoomBooking(engine: Database.Engine) async throws {
        try await Self.twoInstances(engine, seats: 10) { first, second in
            let results = await withTaskGroup(of: (String, String).self) { group in
                group.addTask {
                    (
                        "room",
                        await Self.attempt {
                            try await second.reserve(
                                roomId: "race", range: Self.slots(Self.ten, 4), hold: .room, owner: "team",
                                person: "Team")
                        }
                    )
                }
                for person in 0..<30 {
                    let store = person.isMultiple(of: 2) ? first : second
                    group.addTask {
                        (
                            "seat",
                            await Self.attempt {
                                try await store.reserve(
                                    roomId: "race", range: Self.slots(Self.ten + person % 4, 1), hold: .seat,
                                    owner: "p\(person)", person: "P\(person)")
                            }
                        )
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            let room = results.first { $0.0 == "room" }!.1
            let seats = results.filter { $0.0 == "seat" && $0.1 == "reserved" }.count
            // Either the whole room went first (no seat after it) or seats did (and the whole room was refused).
            #expect((room == "reserved") == (seats == 0), "room: \(room), seats: \(seats)")
            let held = try await Self.peak(first, seats: 10)
            #expect(held.peak <= 10)
            #expect(held.count == seats + (room == "reserved" ? 1 : 0))
        }
    }

    @Test(arguments: TestDatabase.engines)
    func rangesSharingOneQuarterHourCannotBothHoldTheLastSeat(engine: Database.Engine) async throws {
        try await Self.twoInstances(engine, seats: 1) { first, second in
            for round in 0..<10 {
                let base = Self.ten + round * 20
                // 09:00–10:15 and 10:00–11:00: one quarter hour in common.
                async let early = Self.attempt {
                    try await first.reserve(
                        roomId: "race", range: Self.slots(base, 5), hold: .seat, owner: "a", person: "A")
                }
                async let late = Self.attempt {
                    try await second.reserve(
                        roomId: "race", range: Self.slots(base + 4, 4), hold: .seat, owner: "b", person: "B")
                }
                let both = await [early, late]
                #expect(both.filter { $0 == "reserved" }.count == 1, "round \(round): \(both)")
            }
            // Ranges that only touch both go through.
            _ = try await first.reserve(
                roomId: "race", range: Self.slots(Self.ten + 500, 2), hold: .seat, owner: "a", person: "A")
            _ = try await second.reserve(
                roomId: "race", range: Self.slots(Self.ten + 502, 2), hold: .seat, owner: "b", person: "B")
        }
    }

    @Test(arguments: TestDatabase.engines)
    func aSeriesBooksTheFreeDatesAndSaysWhyNotForTheOthers(engine: Database.Engine) async throws {
        try await Self.twoInstances(engine, seats: 1) { first, _ in
            let campus = CampusClock(timeZone: TimeZone(identifier: "Australia/Melbourne")!)
            // Every day from the Monday after the test clock's week to the Saturday, skipping Tuesday to
            // Thursday: Monday is free, Friday taken by someone else, and the building closed on Saturdays.
            let today = campus.date(of: TestTime.start)
            let monday = today.monday.adding(days: 7)
            let taken = try BookingPolicy.default.range(
                date: monday.adding(days: 4), start: LocalTime(hour: 10), minutes: 60, clock: campus,
                now: TestTime.start)
            _ = try await first.reserve(roomId: "race", range: taken, hold: .seat, owner: "other", person: "Other")
            let series = Recurrence(
                frequency: .daily, until: monday.adding(days: 5), skipped: Set((1...3).map { monday.adding(days: $0) }))
            let weekdays = BookingPolicy(hours: .weekdays, horizonDays: 56, maxMinutes: 240, checkInMinutes: nil)
            let booked = try await first.reserveSeries(
                roomId: "race", recurrence: series, from: monday, start: LocalTime(hour: 10), minutes: 60,
                hold: .seat, seats: 1, owner: "ada", person: "Ada", policy: weekdays)
            let seriesId = try #require(booked.first?.seriesId)
            #expect(booked.outcomes.map(\.result) == [.booked, .taken, .unavailable])
            #expect(booked.outcomes[2].reason?.contains("closed on Sat") == true)
            let mine = try await first.reservations(roomId: "race", during: Self.slots(0, 10_000_000))
                .filter { $0.owner == "ada" }
            #expect(mine.count == 1 && Set(mine.map(\.seriesId)) == [seriesId])
        }
    }
}

extension ReservationStore {
    /// One booking with no check-in, as the races make them.
    func reserve(roomId: String, range: SlotRange, hold: Hold, owner: String, person: String) async throws {
        _ = try await reserve(
            ReservationIntent(roomId: roomId, range: range, hold: hold, owner: owner, person: person, checkInBy: nil))
    }
}
