import Foundation
import Hummingbird
import QuadCore
import QuadPlatform

/// The `/rooms` web app: a page that works without JavaScript
/// (forms, CSRF-protected) and that `rooms.js` makes live.
struct RoomsRoutes {
    let rooms: Rooms
    let web: WebShell

    func register(on routes: Routes) {
        routes.on(.get, "/rooms", .public) { request, _ in try await self.page(request) }
        routes.on(.post, "/rooms/:roomId/book", .member) { request, context in
            try await self.book(request, roomId: Self.roomId(context))
        }
        routes.on(.post, "/rooms/:roomId/bookings/:bookingId/cancel", .owner) { request, context in
            guard let bookingId = BookingID(context.parameters.get("bookingId")) else {
                throw Problem.notFound("There is no such booking.")
            }
            return try await self.cancel(request, roomId: Self.roomId(context), bookingId: bookingId)
        }
    }

    /// The room of the path, parsed: 404 for anything that is not a room id.
    static func roomId(_ context: AppRequestContext) throws -> RoomID {
        guard let id = RoomID(context.parameters.get("roomId")) else {
            throw Problem.notFound("There is no such room.")
        }
        return id
    }

    // MARK: Pages

    struct Notice {
        var kind: String
        var text: String
        var cancelAction: String?
        var roomName: String?
    }

    func page(_ request: Request) async throws -> Response {
        let records = try await rooms.kept.rooms()
        var mine: [(booking: Booking, roomName: String)] = []
        if let person = RequestInfo.current.person { mine = try await rooms.bookings(of: person) }
        let query = request.uri.queryParameters
        let names = Dictionary(uniqueKeysWithValues: records.map { ($0.id, $0.name) })
        let configuration = rooms.platform.configuration
        let campus = await rooms.store.campusClock()
        let now = rooms.platform.clock.now
        let openings = try await rooms.openings(at: now)
        let bookable = try await rooms.bookableNow(at: now)
        let finder = try await self.finder(query: query, records: records, campus: campus, now: now)

        return try web.page(
            request, template: "rooms", title: { $0("rooms.title") }, strings: Self.scriptStrings,
            fragments: ["live": "rooms-live", "found": "rooms-found"], keptUntilChangeOf: [.event(.room)],
            // A closed room's card says when it opens: until then; the finder's default start is the next quarter
            // hour: until it begins.
            keptUntil: { _ in
                ([SlotRange.instant(ofSlot: SlotRange.slot(containing: now) + 1)] + openings.values).min()
            }
        ) { t in
            // A card offers to cancel the booking held there now.
            let booked = Dictionary(
                mine.filter { ($0.booking.start ?? now) <= now }.map { ($0.booking.roomId, $0.booking.id) },
                uniquingKeysWith: { first, _ in first })
            let cards = records.map {
                RoomsPage.Card(
                    $0.room(baseURL: ""), photo: $0.photo, bookingId: booked[$0.id],
                    opens: openings[$0.id].map { Self.opens($0, campus: campus, now: now, t: t) },
                    lengths: bookable[$0.id].map {
                        Self.lengths($0.range, maxMinutes: $0.maxMinutes, campus: campus, t: t)
                    } ?? [], start: bookable[$0.id]?.range.start, t: t)
            }
            return RoomsPage(
                available: cards.filter { !$0.isFull }, full: cards.filter(\.isFull), hasRooms: !records.isEmpty,
                myBookings: mine.map { .init($0.booking, roomName: $0.roomName, campus: campus, now: now, t: t) },
                refreshSeconds: configuration.refreshSeconds,
                generatedAt: Int(rooms.platform.clock.now.timeIntervalSince1970 * 1000),
                notice: Self.notice(query: query, names: names, mine: mine.map(\.booking), campus: campus, t: t),
                finder: finder(t))
        }
    }

    /// The finder's form and, when something was asked, the rooms `RoomFinder` found for it.
    func finder(
        query: Parameters, records: [RoomRecord], campus: CampusClock, now: Date
    ) async throws -> @Sendable (Localizer) -> RoomsFinderPage {
        let today = campus.date(of: now)
        var ask = RoomsFinderPage.Ask.defaults(now: now, campus: campus)
        var invalid = false
        var answer: (fitting: [RoomFinder.Choice], others: [RoomFinder.Choice])?
        switch RoomsFinderPage.Ask.read(query, today: today, defaults: ask) {
        case .success(let asked)?:
            ask = asked
            if let range = asked.range(campus: campus) {
                answer = try await rooms.find(range: range, people: asked.people)
            } else {
                invalid = true
            }
        case .failure?: invalid = true
        case nil: break
        }
        let horizon = try await rooms.horizonDays()
        return { [ask, invalid, answer] t in
            RoomsFinderPage(
                ask: ask, asked: answer != nil || invalid, invalid: invalid, answer: answer, records: records,
                today: today, horizonDays: horizon, campus: campus, t: t)
        }
    }

