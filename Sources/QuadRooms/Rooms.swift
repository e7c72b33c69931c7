import Foundation
import Hummingbird
import OpenAPIHummingbird
import QuadCore
import QuadPlatform
import QuadWaitingLines
import SQLKit
import ServiceLifecycle

/// The Rooms service: its stores, what it keeps of the rooms, and the events that keep that fresh on every instance.
package final class Rooms: Feature, PersonRemoval, PersonCalendar {
    let store: RoomStore
    let reservations: ReservationStore
    let policies: BuildingPolicyStore
    let kept: KeptRooms
    let platform: Platform
    /// The waiting lines for a room's time slots.
    let lines: WaitingLists
    /// Concurrent bookings, written together (`BookingBatcher`).
    private let batcher: BookingBatcher
    /// Every room's booking rules, read once per change of a room or a building's rules (not per booking).
    private let rules: Kept<One, [String: BookingPolicy]>

    package init(platform: Platform, campus: any CampusTime, lines: WaitingLists, mail: PersonMail) {
        self.platform = platform
        self.lines = lines
        self.store = RoomStore(database: platform.database, clock: platform.clock, campus: campus)
        self.reservations = ReservationStore(
            database: platform.database, clock: platform.clock, campus: campus, waiting: lines, mail: mail)
        let policies = BuildingPolicyStore(database: platform.database)
        self.policies = policies
        self.kept = KeptRooms(store: store, reservations: reservations, platform: platform)
        batcher = BookingBatcher(store: reservations)
        rules = Kept(hub: platform.events, clock: platform.clock, droppedBy: [.notice("room-rules")]) {
            try await policies.policies()
        }
        lines.register(.room, self)
    }

    typealias Change = RoomEvent
    /// The hub's event for a room's change (its spots, a new room, one removed).

    /// Call after a committed change: what every instance keeps of the rooms is dropped as the event is published.
    func changed(_ id: String, spots: Int?, _ kind: Change.Kind) async {
        // A room added, removed, moved to another building or given hours of its own: its rules may differ.
        if kind != .spots { await rules.changed() }
        await platform.events.publish(Change(id: id, spots: spots, change: kind))
    }

    /// Announces the rooms in `ids` with their free seats now.
    func changed(_ ids: Set<String>) async throws {
        guard !ids.isEmpty else { return }
        for record in try await store.all() where ids.contains(record.id) {
            await changed(record.id, spots: record.spots, .spots)
        }
    }

    /// The original apps' booking, and a booking with no time given: one seat for `owner` from now to the end of the
    /// opening period. Refused while the building is closed.
    func book(roomId: String, owner: Person) async throws -> (booking: Booking, spots: Int) {
        let policy = try await policy(roomId)
        let now = platform.clock.now
        guard let range = policy.restOfPeriod(at: now, clock: await store.campusClock()) else {
            throw ReservationRefusal.closed("The building is closed now. Its hours: \(policy.hours.description).")
        }
        return try await reserve(
            ReservationIntent(
                roomId: roomId, range: range, hold: .seat, owner: owner.username.lowercased(),
                person: owner.displayName, checkInBy: policy.checkInDeadline(for: range, bookedAt: now)))
    }

    /// Stores `intent` if it fits (batched with others made at the same time) and tells everyone the room's free seats
    /// now.
    func reserve(_ intent: ReservationIntent) async throws -> (booking: Booking, spots: Int) {
        let (reservation, spots, waiting) = try await batcher.book(intent)
        platform.metrics.count(.booked)
        await changed(intent.roomId, spots: spots, .spots)
        await lines.announce(waiting)
        return (reservation.booking, spots)
    }

    /// A booking from `start` for `minutes` of `seats` seats or the whole room, once or on every date of `recurrence`
    /// that is free (`series` says what became of each). Refused with the rule it breaks, or as taken when no date
    /// could be booked.
    func book(
        roomId: String, owner: Person, start: Date, minutes: Int, hold: Hold, seats: Int = 1, recurrence: Recurrence?
    ) async throws -> (booking: Booking, spots: Int, series: (id: String, outcomes: [OccurrenceOutcome])?) {
        let policy = try await policy(roomId)
        let campus = await store.campusClock()
        let now = platform.clock.now
        guard seats >= 1 else { throw ValidationFailure(field: "seats", message: "Book one seat or more.") }
        guard SlotRange.slot(at: start) != nil else {
            throw ValidationFailure(field: "start", message: "Start on the quarter hour (:00, :15, :30 or :45).")
        }
        let (date, time) = (campus.date(of: start), campus.time(of: start))
        guard let recurrence else {
            let range = try policy.range(date: date, start: time, minutes: minutes, clock: campus, now: now)
            let (booking, spots) = try await reserve(
                ReservationIntent(
                    roomId: roomId, range: range, hold: hold, seats: seats, owner: owner.username.lowercased(),
                    person: owner.displayName, checkInBy: policy.checkInDeadline(for: range, bookedAt: now)))
            return (booking, spots, nil)
        }
        try recurrence.checked(from: date, policy: policy, today: campus.date(of: now))
        let (first, outcomes, spots) = try await reservations.reserveSeries(
            roomId: roomId, recurrence: recurrence, from: date, start: time, minutes: minutes, hold: hold, seats: seats,
            owner: owner.username.lowercased(), person: owner.displayName, policy: policy)
        reservations.mail.wake()
        platform.metrics.count(.booked, outcomes.filter { $0.result == .booked }.count)
        guard let first, let seriesId = first.seriesId else {
            var problem = Problem.conflict(
                "series-unavailable", title: "No date free", detail: "None of the series' dates could be booked.")
            problem.errors = outcomes.map { FieldError(field: $0.date.description, message: $0.reason ?? "Taken.") }
            throw problem
        }
        await changed(roomId, spots: spots, .spots)
        return (first.booking, spots, (seriesId, outcomes))
    }

    /// Cancels a booking (in time, with `following` the rest of its series too; or one without time) and tells
    /// everyone. False: there is no such booking.
    func cancel(_ bookingId: String, roomId: String, by person: Person, following: Bool) async throws -> Bool {
        if let (spots, waiting) = try await reservations.cancel(
            bookingId, roomId: roomId, by: person, following: following)
        {
            platform.metrics.count(.released(reason: "cancelled"))
            await changed(roomId, spots: spots, .spots)
            await lines.announce(waiting)
            return true
        }
        guard let spots = try await store.cancel(roomId: roomId, bookingId: bookingId, by: person) else { return false }
        platform.metrics.count(.released(reason: "cancelled"))
        await changed(roomId, spots: spots, .spots)
        return true
    }

    /// `person`'s bookings: those without time (held until cancelled), then those in time not yet over, soonest
    /// first; each with its room's name.
    func bookings(of person: Person) async throws -> [(booking: Booking, roomName: String)] {
        try await Self.bookings(of: person.username, store: store, reservations: reservations)
    }

    static func bookings(
        of username: String, store: RoomStore, reservations: ReservationStore
    ) async throws -> [(booking: Booking, roomName: String)] {
        let untimed = try await store.bookings(owner: username)
        let timed = try await reservations.upcoming(owner: username)
        return untimed + timed.map { ($0.reservation.booking, $0.roomName) }
    }

    /// Checks `owner` in to their booking (`ReservationStore.checkIn`); their kept list of bookings is dropped.
    func checkIn(_ bookingId: String, roomId: String, owner: String) async throws -> Reservation? {
        let reservation = try await reservations.checkIn(bookingId, roomId: roomId, owner: owner)
        if reservation != nil { await kept.mine.changed() }
        return reservation
    }

    /// The furthest ahead any building lets people book, in days.
    func horizonDays() async throws -> Int {
        try await rules.value().values.map(\.horizonDays).max() ?? BookingPolicy.default.horizonDays
    }

    /// The rooms with seats for `people` through `range`, and when the others are next free (`RoomFinder`).
    func find(range: SlotRange, people: Int) async throws -> (fitting: [RoomFinder.Choice], others: [RoomFinder.Choice])
    {
        let campus = await store.campusClock()
        let day = RoomDay.span(of: campus.date(of: range.start), clock: campus)
        let occupancies = try await reservations.occupancies(
            during: SlotRange(lower: min(day.lower, range.lower), upper: max(day.upper, range.upper))!)
        let policies = try await rules.value()
        let candidates = try await store.all().compactMap { room in
            occupancies[room.id].map {
                RoomFinder.Candidate(
                    id: room.id, name: room.name, occupancy: $0, capacity: room.capacity,
                    policy: policies[room.id] ?? .default)
            }
        }
        return RoomFinder.find(candidates, range: range, people: people, clock: campus)
    }

    /// Sets a building's rules; its rooms' free seats now may change (it opens or closes), so they are announced.
    func setRules(_ policy: BookingPolicy, forBuilding building: String) async throws {
        try await policies.set(policy, forBuilding: building)
        await rules.changed()
        try await changed(
            Set(try await store.all().filter { $0.building.lowercased() == building.lowercased() }.map(\.id)))
    }

    /// The bookings in `username`'s calendar (the Timetable's feed has them with the person's classes).
    package func calendarBookings(of username: String) async throws -> [CalendarBooking] {
        try await reservations.calendar(owner: username, campus: await store.campusClock())
    }

    /// When each room whose building is closed at `now` opens next, by room id.
    func openings(at now: Date) async throws -> [String: Date] {
        let campus = await store.campusClock()
        return try await rules.value().compactMapValues { $0.hours.nextOpening(after: now, clock: campus) }
    }

    /// Each open room's booking from now: from the quarter hour now falls in to the end of its opening period, and
    /// the longest a booking lasts there.
    func bookableNow(at now: Date) async throws -> [String: (range: SlotRange, maxMinutes: Int)] {
        let campus = await store.campusClock()
        return try await rules.value().compactMapValues { policy in
            policy.restOfPeriod(at: now, clock: campus).map { ($0, policy.maxMinutes) }
        }
    }

    /// The booking rules of `roomId`'s building, or 404.
    func policy(_ roomId: String) async throws -> BookingPolicy {
        guard let policy = try await rules.value()[roomId] else {
            throw BookingRefusal.roomNotFound(roomId)
        }
        return policy
    }

    /// Inside Accounts' transaction: no other connection is asked for (on SQLite there may be none free until it
    /// ends), so the rooms' free seats are read and announced after it.
    package func release(
        _ usernameKey: String, in sql: any SQLDatabase
    ) async throws -> @Sendable () async -> Void {
        let released = try await RoomStore.releaseBookings(of: usernameKey, in: sql)
        return { try? await self.changed(released) }
    }

    func room(_ id: String, request: Request) async throws -> Room {
        guard let record = try await store.find(id) else { throw Problem.notFound("There is no room \(id).") }
        return record.room(baseURL: request.baseURL(trustProxy: platform.configuration.trustProxy))
    }
}

