import Foundation
import QuadCore
import QuadPlatform
import QuadWaitingLines
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
    /// Seats held, for a group (one for the whole room).
    var seats: Int = 1
    var range: SlotRange
    /// The series it belongs to, if it was booked as one.
    var seriesId: String?
    var createdAt: String
    /// When it is released unless checked in; nil when its building asks no check-in.
    var checkInBy: Date?
    var checkedIn: Bool

    var booking: Booking {
        Booking(
            id: id, roomId: roomId, person: person, createdAt: createdAt, start: range.start, end: range.end,
            hold: hold, seats: hold == .seat ? seats : nil, seriesId: seriesId, checkInBy: checkedIn ? nil : checkInBy,
            checkedIn: checkedIn)
    }
}

/// One booking to make: who, where, when, and by when it must be checked in.
struct ReservationIntent: Sendable {
    var roomId: String
    var range: SlotRange
    var hold: Hold
    /// Seats for a group (one, or ignored for the whole room).
    var seats: Int = 1
    /// The owner's username, lowercased, and their name as shown.
    var owner: String
    var person: String
    var checkInBy: Date?
    var seriesId: String? = nil
}

/// Why a reservation was refused.
enum ReservationRefusal {
    static let taken = Problem.conflict(
        "slot-taken", title: "Taken at that time",
        detail: "Others hold the room then: it cannot be yours alone.")
    static func closed(_ detail: String) -> Problem {
        Problem.conflict("room-closed", title: "Closed now", detail: detail)
    }
}

/// Reservations in time, in table `room_reservations`.
///
/// Whether one more fits is decided under a lock on the room's row: `SELECT … FOR UPDATE` on PostgreSQL, and on
/// SQLite the writer's lock every transaction takes first (`BEGIN IMMEDIATE`). A room's bookings are then decided
/// one at a time, on every instance, each seeing all that were committed before it, and the rule is QuadCore's
/// (`Occupancy`). Why not a constraint: "at most N seats held at every instant" is no exclusion constraint (those
/// say "no two overlap"), and serializable transactions would have racing people retry. Rooms stay independent:
/// the lock is the one room's.
///
/// A room's seats are its `spots` (what an admin offers), less the bookings made before rooms had time
/// (`room_bookings`), which hold a seat at every instant until cancelled.
///
/// A room's waiting lines (`WaitingLists`, one per time slot) are decided under the same lock: a seat freed by a
/// cancellation or a release is offered to the first in line in the transaction that frees it, and a live offer
/// holds its seat against everyone else's bookings (`RoomWaiting.swift`).
final class ReservationStore: Sendable {
    let database: Database
    let clock: any QuadClock
    let campus: any CampusTime
    let waiting: WaitingLists
    /// Bookings made, cancelled and released are mailed to their owners (`BookingMail`).
    let mail: PersonMail

    init(
        database: Database, clock: any QuadClock, campus: any CampusTime, waiting: WaitingLists,
        mail: PersonMail = .off
    ) {
        self.database = database
        self.clock = clock
        self.campus = campus
        self.waiting = waiting
        self.mail = mail
    }

    /// The campus's wall clock, for opening hours.
    func campusClock() async -> CampusClock { CampusClock(timeZone: await campus.timeZone()) }

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

    /// Check-in, and `spots` becoming what an admin offers rather than a counter: the spots the untimed bookings
    /// took are given back to the column, and those bookings are counted as held instead. `room_clock` records the
    /// last quarter hour whose changes were announced, so one instance announces each (`RoomTimeKeeper`).
    static let checkInMigration = Migration(
        id: 103, name: "bookings checked in, spots offered",
        statements: [
            "ALTER TABLE room_reservations ADD COLUMN check_in_by INTEGER",
            "ALTER TABLE room_reservations ADD COLUMN checked_in_at TEXT",
            "CREATE INDEX room_reservations_check_in ON room_reservations (check_in_by)",
            "CREATE TABLE room_clock (id INTEGER PRIMARY KEY, slot INTEGER NOT NULL)",
            "INSERT INTO room_clock (id, slot) VALUES (1, 0)",
            "UPDATE rooms SET spots = spots + (SELECT COUNT(*) FROM room_bookings b WHERE b.room_id = rooms.id)",
        ])

