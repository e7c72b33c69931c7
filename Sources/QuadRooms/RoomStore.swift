import Foundation
import QuadCore
import QuadPlatform
import SQLKit

/// What a room's free seats at one quarter hour are made of: the seats offered, less the untimed bookings and the
/// seats booked then, none while the room is closed or booked whole. `records` counts them as read; a batch of bookings
/// counts them again with each booking it makes (`reserveAll`), rather than reading them again.
struct SeatsNow: Sendable {
    let slot: Int
    /// The seats an admin offers (column `spots`), and the untimed bookings holding some of them.
    let seats: Int
    let standing: Int
    /// Seats booked during `slot`, and bookings of the whole room then.
    var held: Int
    var whole: Int
    let open: Bool

    var free: Int { !open || whole > 0 ? 0 : max(0, seats - standing - held) }

    /// Counts `reservation` if it holds the room during `slot`.
    mutating func add(_ reservation: Reservation) {
        guard reservation.range.lower <= slot, slot < reservation.range.upper else { return }
        if reservation.hold == .seat { held += reservation.seats } else { whole += reservation.seats }
    }
}

/// A room as stored, with its free seats at one instant: the photo is a path under `/images/`, made absolute when
/// sent.
struct RoomRecord: Sendable, Equatable {
    var id: String
    var name: String
    var building: String
    var capacity: Int
    /// The seats an admin offers for booking (column `spots`).
    var seats: Int
    var photo: String?
    /// Seats free at the instant it was read: what the API calls `spots`.
    var spots: Int

    init(
        id: String, name: String, building: String, capacity: Int, seats: Int, photo: String? = nil, spots: Int? = nil
    ) {
        self.id = id
        self.name = name
        self.building = building
        self.capacity = capacity
        self.seats = seats
        self.photo = photo
        self.spots = spots ?? seats
    }

    func room(baseURL: String) -> Room {
        Room(
            id: id, name: name, building: building, capacity: capacity, spots: spots, seats: seats,
            thumbnail: photo.map { baseURL + $0 })
    }
}

/// Why a booking was refused, each a problem the client can show.
enum BookingRefusal {
    static func roomNotFound(_ id: String) -> Problem { .notFound("There is no room \(id).") }
    static let full = Problem.conflict("room-full", title: "No spots left", detail: "Someone took the last spot.")
    static let alreadyBooked = Problem.conflict(
        "already-booked", title: "Already booked",
        detail: "This person already holds a booking in this room at that time.")
}

/// Rooms, in table `rooms`, and the bookings made before rooms had time (`room_bookings`), each holding a seat
/// until cancelled. Bookings in time are `ReservationStore`'s.
final class RoomStore: Sendable {
    let database: Database
    let clock: any QuadClock
    let campus: any CampusTime

    init(database: Database, clock: any QuadClock, campus: any CampusTime) {
        self.database = database
        self.clock = clock
        self.campus = campus
    }

    static let migrations = [
        migration, ReservationStore.migration, BuildingPolicyStore.migration, ReservationStore.checkInMigration,
        ReservationStore.seriesMigration, ownersMigration, ReservationStore.groupMigration,
        ReservationStore.invitationsMigration,
    ]

    static let migration = Migration(
        id: 100, name: "rooms and bookings",
        statements: [
            """
            CREATE TABLE rooms (
                id TEXT PRIMARY KEY, name TEXT NOT NULL, name_key TEXT NOT NULL UNIQUE, building TEXT NOT NULL,
                capacity INTEGER NOT NULL CHECK (capacity > 0),
                spots INTEGER NOT NULL CHECK (spots >= 0 AND spots <= capacity),
                photo TEXT, created_at TEXT NOT NULL)
            """,
            """
            CREATE TABLE room_bookings (
                id TEXT PRIMARY KEY, room_id TEXT NOT NULL REFERENCES rooms (id) ON DELETE CASCADE,
                person TEXT NOT NULL, person_key TEXT, created_at TEXT NOT NULL,
                UNIQUE (room_id, person_key))
            """,
            "CREATE INDEX room_bookings_room ON room_bookings (room_id)",
        ])

    /// Bookings belong to someone from now on (the original apps' anonymous bookings belong to no one). Its id is
    /// in Accounts' range because it came with people; ids are never renumbered.
    static let ownersMigration = Migration(
        id: 501, name: "booking owners", statements: ["ALTER TABLE room_bookings ADD COLUMN owner TEXT"])

    /// Every room with its seats free at `now` (or just `only`): none while its building is closed, none while
    /// someone holds the whole room, else its seats less the untimed bookings and the seats held then.
    static func records(
        _ sql: any SQLDatabase, at now: Date, campus: CampusClock, only id: String? = nil
    ) async throws -> [RoomRecord] {
        try await rows(sql, at: now, campus: campus, where: id.map { "WHERE r.id = \(bind: $0)" } ?? "").map(\.record)
    }