    /// How long a booking from now may last, each saying its end: to the close (the default, the original apps'
    /// booking), or 30, 60 or 90 minutes where the building allows that and it ends sooner.
    static func lengths(_ rest: SlotRange, maxMinutes: Int, campus: CampusClock, t: Localizer) -> [RoomsPage.Length] {
        let closing = campus.time(of: rest.end)
        let close = RoomsPage.Length(
            minutes: "",
            label: closing.minutes == 0
                ? t("rooms.untilMidnight") : t("rooms.untilClose", ["time": closing.description]))
        return [close]
            + [30, 60, 90].filter { $0 <= maxMinutes && rest.lower + $0 / 15 < rest.upper }.map { minutes in
                let end = campus.time(of: rest.start.addingTimeInterval(Double(minutes * 60))).description
                return RoomsPage.Length(
                    minutes: String(minutes),
                    label: t("rooms.day.lengthUntil", ["length": RoomDayPage.length(minutes, t: t), "end": end]))
            }
    }

    /// "Opens at 08:00", "Opens tomorrow at 08:00", "Opens Monday 30 November at 08:00".
    static func opens(_ instant: Date, campus: CampusClock, now: Date, t: Localizer) -> String {
        let date = campus.date(of: instant)
        let time = campus.time(of: instant).description
        let today = campus.date(of: now)
        if date == today { return t("rooms.opens.today", ["time": time]) }
        if date == today.adding(days: 1) { return t("rooms.opens.tomorrow", ["time": time]) }
        return t("rooms.opens.later", ["date": t.longDate(date), "time": time])
    }

    /// What the last form did, from `?booked=ROOM&booking=ID`, `?cancelled=ROOM` or `?error=…`: only known rooms,
    /// and a cancel button only for a booking of the person's own, so a crafted link cannot aim the button.
    private static func notice(
        query: Parameters, names: [String: String], mine: [Booking], campus: CampusClock, t: Localizer
    ) -> Notice? {
        if let room = RoomID(query.get("booked")), let name = names[room.value] {
            let booking = BookingID(query.get("booking")).flatMap { id in
                mine.first { $0.id == id.value && $0.roomId == room.value }
            }
            let action = booking.map { "/rooms/\($0.roomId)/bookings/\($0.id)/cancel" }
            let text =
                booking.flatMap { booking in
                    booking.start.flatMap { start in
                        booking.end.map { end in
                            RoomDayPage.booked(
                                hold: booking.hold ?? .seat, seats: booking.seats ?? 1, name: name, start: start,
                                end: end, campus: campus, t: t)
                        }
                    }
                } ?? t("rooms.bookedMessage", ["name": name])
            return Notice(kind: "success", text: text, cancelAction: action, roomName: name)
        }
        if let room = RoomID(query.get("cancelled")), let name = names[room.value] {
            return Notice(kind: "success", text: t("rooms.cancelledMessage", ["name": name]))
        }
        switch query.get("error") {
        case "full": return Notice(kind: "error", text: t("rooms.errors.full"))
        case "already": return Notice(kind: "error", text: t("rooms.errors.already"))
        case "closed": return Notice(kind: "error", text: t("rooms.errors.closed"))
        case "invalid": return Notice(kind: "error", text: t("rooms.day.invalid"))
        default: return nil
        }
    }

    /// The strings `rooms.js` needs, in the page's language (every other text comes drawn by the server).
    static let scriptStrings = ScriptStrings([
        "rooms.book", "rooms.booking", "rooms.offline", "rooms.errors.full", "rooms.errors.already",
        "rooms.errors.network", "rooms.errors.failed", "rooms.bookedMessage", "rooms.cancelledMessage",
        "rooms.errors.cancelFailed", "rooms.signInToBook",
    ])

    // MARK: Forms (no JavaScript needed)

