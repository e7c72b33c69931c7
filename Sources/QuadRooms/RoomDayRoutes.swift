import Foundation
import Hummingbird
import QuadCore
import QuadPlatform

/// `/rooms/{room}`: a room's day (its quarter hours within the opening hours, free and taken), booking from a chosen
/// time in two taps (the time, then Book), the person's bookings there with check-in and cancel, and
/// `/rooms/{room}/check-in`, the page a sign on the room's door links to. Forms work without JavaScript;
/// `room.js` keeps the day live.
struct RoomDayRoutes {
    let rooms: Rooms
    let web: WebShell

    func register(on routes: Routes) {
        routes.on(.get, "/rooms/:roomId", .public) { request, context in
            try await self.page(request, roomId: RoomsRoutes.roomId(context))
        }
        routes.on(.post, "/rooms/:roomId/bookings", .member) { request, context in
            try await self.book(request, roomId: RoomsRoutes.roomId(context))
        }
        routes.on(.post, "/rooms/:roomId/bookings/:bookingId/check-in", .owner) { request, context in
            guard let bookingId = BookingID(context.parameters.get("bookingId")) else {
                throw Problem.notFound("There is no such booking.")
            }
            return try await self.checkIn(roomId: RoomsRoutes.roomId(context), bookingId: bookingId)
        }
        routes.on(.post, "/rooms/:roomId/waiting", .member) { request, context in
            try await self.wait(request, roomId: RoomsRoutes.roomId(context))
        }
        routes.on(.get, "/rooms/:roomId/check-in", .public) { request, context in
            try await self.door(request, roomId: RoomsRoutes.roomId(context))
        }
    }

    /// The strings `room.js` needs.
    static let scriptStrings = ScriptStrings(["rooms.day.live", "rooms.offline"])

    // MARK: The day

    func page(
        _ request: Request, roomId: RoomID, status: HTTPResponse.Status = .ok, failure: String? = nil
    )
        async throws -> Response
    {
        guard let room = try await rooms.store.find(roomId.value) else {
            throw BookingRefusal.roomNotFound(roomId.value)
        }
        let campus = await rooms.store.campusClock()
        let now = rooms.platform.clock.now
        let today = campus.date(of: now)
        let query = request.uri.queryParameters
        let date = LocalDate(query.get("date") ?? "").map { max($0, today) } ?? today
        let policy = try await rooms.policy(roomId.value)
        let occupancy =
            try await rooms.reservations.occupancies(during: RoomDay.span(of: date, clock: campus), only: room.id)[
                room.id] ?? Occupancy(seats: 0)
        let day = RoomDay(date: date, policy: policy, occupancy: occupancy, clock: campus, now: now)
        var mine: [Reservation] = []
        if let person = RequestInfo.current.person {
            mine = try await rooms.reservations.upcoming(owner: person.username).map(\.reservation).filter {
                $0.roomId == room.id && campus.date(of: $0.range.start) <= date && campus.date(of: $0.range.end) >= date
            }
        }
        let current = SlotRange.slot(containing: now)
        let chosen = LocalTime(query.get("start") ?? "").flatMap { time in
            day.slots.first {
                campus.time(of: $0.range.start) == time && ($0.bookable || RoomDayPage.waitable($0, current: current))
            }
        }
        let situation = RoomDayPage.Situation(
            room: room, day: day, policy: policy, campus: campus, today: today, now: now, chosen: chosen, mine: mine,
            query: query, failure: failure, refreshSeconds: rooms.platform.configuration.refreshSeconds)
        return try web.page(
            request, template: "room", status: status, title: { _ in room.name }, strings: Self.scriptStrings,
            fragments: ["live": "room-day"], keptUntilChangeOf: [.event(.room)]
        ) { t in RoomDayPage(situation, t: t) }
    }

    // MARK: Forms

    /// Books from the chosen time for the chosen length, once or repeated; back to the day with what happened.
    func book(_ request: Request, roomId: RoomID) async throws -> Response {
        let person = try Access.person()
        var request = request
        let fields = try await request.formFields()
        let campus = await rooms.store.campusClock()
        guard let (date, time, minutes) = Self.time(fields) else {
            return try await page(request, roomId: roomId, status: .unprocessableContent, failure: "invalid")
        }
        let hold = Hold(rawValue: fields["hold"] ?? "") ?? .seat
        // A group's seats; none given is one. The whole room takes no number.
        guard
            let seats = hold == .room ? 1 : fields["seats"].map({ Int($0.trimmingCharacters(in: .whitespaces)) }) ?? 1,
            seats >= 1
        else {
            return try await page(
                request, roomId: roomId, status: .unprocessableContent, failure: "seats")
        }
        var recurrence: Recurrence?
        if let every = Recurrence.Frequency(rawValue: fields["repeat"] ?? "") {
            guard let until = LocalDate(fields["until"] ?? "") else {
                return try await page(request, roomId: roomId, status: .unprocessableContent, failure: "until")
            }
            recurrence = Recurrence(frequency: every, until: until)
        }
        let back = "/rooms/\(roomId)?date=\(date)"
        do {
            let booked = try await rooms.book(
                roomId: roomId.value, owner: person, start: campus.instant(date, time), minutes: minutes, hold: hold,
                seats: seats, recurrence: recurrence)
            let series = booked.series.map {
                "&dates=\($0.outcomes.filter { $0.result == .booked }.count)&of=\($0.outcomes.count)"
            }
            return .seeOther("\(back)&booked=\(booked.booking.id)\(series ?? "")")
        } catch let failure as ValidationFailure {
            return try await page(
                request, roomId: roomId, status: .unprocessableContent, failure: failure.errors.first?.message)
        } catch let problem as Problem where problem.status == .conflict {
            return .seeOther("\(back)&error=\(RoomDayPage.reason(problem))")
        }
    }