    /// Stores `intent` if it fits, or throws why not. Returns it with the room's free seats now, and what changed in
    /// the room's waiting lines (to announce).
    func reserve(_ intent: ReservationIntent) async throws -> Reserved {
        let campus = await campusClock()
        return try await database.transaction { sql in try await self.reserve(intent, sql, campus: campus) }
    }

    /// A booking made, the room's free seats now, and what changed in its lines.
    typealias Reserved = (reservation: Reservation, spots: Int, waiting: WaitingChanges)

    /// `reserve` inside the caller's transaction (the SQLite batch, `BookingBatcher`).
    func reserve(_ intent: ReservationIntent, _ sql: any SQLDatabase, campus: CampusClock) async throws -> Reserved {
        let room = try await Self.lockForBooking(intent.roomId, sql, engine: database.engine)
        var (reservation, waiting) = try await take(intent, seats: room.seats, lines: room.lines, sql)
        if try await mailBooked(reservation, names: room.names, sql, campus: campus) { waiting.mailed = true }
        return (reservation, try await Self.spots(intent.roomId, sql, at: clock.now, campus: campus), waiting)
    }

    /// Books each date of `recurrence` from `first` at `start` for `minutes` that `policy` takes and that is free,
    /// under one lock of the room; says per date what became of it, and returns the first date booked (nil: none
    /// was). The series' rule is kept with it (`room_series`), for calendars.
    func reserveSeries(
        roomId: String, recurrence: Recurrence, from firstDate: LocalDate, start: LocalTime, minutes: Int, hold: Hold,
        seats: Int, owner: String, person: String, policy: BookingPolicy
    ) async throws -> (first: Reservation?, outcomes: [OccurrenceOutcome], spots: Int) {
        let dates = recurrence.dates(from: firstDate)
        let seriesId = RoomStore.newBookingId()
        let now = clock.now
        let campus = await campusClock()
        return try await database.transaction { sql in
            let room = try await Self.lockForBooking(roomId, sql, engine: self.database.engine)
            var outcomes: [OccurrenceOutcome] = []
            var first: Reservation?
            for date in dates {
                let range: SlotRange
                do {
                    range = try policy.range(date: date, start: start, minutes: minutes, clock: campus, now: now)
                } catch let failure as ValidationFailure {
                    outcomes.append(.init(date: date, result: .unavailable, reason: failure.errors.first?.message))
                    continue
                }
                let intent = ReservationIntent(
                    roomId: roomId, range: range, hold: hold, seats: seats, owner: owner, person: person,
                    checkInBy: policy.checkInDeadline(for: range, bookedAt: now), seriesId: seriesId)
                do {
                    let (taken, _) = try await self.take(intent, seats: room.seats, lines: room.lines, sql)
                    first = first ?? taken
                    outcomes.append(.init(date: date, result: .booked))
                } catch let refusal as Problem {
                    outcomes.append(.init(date: date, result: .taken, reason: refusal.detail))
                }
            }
            if first != nil {
                try await sql.raw(
                    """
                    INSERT INTO room_series (id, room_id, owner, frequency, first_date, until, skipped, start_time, minutes)
                    VALUES (\(bind: seriesId), \(bind: roomId), \(bind: owner), \(bind: recurrence.frequency.rawValue),
                            \(bind: firstDate.description), \(bind: recurrence.until.description),
                            \(bind: recurrence.skipped.sorted().map(\.description).joined(separator: ",")),
                            \(bind: start.description), \(bind: minutes))
                    """
                ).run()
                // The series, once: its rule and the dates that could not be booked left out.
                _ = try await self.mailBooked(first!, names: room.names, sql, campus: campus)
            }
            return (first, outcomes, try await Self.spots(roomId, sql, at: now, campus: campus))
        }
    }