    /// `records`' statement, each room with what its free seats are made of (`SeatsNow`) and its row, for the
    /// columns `extra` adds (a batch of bookings asks whether anyone waits for each room: `reserveAll`).
    static func rows(
        _ sql: any SQLDatabase, at now: Date, campus: CampusClock, extra: SQLQueryString = "",
        where filter: SQLQueryString
    ) async throws -> [(record: RoomRecord, now: SeatsNow, row: any SQLRow)] {
        let slot = SlotRange.slot(containing: now)
        let held: (String) -> SQLQueryString = { hold in
            """
            (SELECT COALESCE(SUM(v.seats), 0) FROM room_reservations v WHERE v.room_id = r.id AND v.hold = \(bind: hold)
             AND v.first_slot <= \(bind: slot) AND v.end_slot > \(bind: slot))
            """
        }
        return try await sql.raw(
            """
            SELECT r.id, r.name, r.building, r.capacity, r.spots, r.photo, r.hours AS room_hours,
                   b.hours AS building_hours,
                   (SELECT COUNT(*) FROM room_bookings k WHERE k.room_id = r.id) AS standing,
                   \(held("seat")) AS seats_held, \(held("room")) AS whole\(extra)
            FROM rooms r LEFT JOIN room_buildings b ON b.name_key = LOWER(r.building) \(filter)
            """
        ).all().map { row in
            let hours =
                try row.decode(column: "room_hours", as: String?.self)
                ?? row.decode(column: "building_hours", as: String?.self)
            let open = try hours.map { try BuildingPolicyStore.hours($0) } ?? BookingPolicy.default.hours
            let seatsNow = SeatsNow(
                slot: slot, seats: try row.decode(column: "spots", as: Int.self),
                standing: try row.decode(column: "standing", as: Int.self),
                held: try row.decode(column: "seats_held", as: Int.self),
                whole: try row.decode(column: "whole", as: Int.self), open: open.isOpen(inSlot: slot, clock: campus))
            let record = RoomRecord(
                id: try row.decode(column: "id", as: String.self),
                name: try row.decode(column: "name", as: String.self),
                building: try row.decode(column: "building", as: String.self),
                capacity: try row.decode(column: "capacity", as: Int.self), seats: seatsNow.seats,
                photo: try row.decode(column: "photo", as: String?.self), spots: seatsNow.free)
            return (record, seatsNow, row)
        }
    }

    /// The campus's wall clock, for opening hours.
    func campusClock() async -> CampusClock { CampusClock(timeZone: await campus.timeZone()) }

    /// Every room with its free seats at `instant` (now by default).
    func all(at instant: Date? = nil) async throws -> [RoomRecord] {
        let campus = await campusClock()
        let at = instant ?? clock.now
        return try await database.withConnection { sql in try await Self.records(sql, at: at, campus: campus) }
    }

    func find(_ id: String) async throws -> RoomRecord? {
        let campus = await campusClock()
        return try await database.withConnection { sql in
            try await Self.records(sql, at: self.clock.now, campus: campus, only: id).first
        }
    }

    func create(_ room: RoomRecord) async throws -> RoomRecord {
        let campus = await campusClock()
        return try await database.transaction { sql in
            try await self.insert(room, sql)
            return try await Self.record(room.id, sql, at: self.clock.now, campus: campus)
        }
    }

    /// `create`'s row, inside the caller's transaction (an import's, `RoomRecords`); 409 when the id or name is taken.
    func insert(_ room: RoomRecord, hours: OpeningHours? = nil, _ sql: any SQLDatabase) async throws {
        let clash = try await sql.raw(
            "SELECT id FROM rooms WHERE id = \(bind: room.id) OR name_key = \(bind: room.name.lowercased())"
        ).first()
        guard clash == nil else {
            throw Problem.conflict("room-exists", title: "Room exists", detail: "A room with this id or name exists.")
        }
        try await sql.raw(
            """
            INSERT INTO rooms (id, name, name_key, building, capacity, spots, photo, hours, created_at)
            VALUES (\(bind: room.id), \(bind: room.name), \(bind: room.name.lowercased()), \(bind: room.building),
                    \(bind: room.capacity), \(bind: room.seats), \(bind: room.photo), \(bind: hours?.description),
                    \(bind: Timestamp.string(self.clock.now)))
            """
        ).run()
    }

