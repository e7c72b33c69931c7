import Foundation
import QuadCore
import QuadPlatform
import SQLKit

/// A seat or the whole room held for a time on the quarter-hour grid (rooms in time).
struct Reservation: Sendable, Equatable {
    var id: String
    var roomId: String
    /// Whose it is: the person's username, lowercased.
    var owner: String
    /// Their name as they wrote it, shown to others.
    var person: String
    var hold: Hold
    var range: SlotRange
    /// The series it belongs to, if it was booked as one.
    var seriesId: String?
    var createdAt: String
}

/// Why a reservation was refused.
enum ReservationRefusal {
    static let taken = Problem.conflict(
        "slot-taken", title: "Taken at that time",
        detail: "Others hold the room then: no seat is free, or not the whole room.")
    static let alreadyHeld = Problem.conflict(
        "already-held", title: "Already yours", detail: "You already hold this room at some of that time.")
}

/// Reservations in time, in table `room_reservations`.
///
/// Whether one more fits is decided under a lock on the room's row: `SELECT … FOR UPDATE` on PostgreSQL, and on
/// SQLite the writer's lock every transaction takes first (`BEGIN IMMEDIATE`). A room's bookings are then decided
/// one at a time, on every instance, each seeing all that were committed before it, and the rule is QuadCore's
/// (`Occupancy`). Why not a constraint: "at most N seats held at every instant" is no exclusion constraint (those
/// say "no two overlap"), and serializable transactions would have racing people retry. Rooms stay independent:
/// the lock is the one room's.
final class ReservationStore: Sendable {
    let database: Database
    let clock: any QuadClock

    init(database: Database, clock: any QuadClock) {
        self.database = database
        self.clock = clock
    }

    static let migration = Migration(
        id: 101, name: "room reservations in time",
        statements: [
            """
            CREATE TABLE room_reservations (
                id TEXT PRIMARY KEY, room_id TEXT NOT NULL REFERENCES rooms (id) ON DELETE CASCADE,
                owner TEXT NOT NULL, person TEXT NOT NULL, hold TEXT NOT NULL CHECK (hold IN ('seat', 'room')),
                first_slot INTEGER NOT NULL, end_slot INTEGER NOT NULL CHECK (end_slot > first_slot),
                series_id TEXT, created_at TEXT NOT NULL)
            """,
            "CREATE INDEX room_reservations_room_time ON room_reservations (room_id, end_slot)",
            "CREATE INDEX room_reservations_owner ON room_reservations (owner)",
        ])

    /// Holds `hold` in `roomId` for `range` for `owner` (a username) if it fits, or throws why not.
    func reserve(
        roomId: String, range: SlotRange, hold: Hold, owner: String, person: String
    ) async throws -> Reservation {
        try await database.transaction { sql in
            let seats = try await Self.lock(roomId, sql, engine: self.database.engine)
            return try await self.take(roomId, range, hold, owner, person, seriesId: nil, seats: seats, sql)
        }
    }

    /// Books each date of a series from `start` for `minutes` that `policy` takes and that is free, under one lock of
    /// the room; says per date what became of it. The series has an id when at least one date was booked.
    func reserveSeries(
        roomId: String, dates: [LocalDate], start: LocalTime, minutes: Int, hold: Hold, owner: String, person: String,
        policy: BookingPolicy, campus: CampusClock
    ) async throws -> (seriesId: String?, outcomes: [OccurrenceOutcome]) {
        let seriesId = RoomStore.newBookingId()
        let now = clock.now
        let outcomes: [OccurrenceOutcome] = try await database.transaction { sql in
            let seats = try await Self.lock(roomId, sql, engine: self.database.engine)
            var outcomes: [OccurrenceOutcome] = []
            for date in dates {
                let range: SlotRange
                do {
                    range = try policy.range(date: date, start: start, minutes: minutes, clock: campus, now: now)
                } catch let failure as ValidationFailure {
                    outcomes.append(.init(date: date, result: .unavailable, reason: failure.errors.first?.message))
                    continue
                }
                do {
                    _ = try await self.take(roomId, range, hold, owner, person, seriesId: seriesId, seats: seats, sql)
                    outcomes.append(.init(date: date, result: .booked))
                } catch let refusal as Problem {
                    outcomes.append(.init(date: date, result: .taken, reason: refusal.detail))
                }
            }
            return outcomes
        }
        return (outcomes.contains { $0.result == .booked } ? seriesId : nil, outcomes)
    }