    /// A series' rule, as booked: every day or week from a first date until a last, at a time, for a length.
    static let seriesMigration = Migration(
        id: 104, name: "room booking series",
        statements: [
            """
            CREATE TABLE room_series (
                id TEXT PRIMARY KEY, room_id TEXT NOT NULL REFERENCES rooms (id) ON DELETE CASCADE,
                owner TEXT NOT NULL, frequency TEXT NOT NULL CHECK (frequency IN ('daily', 'weekly')),
                first_date TEXT NOT NULL, until TEXT NOT NULL, skipped TEXT NOT NULL, start_time TEXT NOT NULL,
                minutes INTEGER NOT NULL)
            """,
            "CREATE INDEX room_series_owner ON room_series (owner)",
        ])

    /// A booking for a group holds its number of seats (one for every booking before).
    static let groupMigration = Migration(
        id: 105, name: "bookings for a group",
        statements: ["ALTER TABLE room_reservations ADD COLUMN seats INTEGER NOT NULL DEFAULT 1 CHECK (seats >= 1)"])

    /// `owner`'s bookings as their calendar shows them: each series once (its rule, less the dates with no
    /// booking), each other booking on its own; those ended more than 30 days ago are left out.
    func calendar(owner: String, campus: CampusClock) async throws -> [CalendarBooking] {
        try await calendars(where: "owner = \(bind: owner.lowercased())", campus: campus).map(\.booking)
    }

    /// The bookings and series `condition` picks (on `owner`) that end after the last 30 days, as calendars show
    /// them, each with whose it is (their display name as booked).
    func calendars(
        where condition: SQLQueryString, campus: CampusClock
    ) async throws -> [(person: String, booking: CalendarBooking)] {
        let since = SlotRange.slot(containing: clock.now) - 30 * 96
        return try await database.withConnection { sql in
            let names = try await Self.roomNames(sql)
            let picked = try await Self.select(sql, condition)
            let bySeries = Dictionary(grouping: picked.filter { $0.seriesId != nil }, by: { $0.seriesId! })
            var entries: [(person: String, booking: CalendarBooking)] = []
            for reservation in picked where reservation.seriesId == nil && reservation.range.upper > since {
                entries.append((reservation.person, Self.entry(reservation, names: names, campus: campus)))
            }
            for rule in try await Self.seriesRules(sql, condition) {
                guard let booked = bySeries[rule.id], booked.contains(where: { $0.range.upper > since }),
                    let entry = Self.entry(rule, booked: booked, names: names, campus: campus)
                else { continue }
                entries.append((booked[0].person, entry))
            }
            return entries
        }
    }

    /// Each room's name and building, by id.
    static func roomNames(_ sql: any SQLDatabase, only roomId: String? = nil) async throws -> [String: (String, String)]
    {
        let condition: SQLQueryString = roomId.map { "WHERE id = \(bind: $0)" } ?? ""
        return try await sql.raw("SELECT id, name, building FROM rooms \(condition)").all().reduce(
            into: [String: (String, String)]()
        ) {
            $0[try $1.decode(column: "id", as: String.self)] = (
                try $1.decode(column: "name", as: String.self), try $1.decode(column: "building", as: String.self)
            )
        }
    }

    /// A booking's summary and location, as calendars show them.
    static func words(_ reservation: Reservation, names: [String: (String, String)]) -> (String, String) {
        let (name, building) = names[reservation.roomId] ?? (reservation.roomId, "")
        return (reservation.hold == .room ? "\(name) (whole room)" : name, "\(name), \(building)")
    }

    /// A booking outside any series, as calendars show it.
    static func entry(
        _ reservation: Reservation, names: [String: (String, String)], campus: CampusClock
    )
        -> CalendarBooking
    {
        let (summary, location) = words(reservation, names: names)
        return CalendarBooking(
            uid: reservation.id, summary: summary, location: location, first: campus.date(of: reservation.range.start),
            start: campus.time(of: reservation.range.start), minutes: reservation.range.minutes)
    }

    /// A series' rule, as booked (`room_series`).
    struct SeriesRule {
        let id: String
        let rule: Recurrence
        let first: LocalDate
        let start: LocalTime
        let minutes: Int
    }