    /// Every room as an admin sets it (its own opening hours, nil when it keeps its building's), by id.
    func settings() async throws -> [(room: RoomRecord, hours: String?)] {
        try await database.withConnection { sql in
            try await sql.raw("SELECT id, name, building, capacity, spots, hours FROM rooms ORDER BY id").all().map {
                row in
                (
                    RoomRecord(
                        id: try row.decode(column: "id", as: String.self),
                        name: try row.decode(column: "name", as: String.self),
                        building: try row.decode(column: "building", as: String.self),
                        capacity: try row.decode(column: "capacity", as: Int.self),
                        seats: try row.decode(column: "spots", as: Int.self), photo: nil),
                    try row.decode(column: "hours", as: String?.self)
                )
            }
        }
    }

    private static func record(
        _ id: String, _ sql: any SQLDatabase, at now: Date, campus: CampusClock
    ) async throws -> RoomRecord {
        guard let record = try await records(sql, at: now, campus: campus, only: id).first else {
            throw Problem.notFound("There is no room \(id).")
        }
        return record
    }

    /// Applies an admin's change. The seats offered (`spots`) may not fall below those booked at any time ahead.
    /// `hours`: nil leaves the room's own opening hours; `.some(nil)` gives it its building's again. `renamed` runs in
    /// the transaction once a new name is written (its bookings' owners are told).
    func update(
        _ id: String, name: String?, building: String?, capacity: Int?, spots: Int?, hours: OpeningHours?? = nil,
        renamed: (@Sendable (any SQLDatabase) async throws -> Void)? = nil
    ) async throws -> RoomRecord {
        let campus = await campusClock()
        let now = clock.now
        return try await database.transaction { sql in
            try await self.change(
                id, name: name, building: building, capacity: capacity, spots: spots, hours: hours, renamed: renamed,
                sql, now: now)
            return try await Self.record(id, sql, at: now, campus: campus)
        }
    }

    /// `update`'s change, inside the caller's transaction (an import's, `RoomRecords`). Returns whether it was renamed.
    @discardableResult
    func change(
        _ id: String, name: String?, building: String?, capacity: Int?, spots: Int?, hours: OpeningHours?? = nil,
        renamed: (@Sendable (any SQLDatabase) async throws -> Void)? = nil, _ sql: any SQLDatabase, now: Date
    ) async throws -> Bool {
        let lock = self.database.engine == .postgres ? " FOR UPDATE" : ""
        guard
            let row = try await sql.raw(
                "SELECT name, building, capacity, spots FROM rooms WHERE id = \(bind: id)\(unsafeRaw: lock)"
            ).first()
        else { throw Problem.notFound("There is no room \(id).") }
        let currentName = try row.decode(column: "name", as: String.self)
        let currentCapacity = try row.decode(column: "capacity", as: Int.self)
        let checked = try RoomValidation.room(
            id: id, name: name ?? currentName,
            building: building ?? row.decode(column: "building", as: String.self),
            capacity: capacity ?? currentCapacity,
            spots: spots ?? min(try row.decode(column: "spots", as: Int.self), capacity ?? currentCapacity))
        let booked = try await Self.peakSeatsBooked(id, sql, from: now)
        guard checked.spots >= booked else {
            throw ValidationFailure(
                field: spots == nil ? "capacity" : "spots",
                message: "Seats booked at some time ahead: \(booked). Offer at least as many.")
        }
        if checked.name.lowercased() != currentName.lowercased() {
            let clash = try await sql.raw(
                "SELECT id FROM rooms WHERE name_key = \(bind: checked.name.lowercased())"
            ).first()
            if clash != nil {
                throw Problem.conflict("room-exists", title: "Room exists", detail: "Another room has this name.")
            }
        }
        try await sql.raw(
            """
            UPDATE rooms SET name = \(bind: checked.name), name_key = \(bind: checked.name.lowercased()),
                building = \(bind: checked.building), capacity = \(bind: checked.capacity), spots = \(bind: checked.spots)
            WHERE id = \(bind: id)
            """
        ).run()
        if let hours {
            try await sql.raw("UPDATE rooms SET hours = \(bind: hours?.description) WHERE id = \(bind: id)").run()
        }
        if checked.name != currentName { try await renamed?(sql) }
        return checked.name != currentName
    }

    /// The most seats held at any instant from `now` on: untimed bookings, and seats booked in time (whole-room
    /// bookings take whatever the room offers, so they do not count).
    private static func peakSeatsBooked(_ id: String, _ sql: any SQLDatabase, from now: Date) async throws -> Int {
        let standing =
            try await sql.raw("SELECT COUNT(*) AS n FROM room_bookings WHERE room_id = \(bind: id)").first()?
            .decode(column: "n", as: Int.self) ?? 0
        let ahead = try await sql.raw(
            """
            SELECT first_slot, end_slot, seats FROM room_reservations
            WHERE room_id = \(bind: id) AND hold = 'seat' AND end_slot > \(bind: SlotRange.slot(containing: now))
            """
        ).all().compactMap { row -> (SlotRange, Hold, Int)? in
            let seats = try row.decode(column: "seats", as: Int.self)
            return SlotRange(
                lower: try row.decode(column: "first_slot", as: Int.self),
                upper: try row.decode(column: "end_slot", as: Int.self)
            ).map { ($0, .seat, seats) }
        }
        return standing + Occupancy(seats: Int.max / 2, groups: ahead).peakSeatsHeld
    }