    func book(_ request: Request, roomId: RoomID) async throws -> Response {
        let person = try Access.person()
        var request = request
        // A length chosen: from the quarter hour now falls in, for that long; none: until the building closes.
        let minutes = try await request.formFields()["minutes"].flatMap { Int($0) }
        do {
            let booking: Booking
            if let minutes {
                let now = SlotRange.instant(ofSlot: SlotRange.slot(containing: rooms.platform.clock.now))
                booking = try await rooms.book(
                    roomId: roomId.value, owner: person, start: now, minutes: minutes, hold: .seat, recurrence: nil
                ).booking
            } else {
                booking = try await rooms.book(roomId: roomId.value, owner: person).booking
            }
            return .seeOther("/rooms?booked=\(roomId)&booking=\(booking.id)")
        } catch let failure as ValidationFailure {
            // The time has passed or runs past the close; else the length could not be read.
            return .seeOther("/rooms?error=\(failure.errors.first?.field == "start" ? "closed" : "invalid")")
        } catch let problem as Problem where problem.status == .conflict {
            let reason =
                problem.type.hasSuffix("already-booked")
                ? "already" : problem.type.hasSuffix("room-closed") ? "closed" : "full"
            return .seeOther("/rooms?error=\(reason)")
        }
    }

    func cancel(_ request: Request, roomId: RoomID, bookingId: BookingID) async throws -> Response {
        let person = try Access.person()
        var request = request
        let following = try await request.formFields()["following"] == "1"
        _ = try await rooms.cancel(bookingId.value, roomId: roomId.value, by: person, following: following)
        return .seeOther("/rooms?cancelled=\(roomId)")
    }
}

/// `/rooms`: the rooms with free spots first, then the full ones, and the person's bookings.
struct RoomsPage {
    let available: [Card]
    let full: [Card]
    let hasRooms: Bool
    let myBookings: [MyBooking]
    let refreshSeconds: Int
    /// When the page was made (ms since 1970), for the freshness line.
    let generatedAt: Int
    let notice: RoomsRoutes.Notice?
    let finder: RoomsFinderPage

    /// One room, as QuadCore's rules see it (availability) and as the page says it.
    struct Card {
        let id: String
        let name: String
        let building: String
        let spots: Int
        let capacity: Int
        let availability: String
        let isFull: Bool
        let stateLabel: String
        let spotsText: String
        let capacityText: String
        /// What a screen reader hears when the room's spots change while the page is open.
        let announce: String
        let photo: String?
        let bookingId: String?
        /// How long to book from now (none while closed).
        let lengths: [Length]
        /// The first quarter hour of a booking from now, for the script's booking through the API.
        let start: String?

        /// `opens`: its building is closed now, and opens then ("Opens at 08:00").
        init(
            _ room: Room, photo: String?, bookingId: String?, opens: String?, lengths: [Length] = [],
            start: Date? = nil,
            t: Localizer
        ) {
            id = room.id
            name = room.name
            building = room.building
            spots = room.spots
            capacity = room.capacity
            availability = room.availability.rawValue
            isFull = room.availability == .full || opens != nil
            stateLabel = opens == nil ? t("rooms.state.\(room.availability.rawValue)") : t("rooms.state.closed")
            spotsText = opens ?? RoomsPage.seatsFree(room.spots, of: room.seats ?? room.capacity, t: t)
            capacityText = t("rooms.capacity", count: room.capacity)
            announce = t("rooms.announce", ["name": room.name, "spots": spotsText])
            self.photo = photo
            self.bookingId = bookingId
            self.lengths = lengths
            self.start = start.map { Timestamp.string($0) }
        }
    }

    /// "3 of 4 seats free", or "No seats to book" in a room that offers none: one way everywhere, beside "Holds 12
    /// people".
    static func seatsFree(_ free: Int, of seats: Int, t: Localizer) -> String {
        seats <= 0 ? t("rooms.noSeats") : t("rooms.seatsOf", count: free, ["seats": String(seats)])
    }

    /// A length offered on a card: "" is until the building closes.
    struct Length {
        let minutes: String
        let label: String
    }

    struct MyBooking {
        let id: String
        let roomId: String
        let roomName: String
        /// When it is, on the campus clock (none for a booking made before rooms had time).
        let when: String?
        let date: String?
        /// It asks to be checked in, and can be now (from a quarter hour before it starts until it ends, once).
        let canCheckIn: Bool
        let inSeries: Bool

        init(_ booking: Booking, roomName: String, campus: CampusClock, now: Date, t: Localizer) {
            id = booking.id
            roomId = booking.roomId
            self.roomName = roomName
            inSeries = booking.seriesId != nil
            if let start = booking.start, let end = booking.end {
                when = RoomDayPage.when(start, end, campus: campus, t: t)
                date = campus.date(of: start).description
                // Offered only where the building asks for it (a deadline).
                canCheckIn = booking.checkInBy != nil && CheckInWindow.isOpen(start: start, end: end, at: now)
            } else {
                when = nil
                date = nil
                canCheckIn = false
            }
        }
    }
}