    static func seriesRules(_ sql: any SQLDatabase, _ condition: SQLQueryString) async throws -> [SeriesRule] {
        try await sql.raw(
            "SELECT id, frequency, first_date, until, start_time, minutes FROM room_series WHERE \(condition)"
        ).all().compactMap { row in
            guard
                let frequency = Recurrence.Frequency(rawValue: try row.decode(column: "frequency", as: String.self)),
                let first = LocalDate(try row.decode(column: "first_date", as: String.self)),
                let until = LocalDate(try row.decode(column: "until", as: String.self)),
                let start = LocalTime(try row.decode(column: "start_time", as: String.self))
            else { return nil }
            return SeriesRule(
                id: try row.decode(column: "id", as: String.self), rule: Recurrence(frequency: frequency, until: until),
                first: first, start: start, minutes: try row.decode(column: "minutes", as: Int.self))
        }
    }

    /// A series as calendars show it: its rule, less the dates with no booking in `booked` (nil: none is left).
    static func entry(
        _ series: SeriesRule, booked: [Reservation], names: [String: (String, String)], campus: CampusClock
    ) -> CalendarBooking? {
        guard let any = booked.first else { return nil }
        let (summary, location) = words(any, names: names)
        return CalendarBooking.series(
            uid: series.id, summary: summary, location: location, rule: series.rule, ruleFirst: series.first,
            start: series.start, minutes: series.minutes, booked: Set(booked.map { campus.date(of: $0.range.start) }))
    }

    /// The reservations of `roomId` that overlap `range`, earliest first.
    func reservations(roomId: String, during range: SlotRange) async throws -> [Reservation] {
        try await database.withConnection { sql in try await Self.overlapping(roomId, range, sql) }
    }

    /// The reservations of `roomId` that overlap `range`, earliest first, in the caller's transaction.
    static func overlapping(_ roomId: String, _ range: SlotRange, _ sql: any SQLDatabase) async throws -> [Reservation]
    {
        try await select(
            sql, "room_id = \(bind: roomId) AND end_slot > \(bind: range.lower) AND first_slot < \(bind: range.upper)")
    }

    /// What holds the room's seats during `range`: `booked`, and the offers among `offers` for times that overlap it.
    static func occupancy(
        seats: Int, booked: [Reservation], offers: [WaitingPlace] = [], during range: SlotRange
    ) -> Occupancy {
        let held = offers.compactMap(\.roomSlot).filter { $0.range.overlaps(range) }
        return Occupancy(
            seats: seats, groups: booked.map { ($0.range, $0.hold, $0.seats) } + held.map { ($0.range, $0.hold, 1) })
    }

    /// Every room's seats for booking in time and its reservations overlapping `range` (or just `only`'s): what is
    /// free then, as `Occupancy` counts it.
    func occupancies(during range: SlotRange, only roomId: String? = nil) async throws -> [String: Occupancy] {
        try await database.withConnection { sql in
            let filter: SQLQueryString = roomId.map { "WHERE r.id = \(bind: $0)" } ?? ""
            let seats = try await sql.raw(
                """
                SELECT r.id, r.spots - (SELECT COUNT(*) FROM room_bookings k WHERE k.room_id = r.id) AS seats
                FROM rooms r \(filter)
                """
            ).all().reduce(into: [String: Int]()) {
                $0[try $1.decode(column: "id", as: String.self)] = try $1.decode(column: "seats", as: Int.self)
            }
            let roomFilter: SQLQueryString = roomId.map { "room_id = \(bind: $0) AND " } ?? ""
            let held = try await Self.select(
                sql, "\(roomFilter)end_slot > \(bind: range.lower) AND first_slot < \(bind: range.upper)")
            let byRoom = Dictionary(grouping: held, by: \.roomId)
            return seats.reduce(into: [:]) { result, room in
                result[room.key] = Occupancy(
                    seats: max(0, room.value), groups: (byRoom[room.key] ?? []).map { ($0.range, $0.hold, $0.seats) })
            }
        }
    }