    func setPhoto(_ id: String, path: String) async throws -> RoomRecord {
        let campus = await campusClock()
        return try await database.transaction { sql in
            guard
                try await sql.raw("UPDATE rooms SET photo = \(bind: path) WHERE id = \(bind: id) RETURNING id").first()
                    != nil
            else { throw Problem.notFound("There is no room \(id).") }
            return try await Self.record(id, sql, at: self.clock.now, campus: campus)
        }
    }

    /// Finds a room by its name, as the original apps name it (case-insensitive).
    func id(forName name: String) async throws -> String? {
        // No room has a name a room could not be given (and PostgreSQL refuses NUL in a query).
        guard HumanText.fault(name, max: RoomValidation.maxNameLength) == nil else { return nil }
        return try await database.withConnection { sql in
            try await sql.raw("SELECT id FROM rooms WHERE name_key = \(bind: name.lowercased())").first()?
                .decode(column: "id", as: String.self)
        }
    }

    /// Cancels an untimed booking when `person` owns it or is an admin (else 403): its seat is free again. Returns
    /// the room's free seats now, or nil when there is no such booking.
    func cancel(roomId: String, bookingId: String, by person: Person) async throws -> Int? {
        let campus = await campusClock()
        return try await database.transaction { sql in
            guard
                let row = try await sql.raw(
                    "SELECT owner FROM room_bookings WHERE id = \(bind: bookingId) AND room_id = \(bind: roomId)"
                ).first()
            else { return nil }
            let owner = try row.decode(column: "owner", as: String?.self)
            guard person.isAdmin || owner == person.username.lowercased() else {
                throw Problem(.forbidden, detail: "Only the person who booked, or an admin, may cancel this booking.")
            }
            try await sql.raw("DELETE FROM room_bookings WHERE id = \(bind: bookingId)").run()
            return try await Self.record(roomId, sql, at: self.clock.now, campus: campus).spots
        }
    }

    /// Deletes every booking the person (`usernameKey`) owns, untimed and in time, inside the caller's transaction
    /// (Accounts removing the person). Returns the rooms that changed.
    static func releaseBookings(of usernameKey: String, in sql: any SQLDatabase) async throws -> Set<String> {
        let untimed = try await sql.raw(
            "DELETE FROM room_bookings WHERE owner = \(bind: usernameKey) RETURNING room_id"
        ).all()
        let timed = try await sql.raw(
            "DELETE FROM room_reservations WHERE owner = \(bind: usernameKey) RETURNING room_id"
        ).all()
        try await sql.raw("DELETE FROM room_series WHERE owner = \(bind: usernameKey)").run()
        return Set(try (untimed + timed).map { try $0.decode(column: "room_id", as: String.self) })
    }

    func bookings(roomId: String) async throws -> [Booking] {
        try await database.withConnection { sql in
            try await sql.raw(
                "SELECT id, room_id, person, created_at FROM room_bookings WHERE room_id = \(bind: roomId) ORDER BY created_at"
            ).all().map { row in
                Booking(
                    id: try row.decode(column: "id", as: String.self),
                    roomId: try row.decode(column: "room_id", as: String.self),
                    person: try row.decode(column: "person", as: String.self),
                    createdAt: try row.decode(column: "created_at", as: String.self))
            }
        }
    }

    /// A person's untimed bookings, newest first, with their rooms' names.
    func bookings(owner username: String) async throws -> [(booking: Booking, roomName: String)] {
        try await database.withConnection { sql in
            try await sql.raw(
                """
                SELECT b.id, b.room_id, b.person, b.created_at, r.name FROM room_bookings b JOIN rooms r ON r.id = b.room_id
                WHERE b.owner = \(bind: username.lowercased()) ORDER BY b.created_at DESC, r.name
                """
            ).all().map { row in
                (
                    Booking(
                        id: try row.decode(column: "id", as: String.self),
                        roomId: try row.decode(column: "room_id", as: String.self),
                        person: try row.decode(column: "person", as: String.self),
                        createdAt: try row.decode(column: "created_at", as: String.self)),
                    try row.decode(column: "name", as: String.self)
                )
            }
        }
    }

    /// 128 random bits, base64url: unguessable.
    static func newBookingId() -> String {
        SecureRandom.identifier(byteCount: 16)
    }
}
