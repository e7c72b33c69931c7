import Foundation
import QuadCore
import QuadPlatform
import SQLKit

/// A room as stored: the photo is a path under `/images/`, made absolute when sent.
struct RoomRecord: Sendable, Equatable {
    var id: String
    var name: String
    var building: String
    var capacity: Int
    var spots: Int
    var photo: String?

    func room(baseURL: String) -> Room {
        Room(
            id: id, name: name, building: building, capacity: capacity, spots: spots,
            thumbnail: photo.map { baseURL + $0 })
    }
}

/// Why a booking was refused, each a problem the client can show.
enum BookingRefusal {
    static func roomNotFound(_ id: String) -> Problem { .notFound("There is no room \(id).") }
    static let full = Problem.conflict("room-full", title: "No spots left", detail: "Someone took the last spot.")
    static let alreadyBooked = Problem.conflict(
        "already-booked", title: "Already booked", detail: "This person already holds a spot in this room.")
}

/// Rooms and their bookings, in tables `rooms` and `room_bookings`.
///
/// A booking takes a spot with one conditional `UPDATE … WHERE spots > 0` inside a transaction (on PostgreSQL, one
/// statement that is its own), so under any concurrency there are never more bookings than spots and spots never go
/// below zero.
final class RoomStore: Sendable {
    let database: Database
    let clock: any QuadClock
    /// SQLite only: PostgreSQL runs concurrent bookings in concurrent transactions.
    private let batcher: BookingBatcher?
    /// Where a booking's event goes out with the booking itself (PostgreSQL); nil: the caller publishes it.
    private let events: EventHub?

    init(database: Database, clock: any QuadClock, events: EventHub? = nil) {
        self.database = database
        self.clock = clock
        self.events = events
        batcher = database.engine == .sqlite ? BookingBatcher(database: database) : nil
    }

    static let migrations = [migration, ReservationStore.migration, BuildingPolicyStore.migration, ownersMigration]

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

    private static let columns = "id, name, building, capacity, spots, photo"

    private static func record(_ row: any SQLRow) throws -> RoomRecord {
        RoomRecord(
            id: try row.decode(column: "id", as: String.self), name: try row.decode(column: "name", as: String.self),
            building: try row.decode(column: "building", as: String.self),
            capacity: try row.decode(column: "capacity", as: Int.self),
            spots: try row.decode(column: "spots", as: Int.self),
            photo: try row.decode(column: "photo", as: String?.self))
    }

    func all() async throws -> [RoomRecord] {
        try await database.withConnection { sql in
            try await sql.raw("SELECT \(unsafeRaw: Self.columns) FROM rooms").all().map(Self.record)
        }
    }

    func find(_ id: String) async throws -> RoomRecord? {
        try await database.withConnection { sql in
            try await sql.raw("SELECT \(unsafeRaw: Self.columns) FROM rooms WHERE id = \(bind: id)").first().map(
                Self.record)
        }
    }

    func create(_ room: RoomRecord) async throws -> RoomRecord {
        try await database.transaction { sql in
            let clash = try await sql.raw(
                "SELECT id FROM rooms WHERE id = \(bind: room.id) OR name_key = \(bind: room.name.lowercased())"
            ).first()
            guard clash == nil else {
                throw Problem.conflict(
                    "room-exists", title: "Room exists", detail: "A room with this id or name exists.")
            }
            try await sql.raw(
                """
                INSERT INTO rooms (id, name, name_key, building, capacity, spots, photo, created_at)
                VALUES (\(bind: room.id), \(bind: room.name), \(bind: room.name.lowercased()), \(bind: room.building),
                        \(bind: room.capacity), \(bind: room.spots), \(bind: room.photo), \(bind: Timestamp.string(self.clock.now)))
                """
            ).run()
            return room
        }
    }