    /// How many reservations of `roomId` are not yet over: what removing the room would cancel.
    func upcomingCount(roomId: String) async throws -> Int {
        let now = SlotRange.slot(containing: clock.now)
        return try await database.withConnection { sql in
            try await sql.raw(
                "SELECT COUNT(*) AS n FROM room_reservations WHERE room_id = \(bind: roomId) AND end_slot > \(bind: now)"
            ).first()?.decode(column: "n", as: Int.self) ?? 0
        }
    }

    /// `owner`'s reservations not yet over, earliest first: what the badge on every page reads, without the names.
    func upcomingReservations(owner: String) async throws -> [Reservation] {
        let now = SlotRange.slot(containing: clock.now)
        return try await database.withConnection { sql in
            try await Self.select(sql, "owner = \(bind: owner.lowercased()) AND end_slot > \(bind: now)")
        }
    }

    /// `owner`'s reservations not yet over, earliest first, with their rooms' names.
    func upcoming(owner: String) async throws -> [(reservation: Reservation, roomName: String)] {
        let mine = try await upcomingReservations(owner: owner)
        return try await database.withConnection { sql in
            let names = try await sql.raw("SELECT id, name FROM rooms").all().reduce(into: [String: String]()) {
                $0[try $1.decode(column: "id", as: String.self)] = try $1.decode(column: "name", as: String.self)
            }
            return mine.map { ($0, names[$0.roomId] ?? $0.roomId) }
        }
    }

    /// One reservation, or nil.
    func find(_ id: String, roomId: String) async throws -> Reservation? {
        try await database.withConnection { sql in
            try await Self.select(sql, "id = \(bind: id) AND room_id = \(bind: roomId)").first
        }
    }

    /// Cancels a reservation (and, with `following`, the later dates of its series) when `person` owns it or is an
    /// admin (else 403). Nil: no such reservation. Else the room's free seats now.
    /// The freed seats go to the room's waiting lines first, in the same transaction.
    func cancel(
        _ id: String, roomId: String, by person: Person, following: Bool
    ) async throws -> (spots: Int, waiting: WaitingChanges)? {
        let campus = await campusClock()
        return try await database.transaction { sql in
            guard let seats = try await Self.lockIfPresent(roomId, sql, engine: self.database.engine) else {
                return nil
            }
            guard let reservation = try await Self.select(sql, "id = \(bind: id) AND room_id = \(bind: roomId)").first
            else { return nil }
            guard person.isAdmin || reservation.owner == person.username.lowercased() else {
                throw Problem(.forbidden, detail: "Only the person who booked, or an admin, may cancel this booking.")
            }
            let to = try await self.mail.recipient(reservation.owner, for: .cancelled, sql)
            let before = to == nil ? nil : try await Self.entry(of: reservation, sql, campus: campus)
            if following, let series = reservation.seriesId {
                try await sql.raw(
                    """
                    DELETE FROM room_reservations
                    WHERE series_id = \(bind: series) AND first_slot >= \(bind: reservation.range.lower)
                    """
                ).run()
            } else {
                try await sql.raw("DELETE FROM room_reservations WHERE id = \(bind: id)").run()
            }
            var waiting = try await self.settleWaiting(roomId, seats: seats, sql)
            if let to {
                let series = reservation.seriesId != nil
                waiting.mailed =
                    try await self.mailBooking(
                        following && series ? .cancelledFrom : .cancelled, to: to.username, before: before,
                        after: series ? try await Self.entry(of: reservation, sql, campus: campus) : nil,
                        date: series ? campus.date(of: reservation.range.start) : nil, sql, campus: campus)
                    || waiting.mailed
            }
            return (try await Self.spots(roomId, sql, at: self.clock.now, campus: campus), waiting)
        }
    }

    /// Checks in `owner`'s reservation: from a quarter hour before it starts until it ends. Returns it checked in;
    /// nil when there is no such reservation of theirs.
    func checkIn(_ id: String, roomId: String, owner: String) async throws -> Reservation? {
        let now = clock.now
        return try await database.transaction { sql in
            guard
                var reservation = try await Self.select(
                    sql, "id = \(bind: id) AND room_id = \(bind: roomId) AND owner = \(bind: owner.lowercased())"
                ).first
            else { return nil }
            if reservation.checkedIn { return reservation }
            if now < reservation.range.start.addingTimeInterval(-CheckInWindow.opensBefore) {
                throw Problem.conflict(
                    "too-early", title: "Too early", detail: "Check in from a quarter of an hour before it starts.")
            }
            if now >= reservation.range.end {
                throw Problem.conflict("booking-over", title: "Over", detail: "This booking has ended.")
            }
            try await sql.raw(
                "UPDATE room_reservations SET checked_in_at = \(bind: Timestamp.string(now)) WHERE id = \(bind: id)"
            ).run()
            reservation.checkedIn = true
            return reservation
        }
    }