    /// The reservations of `roomId` that overlap `range`, earliest first.
    func reservations(roomId: String, during range: SlotRange) async throws -> [Reservation] {
        try await database.withConnection { sql in try await Self.overlapping(roomId, range, sql) }
    }

    /// Takes the room's lock for the rest of the transaction: its seats.
    private static func lock(_ roomId: String, _ sql: any SQLDatabase, engine: Database.Engine) async throws -> Int {
        let forUpdate = engine == .postgres ? " FOR UPDATE" : ""
        guard
            let row = try await sql.raw(
                "SELECT capacity FROM rooms WHERE id = \(bind: roomId)\(unsafeRaw: forUpdate)"
            ).first()
        else { throw BookingRefusal.roomNotFound(roomId) }
        return try row.decode(column: "capacity", as: Int.self)
    }

    /// Inside the room's lock: stores the reservation if `Occupancy` allows it.
    private func take(
        _ roomId: String, _ range: SlotRange, _ hold: Hold, _ owner: String, _ person: String, seriesId: String?,
        seats: Int, _ sql: any SQLDatabase
    ) async throws -> Reservation {
        let held = try await Self.overlapping(roomId, range, sql)
        if held.contains(where: { $0.owner == owner }) { throw ReservationRefusal.alreadyHeld }
        let occupancy = Occupancy(seats: seats, holds: held.map { ($0.range, $0.hold) })
        guard occupancy.allows(hold, during: range) else { throw ReservationRefusal.taken }
        let reservation = Reservation(
            id: RoomStore.newBookingId(), roomId: roomId, owner: owner, person: person, hold: hold, range: range,
            seriesId: seriesId, createdAt: Timestamp.string(clock.now))
        try await sql.raw(
            """
            INSERT INTO room_reservations (id, room_id, owner, person, hold, first_slot, end_slot, series_id, created_at)
            VALUES (\(bind: reservation.id), \(bind: roomId), \(bind: owner), \(bind: person), \(bind: hold.rawValue),
                    \(bind: range.lower), \(bind: range.upper), \(bind: seriesId), \(bind: reservation.createdAt))
            """
        ).run()
        return reservation
    }

    private static func overlapping(
        _ roomId: String, _ range: SlotRange, _ sql: any SQLDatabase
    ) async throws -> [Reservation] {
        try await sql.raw(
            """
            SELECT id, room_id, owner, person, hold, first_slot, end_slot, series_id, created_at
            FROM room_reservations
            WHERE room_id = \(bind: roomId) AND end_slot > \(bind: range.lower) AND first_slot < \(bind: range.upper)
            ORDER BY first_slot, id
            """
        ).all().map { row in
            // The table's checks keep both whole: a hold is 'seat' or 'room', and the end comes after the start.
            guard let hold = Hold(rawValue: try row.decode(column: "hold", as: String.self)),
                let range = SlotRange(
                    lower: try row.decode(column: "first_slot", as: Int.self),
                    upper: try row.decode(column: "end_slot", as: Int.self))
            else { throw StoreCorruption(description: "room_reservations holds a row its checks forbid.") }
            return Reservation(
                id: try row.decode(column: "id", as: String.self),
                roomId: try row.decode(column: "room_id", as: String.self),
                owner: try row.decode(column: "owner", as: String.self),
                person: try row.decode(column: "person", as: String.self),
                hold: hold, range: range,
                seriesId: try row.decode(column: "series_id", as: String?.self),
                createdAt: try row.decode(column: "created_at", as: String.self))
        }
    }
}

/// A row the table's own checks should have kept out.
struct StoreCorruption: Error, CustomStringConvertible {
    let description: String
}