extension Rooms {
    package static var migrations: [Migration] { RoomStore.migrations }
    package static let files = WebFiles(module: "QuadRooms", bundle: .module)
    package static var letters: [LetterWriter] { [ReservationStore.bookingLetter.writer] }

    package var adminLinks: [AdminLink] { [AdminLink(title: "rooms.admin.title", path: "/admin/rooms")] }
    package var recordSets: [any RecordSet] { [RoomRecords(rooms: self)] }
    package var calendarExports: [any CalendarExport] { [BookingsCalendar(rooms: self)] }

    package var link: ServiceLink? {
        // The tab bar shows a door.
        ServiceLink(
            key: "rooms", path: "/rooms",
            icon: "M6 21V4h12v17M3 21h18M14.5 12.5h.01")
    }

    package func register(on routes: Routes, web: WebShell) throws {
        RoomsRoutes(rooms: self, web: web).register(on: routes)
        RoomDayRoutes(rooms: self, web: web).register(on: routes)
        BuildingsAdminRoutes(rooms: self, web: web).register(on: routes)
        RoomsTimelineRoutes(rooms: self, web: web).register(on: routes)
        try RoomsOperations(rooms: self).registerHandlers(
            on: routes.router, configuration: .quad, middlewares: .quad(kept: keptAnswers))
    }

    /// Keeps time (`RoomTimeKeeper`).
    package var services: [any Service] { [RoomTimeKeeper(rooms: self)] }

    package func loadDemoData(announce: @escaping @Sendable (String) -> Void) async throws {
        try await RoomsDemo.load(self, images: platform.images)
    }

    /// `GET /api/rooms`, polled by every open page and app, and each person's `GET /api/me/bookings`.
    package var keptAnswers: [any AnyKeptAnswer] { [kept.list, kept.mine] }

    /// The original Rooms app's files, which it appends to its app link: its list and its booking.
    package var appLinkPaths: [String: String] { ["/api/rooms.json": "/api/rooms", "/api/bookRoom.json": "/api/book"] }
}