    /// The one reservation of `owner` in `roomId` to check in now (for a sign on the room's door), if any.
    func current(owner: String, roomId: String) async throws -> Reservation? {
        let soon = SlotRange.slot(containing: clock.now.addingTimeInterval(CheckInWindow.opensBefore))
        let now = SlotRange.slot(containing: clock.now)
        return try await database.withConnection { sql in
            try await Self.select(
                sql,
                """
                owner = \(bind: owner.lowercased()) AND room_id = \(bind: roomId)
                AND first_slot <= \(bind: soon) AND end_slot > \(bind: now)
                """
            ).first
        }
    }

    /// Deletes the reservations nobody checked in by their deadline (at or before `now`), room by room under its
    /// lock, the freed seats offered to the room's waiting lines in the same transaction; the rooms released.
    /// Safe on several instances at once: a row is deleted once, and only its deleter hears of it.
    func releaseUncheckedIn(at now: Date) async throws -> (rooms: Set<String>, count: Int, waiting: WaitingChanges) {
        let deadline = Int(now.timeIntervalSince1970.rounded(.down))
        let due: SQLQueryString = "check_in_by <= \(bind: deadline) AND checked_in_at IS NULL"
        let candidates = try await database.withConnection { sql in
            Set(
                try await sql.raw("SELECT DISTINCT room_id FROM room_reservations WHERE \(due)").all().map {
                    try $0.decode(column: "room_id", as: String.self)
                })
        }
        var released = Set<String>()
        var count = 0
        var changes = WaitingChanges()
        let campus = await campusClock()
        for roomId in candidates.sorted() {
            let (deleted, waiting) = try await database.transaction { sql in
                guard let seats = try await Self.lockIfPresent(roomId, sql, engine: self.database.engine) else {
                    return (0, WaitingChanges())
                }
                // Their owners are told, each with their calendar entry as it was and as it is now.
                var told: [String: (Reservation, MailRecipient, CalendarBooking?)] = [:]
                if self.mail.isOn {
                    for reservation in try await Self.select(sql, "room_id = \(bind: roomId) AND \(due)") {
                        guard let to = try await self.mail.recipient(reservation.owner, for: .released, sql) else {
                            continue
                        }
                        told[reservation.id] = (
                            reservation, to, try await Self.entry(of: reservation, sql, campus: campus)
                        )
                    }
                }
                let gone = try await sql.raw(
                    "DELETE FROM room_reservations WHERE room_id = \(bind: roomId) AND \(due) RETURNING id"
                ).all()
                guard !gone.isEmpty else { return (0, WaitingChanges()) }
                var waiting = try await self.settleWaiting(roomId, seats: seats, sql)
                for row in gone {
                    guard let (reservation, to, before) = told[try row.decode(column: "id", as: String.self)] else {
                        continue
                    }
                    let series = reservation.seriesId != nil
                    waiting.mailed =
                        try await self.mailBooking(
                            .released, to: to.username, before: before,
                            after: series ? try await Self.entry(of: reservation, sql, campus: campus) : nil,
                            date: series ? campus.date(of: reservation.range.start) : nil, sql, campus: campus)
                        || waiting.mailed
                }
                return (gone.count, waiting)
            }
            if deleted > 0 { released.insert(roomId) }
            count += deleted
            changes.merge(waiting)
        }
        return (released, count, changes)
    }

    /// True for the one caller (on any instance) that moves the announced quarter hour on to `slot`.
    func claim(slot: Int) async throws -> Bool {
        try await database.withConnection { sql in
            try await sql.raw(
                "UPDATE room_clock SET slot = \(bind: slot) WHERE id = 1 AND slot < \(bind: slot) RETURNING slot"
            ).first() != nil
        }
    }