    /// Applies an admin's change. Spots may not exceed what the capacity leaves after the bookings held.
    func update(
        _ id: String, name: String?, building: String?, capacity: Int?, spots: Int?
    ) async throws -> RoomRecord {
        try await database.transaction { sql in
            let lock = self.database.engine == .postgres ? " FOR UPDATE" : ""
            guard
                let current = try await sql.raw(
                    "SELECT \(unsafeRaw: Self.columns) FROM rooms WHERE id = \(bind: id)\(unsafeRaw: lock)"
                ).first().map(Self.record)
            else { throw Problem.notFound("There is no room \(id).") }
            let held = try await Self.bookingCount(sql, room: id)
            let checked = try RoomValidation.room(
                id: id, name: name ?? current.name, building: building ?? current.building,
                capacity: capacity ?? current.capacity,
                spots: spots ?? max(0, min(current.spots, (capacity ?? current.capacity) - held)))
            guard checked.spots + held <= checked.capacity else {
                throw ValidationFailure(
                    field: spots == nil ? "capacity" : "spots",
                    message:
                        "\(held) spots are booked: spots plus bookings cannot exceed the capacity (\(checked.capacity))."
                )
            }
            if checked.name.lowercased() != current.name.lowercased() {
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
            return RoomRecord(
                id: id, name: checked.name, building: checked.building, capacity: checked.capacity,
                spots: checked.spots, photo: current.photo)
        }
    }

    func setPhoto(_ id: String, path: String) async throws -> RoomRecord {
        try await database.transaction { sql in
            guard
                var room = try await sql.raw(
                    "SELECT \(unsafeRaw: Self.columns) FROM rooms WHERE id = \(bind: id)"
                ).first().map(Self.record)
            else { throw Problem.notFound("There is no room \(id).") }
            try await sql.raw("UPDATE rooms SET photo = \(bind: path) WHERE id = \(bind: id)").run()
            room.photo = path
            return room
        }
    }

    /// Deletes the room and its bookings together; false when there was no such room.
    func delete(_ id: String) async throws -> Bool {
        try await database.transaction { sql in
            try await sql.raw("DELETE FROM room_bookings WHERE room_id = \(bind: id)").run()
            return try await sql.raw("DELETE FROM rooms WHERE id = \(bind: id) RETURNING id").first() != nil
        }
    }

    /// Takes one spot for `owner` (nil: an anonymous booking from the original apps).
    /// Returns the booking, the room's spots after it, and whether its event went out with it (`events`).
    func book(roomId: String, owner: Person?) async throws -> (booking: Booking, spots: Int, announced: Bool) {
        let intent = BookingIntent(
            booking: Booking(
                id: Self.newBookingId(), roomId: roomId, person: owner?.displayName ?? "Anonymous",
                createdAt: Timestamp.string(clock.now)),
            personKey: owner?.username.lowercased())
        if let batcher {
            let (booking, spots) = try await batcher.book(intent)
            return (booking, spots, false)
        }
        let event = events.flatMap { hub in
            Rooms.spotsEventJSON(roomId).flatMap { hub.publication(Rooms.eventType, json: $0) }
        }
        let (booking, spots) = try await Self.bookAlone(intent, database, event: event)
        return (booking, spots, event != nil)
    }

    /// One booking in its own transaction, with `event` (`EventHub.publication`) evaluated in it on PostgreSQL.
    static func bookAlone(
        _ intent: BookingIntent, _ database: Database, event: SQLQueryString? = nil
    ) async throws -> (Booking, Int) {
        do {
            if database.engine == .postgres {
                return try await database.withConnection { sql in
                    try await Self.takeInOneStatement(intent, sql, event: event)
                }
            }
            return try await database.transaction { sql in try await Self.take(intent, sql) }
        } catch let error where !(error is Problem) && intent.personKey != nil {
            // Two tries by the same person at once (PostgreSQL): the second fails on the unique index and is rolled back.
            let mine = try await database.withConnection { sql in
                try await sql.raw(
                    """
                    SELECT id FROM room_bookings
                    WHERE room_id = \(bind: intent.booking.roomId) AND person_key = \(bind: intent.personKey)
                    """
                ).first()
            }
            if mine != nil { throw BookingRefusal.alreadyBooked }
            throw error
        }
    }

    /// Takes a spot for `intent` inside the caller's transaction, or throws the refusal having changed nothing.
    static func take(_ intent: BookingIntent, _ sql: any SQLDatabase) async throws -> (Booking, Int) {
        let booking = intent.booking
        let taken = try await sql.raw(
            """
            UPDATE rooms SET spots = spots - 1 WHERE id = \(bind: booking.roomId) AND spots > 0
            AND NOT EXISTS (SELECT 1 FROM room_bookings
                            WHERE room_id = \(bind: booking.roomId) AND person_key = \(bind: intent.personKey))
            RETURNING spots
            """
        ).first()
        guard let spots = try taken?.decode(column: "spots", as: Int.self) else { throw try await refusal(intent, sql) }
        try await sql.raw(
            """
            INSERT INTO room_bookings (id, room_id, person, person_key, owner, created_at)
            VALUES (\(bind: booking.id), \(bind: booking.roomId), \(bind: booking.person), \(bind: intent.personKey),
                    \(bind: intent.personKey), \(bind: booking.createdAt))
            """
        ).run()
        return (booking, spots)
    }

    /// On PostgreSQL, the same as `take` in one statement, its own transaction: the spot taken, the booking stored
    /// and `event` sent (it sees the room's new `spots`) together, or none of them.
    ///
    /// Why: measured with `Benchmarks/run booking-storm` on PostgreSQL, a booking's four round trips (`BEGIN`, the
    /// `UPDATE`, the `INSERT`, `COMMIT`) were most of Quad's own work for it. SQLite takes no `UPDATE` in a `WITH`
    /// (and batches its bookings, `BookingBatcher`).
    static func takeInOneStatement(
        _ intent: BookingIntent, _ sql: any SQLDatabase, event: SQLQueryString? = nil
    ) async throws -> (Booking, Int) {
        let booking = intent.booking
        let taken = try await sql.raw(
            """
            WITH taken AS (
                UPDATE rooms SET spots = spots - 1 WHERE id = \(bind: booking.roomId) AND spots > 0
                AND NOT EXISTS (SELECT 1 FROM room_bookings
                                WHERE room_id = \(bind: booking.roomId) AND person_key = \(bind: intent.personKey))
                RETURNING spots),
            stored AS (
                INSERT INTO room_bookings (id, room_id, person, person_key, owner, created_at)
                SELECT \(bind: booking.id), \(bind: booking.roomId), \(bind: booking.person), \(bind: intent.personKey),
                       \(bind: intent.personKey), \(bind: booking.createdAt) FROM taken)
            SELECT spots\(event.map { ", " + $0 } ?? "") FROM taken
            """
        ).first()
        guard let spots = try taken?.decode(column: "spots", as: Int.self) else { throw try await refusal(intent, sql) }
        return (booking, spots)
    }

    /// Why no spot was taken for `intent`: no such room, the person holds one there already, or it is full.
    private static func refusal(_ intent: BookingIntent, _ sql: any SQLDatabase) async throws -> Problem {
        let roomId = intent.booking.roomId
        let room = try await sql.raw(
            """
            SELECT spots, (SELECT COUNT(*) FROM room_bookings
                           WHERE room_id = \(bind: roomId) AND person_key = \(bind: intent.personKey)) AS mine
            FROM rooms WHERE id = \(bind: roomId)
            """
        ).first()
        guard let room else { return BookingRefusal.roomNotFound(roomId) }
        return try room.decode(column: "mine", as: Int.self) > 0 ? BookingRefusal.alreadyBooked : BookingRefusal.full
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

    /// Frees the booking's spot when `person` owns it or is an admin (else 403); returns the room's spots
    /// after, or nil when there is no such booking.
    func cancel(roomId: String, bookingId: String, by person: Person) async throws -> Int? {
        try await database.transaction { sql in
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
            return try await Self.freeSpot(roomId, in: sql)
        }
    }

    /// Deletes the bookings the person (`usernameKey`) owns and frees their spots, inside the caller's
    /// transaction (Accounts removing the person). Returns the rooms whose spots changed, with their spots now.
    static func releaseBookings(of usernameKey: String, in sql: any SQLDatabase) async throws -> [(String, Int)] {
        let rooms = try await sql.raw("SELECT room_id FROM room_bookings WHERE owner = \(bind: usernameKey)").all()
            .map { try $0.decode(column: "room_id", as: String.self) }
        var changed: [(String, Int)] = []
        for room in rooms {
            try await sql.raw(
                "DELETE FROM room_bookings WHERE owner = \(bind: usernameKey) AND room_id = \(bind: room)"
            )
            .run()
            if let spots = try await freeSpot(room, in: sql) { changed.append((room, spots)) }
        }
        return changed
    }

    /// Gives back the spot of a booking just deleted (never above the room's capacity); the room's spots now.
    private static func freeSpot(_ roomId: String, in sql: any SQLDatabase) async throws -> Int? {
        try await sql.raw(
            "UPDATE rooms SET spots = spots + 1 WHERE id = \(bind: roomId) AND spots < capacity RETURNING spots"
        ).first()?.decode(column: "spots", as: Int.self)
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

    /// A person's bookings, newest first, with their rooms' names.
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

    private static func bookingCount(_ sql: any SQLDatabase, room: String) async throws -> Int {
        try await sql.raw("SELECT COUNT(*) AS n FROM room_bookings WHERE room_id = \(bind: room)").first()?
            .decode(column: "n", as: Int.self) ?? 0
    }

    /// 128 random bits, base64url: unguessable.
    static func newBookingId() -> String {
        SecureRandom.base64url(byteCount: 16)
    }
}