    /// The day, start and length a booking or waiting form chose (nil: not all of them, or not readable).
    static func time(_ fields: [String: String]) -> (LocalDate, LocalTime, Int)? {
        guard let date = LocalDate(fields["date"] ?? ""), let time = LocalTime(fields["start"] ?? ""),
            let minutes = Int(fields["minutes"] ?? "")
        else { return nil }
        return (date, time, minutes)
    }

    /// Waits in line from the chosen full time for the chosen length; back to the day saying where they stand.
    func wait(_ request: Request, roomId: RoomID) async throws -> Response {
        let person = try Access.person()
        var request = request
        let fields = try await request.formFields()
        let campus = await rooms.store.campusClock()
        guard let (date, time, minutes) = Self.time(fields) else {
            return try await page(request, roomId: roomId, status: .unprocessableContent, failure: "invalid")
        }
        let back = "/rooms/\(roomId)?date=\(date)"
        do {
            let (_, position) = try await rooms.wait(
                roomId: roomId.value, person: person, start: campus.instant(date, time), minutes: minutes, hold: .seat)
            return .seeOther("\(back)&waiting=\(position)")
        } catch let failure as ValidationFailure {
            return try await page(
                request, roomId: roomId, status: .unprocessableContent, failure: failure.errors.first?.message)
        } catch let problem as Problem where problem.status == .conflict {
            return .seeOther("\(back)&error=\(RoomDayPage.reason(problem))")
        }
    }

    func checkIn(roomId: RoomID, bookingId: BookingID) async throws -> Response {
        let person = try Access.person()
        do {
            guard
                let reservation = try await rooms.checkIn(
                    bookingId.value, roomId: roomId.value, owner: person.username)
            else { throw Problem.notFound("You have no such booking.") }
            let date = await rooms.store.campusClock().date(of: reservation.range.start)
            return .seeOther("/rooms/\(roomId)?date=\(date)&checkedin=1")
        } catch let problem as Problem where problem.status == .conflict {
            return .seeOther("/rooms/\(roomId)?error=\(RoomDayPage.reason(problem))")
        }
    }

    /// The door sign's page: check in to the booking you hold here now, in one tap.
    func door(_ request: Request, roomId: RoomID) async throws -> Response {
        guard let room = try await rooms.store.find(roomId.value) else {
            throw BookingRefusal.roomNotFound(roomId.value)
        }
        var current: Reservation?
        var next: Reservation?
        if let person = RequestInfo.current.person {
            current = try await rooms.reservations.current(owner: person.username, roomId: room.id)
            if current == nil {
                next = try await rooms.reservations.upcomingReservations(owner: person.username).first {
                    $0.roomId == room.id
                }
            }
        }
        let campus = await rooms.store.campusClock()
        return try web.page(request, template: "room-door", title: { $0("rooms.day.doorTitle", ["name": room.name]) }) {
            t in
            RoomDoorPage(
                roomId: room.id, heading: t("rooms.day.doorTitle", ["name": room.name]),
                booking: current.map { RoomDayPage.Mine($0, campus: campus, now: rooms.platform.clock.now, t: t) },
                // Why not now: their next booking here opens for check-in later; else when check-in is open at all.
                none: next.map {
                    t(
                        "rooms.day.doorLater",
                        [
                            "when": RoomDayPage.when($0.range.start, $0.range.end, campus: campus, t: t),
                            "time": campus.time(of: $0.range.start.addingTimeInterval(-CheckInWindow.opensBefore))
                                .description,
                        ])
                } ?? t("rooms.day.doorNone", ["name": room.name]),
                signInPath: "/signin?next=/rooms/\(room.id)/check-in")
        }
    }
}

/// The door sign's page.
struct RoomDoorPage {
    let roomId: String
    let heading: String
    let booking: RoomDayPage.Mine?
    let none: String
    let signInPath: String
}