    /// `lock`, whether anyone waits in the room's lines, and its name and building (for a booking's message), in the
    /// same statement (one round trip fewer per booking: measured on PostgreSQL, the storm lost 15 % with the lines
    /// read on their own).
    static func lockForBooking(
        _ roomId: String, _ sql: any SQLDatabase, engine: Database.Engine
    ) async throws -> (seats: Int, lines: Bool, names: [String: (String, String)]) {
        let forUpdate = engine == .postgres ? " FOR UPDATE" : ""
        guard
            let row = try await sql.raw(
                """
                SELECT spots - (SELECT COUNT(*) FROM room_bookings WHERE room_id = \(bind: roomId)) AS seats,
                    \(WaitingLists.anyPlace(.room, thing: roomId)) AS lines, name, building
                FROM rooms WHERE id = \(bind: roomId)\(unsafeRaw: forUpdate)
                """
            ).first()
        else { throw BookingRefusal.roomNotFound(roomId) }
        return (
            try row.decode(column: "seats", as: Int.self), try row.decode(column: "lines", as: Int.self) != 0,
            [
                roomId: (
                    try row.decode(column: "name", as: String.self), try row.decode(column: "building", as: String.self)
                )
            ]
        )
    }

    /// `lock`, or nil when there is no such room (any other failure is thrown).
    static func lockIfPresent(_ roomId: String, _ sql: any SQLDatabase, engine: Database.Engine) async throws -> Int? {
        do {
            return try await lock(roomId, sql, engine: engine)
        } catch let problem as Problem where problem.status == .notFound {
            return nil
        }
    }

    /// Takes the room's lock for the rest of the transaction: its seats for booking in time.
    static func lock(_ roomId: String, _ sql: any SQLDatabase, engine: Database.Engine) async throws -> Int {
        let forUpdate = engine == .postgres ? " FOR UPDATE" : ""
        guard
            let row = try await sql.raw(
                """
                SELECT spots - (SELECT COUNT(*) FROM room_bookings WHERE room_id = \(bind: roomId)) AS seats
                FROM rooms WHERE id = \(bind: roomId)\(unsafeRaw: forUpdate)
                """
            ).first()
        else { throw BookingRefusal.roomNotFound(roomId) }
        return try row.decode(column: "seats", as: Int.self)
    }

    /// Inside the room's lock: stores the reservation if `Occupancy` allows it, counting the seats held for people in
    /// line (409 `held-for-line` when only those stand in the way). The owner's own offer for that time is theirs to
    /// take: booking it ends their wait.
    /// `lines`: whether anyone may wait in the room's lines (false only when the lock's statement said nobody does).
    func take(
        _ intent: ReservationIntent, seats: Int, lines: Bool = true, _ sql: any SQLDatabase
    ) async throws -> (Reservation, WaitingChanges) {
        try Self.checkSeats(intent, seats: seats)
        var changes = WaitingChanges()
        var offers: [WaitingPlace] = []
        if lines, try await !waiting.places(.room, thing: intent.roomId, sql).isEmpty {
            changes = try await settleWaiting(intent.roomId, seats: seats, sql)
            let now = clock.now
            offers = try await waiting.places(.room, thing: intent.roomId, sql).filter {
                $0.holdsOffer(at: now) && $0.roomSlot.map { $0.range.overlaps(intent.range) } ?? false
            }
        }
        let held = try await Self.overlapping(intent.roomId, intent.range, sql)
        let standing = try await sql.raw(
            "SELECT 1 FROM room_bookings WHERE room_id = \(bind: intent.roomId) AND owner = \(bind: intent.owner)"
        ).first()
        let reservation = try decide(intent, seats: seats, held: held, standing: standing != nil, offers: offers)
        for mine in offers where mine.owner == intent.owner {
            try await waiting.delete(mine.id, sql)
            changes.changed.append((mine, .accepted))
        }
        try await Self.insert([reservation], sql)
        return (reservation, changes)
    }

    /// 422 when a group asks for more seats than the room has for booking (`seats`).
    static func checkSeats(_ intent: ReservationIntent, seats: Int) throws {
        guard intent.hold == .seat, intent.seats > max(seats, 1) else { return }
        throw ValidationFailure(
            field: "seats", message: "This room has \(seats) seats to book: ask for fewer, or for the whole room.")
    }

    /// The reservation `intent` makes, or why it is refused: `held` are the room's bookings overlapping its time,
    /// `standing` whether its owner holds an untimed booking there, `offers` the places in line offered a time that
    /// overlaps it (the owner's own is theirs to take).
    func decide(
        _ intent: ReservationIntent, seats: Int, held: [Reservation], standing: Bool, offers: [WaitingPlace]
    ) throws -> Reservation {
        if standing || held.contains(where: { $0.owner == intent.owner }) {
            throw BookingRefusal.alreadyBooked
        }
        let others = offers.filter { $0.owner != intent.owner }
        guard
            Self.occupancy(seats: seats, booked: held, offers: others, during: intent.range)
                .allows(intent.hold, seats: intent.seats, during: intent.range)
        else {
            if let ends = offers.compactMap(\.offeredUntil).min(),
                Self.occupancy(seats: seats, booked: held, during: intent.range).allows(
                    intent.hold, seats: intent.seats, during: intent.range)
            {
                throw WaitingRefusal.held("A seat then", until: ends)
            }
            throw intent.hold == .seat ? BookingRefusal.full : ReservationRefusal.taken
        }
        return Reservation(
            id: RoomStore.newBookingId(), roomId: intent.roomId, owner: intent.owner, person: intent.person,
            hold: intent.hold, seats: intent.hold == .seat ? intent.seats : 1, range: intent.range,
            seriesId: intent.seriesId, createdAt: Timestamp.string(clock.now),
            checkInBy: intent.checkInBy, checkedIn: false)
    }

    /// Stores `reservations`, in one statement.
    static func insert(_ reservations: [Reservation], _ sql: any SQLDatabase) async throws {
        guard !reservations.isEmpty else { return }
        let rows: [SQLQueryString] = reservations.map { made in
            let deadline = made.checkInBy.map { Int($0.timeIntervalSince1970.rounded(.down)) }
            return """
                (\(bind: made.id), \(bind: made.roomId), \(bind: made.owner), \(bind: made.person), \(bind: made.hold.rawValue),
                 \(bind: made.seats), \(bind: made.range.lower), \(bind: made.range.upper), \(bind: made.seriesId),
                 \(bind: made.createdAt), \(bind: deadline))
                """
        }
        try await sql.raw(
            """
            INSERT INTO room_reservations
                (id, room_id, owner, person, hold, seats, first_slot, end_slot, series_id, created_at, check_in_by)
            VALUES \(rows.joined(separator: ", "))
            """
        ).run()
    }

    /// The room's free seats at `now` (`RoomStore.records`'s rule).
    static func spots(
        _ roomId: String, _ sql: any SQLDatabase, at now: Date, campus: CampusClock
    ) async throws -> Int {
        try await RoomStore.records(sql, at: now, campus: campus, only: roomId).first?.spots ?? 0
    }

    static func select(_ sql: any SQLDatabase, _ condition: SQLQueryString) async throws -> [Reservation] {
        try await sql.raw(
            """
            SELECT id, room_id, owner, person, hold, seats, first_slot, end_slot, series_id, created_at, check_in_by,
                   checked_in_at
            FROM room_reservations WHERE \(condition)
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
                hold: hold, seats: try row.decode(column: "seats", as: Int.self), range: range,
                seriesId: try row.decode(column: "series_id", as: String?.self),
                createdAt: try row.decode(column: "created_at", as: String.self),
                checkInBy: try row.decode(column: "check_in_by", as: Int?.self).map {
                    Date(timeIntervalSince1970: Double($0))
                },
                checkedIn: try row.decode(column: "checked_in_at", as: String?.self) != nil)
        }
    }
}

/// A row the table's own checks should have kept out.
struct StoreCorruption: Error, CustomStringConvertible {
    let description: String
}
