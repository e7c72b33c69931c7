import Foundation
import Hummingbird
import QuadCore
import QuadPlatform

/// `/rooms/{room}`: a room's day as the page says it. Every time is on the campus clock; what is free is
/// QuadCore's `RoomDay`.
struct RoomDayPage {
    /// What the page is made from, before it is put into words.
    struct Situation {
        var room: RoomRecord
        var day: RoomDay
        var policy: BookingPolicy
        var campus: CampusClock
        var today: LocalDate
        var now: Date
        /// The quarter hour the person chose to book from.
        var chosen: RoomDay.Slot?
        /// Their bookings in this room that touch the day.
        var mine: [Reservation]
        var query: Parameters
        /// Why the last form failed, when it is drawn again.
        var failure: String?
        var refreshSeconds: Int
    }

    let roomId: String
    let name: String
    let building: String
    let capacityText: String
    let spotsNowText: String
    let date: String
    let dateText: String
    let previousPath: String?
    let nextPath: String
    let todayPath: String?
    /// The date picker's bounds: today, and as far ahead as the building takes bookings.
    let dateMin: String
    let dateMax: String
    let hoursText: String
    let slots: [Slot]
    let booking: Booking?
    let mine: [Mine]
    /// Whether there are any (a section of the template, which reads stored values only).
    let hasSlots: Bool
    let hasMine: Bool
    let notice: RoomsRoutes.Notice?
    let refreshSeconds: Int
    let generatedAt: Int
    let doorPath: String

    struct Slot {
        let time: String
        let label: String
        let freeText: String
        /// `free`, `low`, `full` or `past`, for the colour (the words say it too).
        let state: String
        let bookable: Bool
        /// Full, and not over: one may wait in line for it.
        let waitable: Bool
        let waitLabel: String
        let path: String
        let chosen: Bool
    }

    /// The panel to wait in line from a full time: how long.
    let waiting: Waiting?

    struct Waiting {
        let date: String
        let start: String
        let heading: String
        /// The room and the day: "Mostafa · Tuesday 1 December 2026".
        let what: String
        let lengths: [Option]
    }

    /// Whether one may wait in line for `slot`: full now, and not begun.
    static func waitable(_ slot: RoomDay.Slot, current: Int) -> Bool {
        !slot.bookable && slot.freeSeats == 0 && slot.range.lower > current
    }

    /// The panel to book from the chosen time: how long, what, how often.
    struct Booking {
        let date: String
        let start: String
        let heading: String
        let what: String
        let lengths: [Option]
        let wholeRoom: Bool
        /// How many seats (a group's), at most those free then.
        let people: Int
        let maxPeople: Int
        let untilMax: String
        let untilDefault: String
    }

    struct Option {
        let value: Int
        let label: String
        let selected: Bool
    }

    /// One of the person's bookings here, with what they can do with it now.
    struct Mine {
        let id: String
        let roomId: String
        let when: String
        let checkedIn: Bool
        let checkInText: String?
        let canCheckIn: Bool
        let inSeries: Bool

        init(_ reservation: Reservation, campus: CampusClock, now: Date, t: Localizer) {
            id = reservation.id
            roomId = reservation.roomId
            let (start, end) = (reservation.range.start, reservation.range.end)
            when = RoomDayPage.when(start, end, campus: campus, t: t)
            checkedIn = reservation.checkedIn
            checkInText =
                reservation.checkedIn
                ? nil
                : reservation.checkInBy.map {
                    t("rooms.day.checkInBy", ["time": campus.time(of: $0).description])
                }
            // Offered only where the building asks for it (a deadline).
            canCheckIn =
                !reservation.checkedIn && reservation.checkInBy != nil
                && CheckInWindow.isOpen(start: start, end: end, at: now)
            inSeries = reservation.seriesId != nil
        }
    }

    init(_ situation: Situation, t: Localizer) {
        let (room, day, campus) = (situation.room, situation.day, situation.campus)
        let path = "/rooms/\(room.id)"
        roomId = room.id
        name = room.name
        building = room.building
        capacityText = t("rooms.capacity", count: room.capacity)
        spotsNowText = t("rooms.day.now", ["seats": RoomsPage.seatsFree(room.spots, of: room.seats, t: t)])
        date = day.date.description
        dateText = t.longDate(day.date)
        previousPath = day.date > situation.today ? "\(path)?date=\(day.date.adding(days: -1))" : nil
        nextPath = "\(path)?date=\(day.date.adding(days: 1))"
        todayPath = day.date == situation.today ? nil : path
        dateMin = situation.today.description
        dateMax = situation.today.adding(days: situation.policy.horizonDays).description
        hoursText =
            day.periods.isEmpty
            ? t("rooms.day.closed")
            : t("rooms.day.open", ["hours": day.periods.map(\.description).joined(separator: ", ")])
        let current = SlotRange.slot(containing: situation.now)
        // The length and group the finder asked for, when it led here.
        let wanted = Int(situation.query.get("minutes") ?? "").flatMap { $0 % 15 == 0 && $0 > 0 ? $0 : nil } ?? 30
        let what = t("rooms.day.bookWhat", ["room": room.name, "date": t.longDate(day.date)])
        let group = Int(situation.query.get("people") ?? "").flatMap { $0 >= 1 && $0 <= room.seats ? $0 : nil } ?? 1
        // The day opens at the opening time, or now: quarter hours already over are not listed.
        slots = day.slots.filter { $0.range.lower >= current }.map { slot in
            let time = campus.time(of: slot.range.start).description
            let (state, words) = Self.state(of: slot, current: current, t: t)
            return Slot(
                time: time, label: t("rooms.day.bookFrom", ["time": time]), freeText: words, state: state,
                bookable: slot.bookable, waitable: Self.waitable(slot, current: current),
                waitLabel: t("rooms.day.waitFrom", ["time": time]),
                path: "\(path)?date=\(day.date)&start=\(time)#book", chosen: slot == situation.chosen)
        }
        waiting = situation.chosen.flatMap { slot in
            guard !slot.bookable else { return nil }
            let start = campus.time(of: slot.range.start)
            let close = day.periods.first { $0.open <= start.minutes && start.minutes < $0.close }?.close ?? 1440
            let longest = min(situation.policy.maxMinutes, close - start.minutes)
            return Waiting(
                date: day.date.description, start: start.description,
                heading: t("rooms.day.waitHeading", ["time": start.description]), what: what,
                lengths: Self.lengths(from: slot.range.start, through: longest, wanted: wanted, campus: campus, t: t))
        }
        booking = situation.chosen.flatMap { slot in
            guard slot.bookable else { return nil }
            let start = campus.time(of: slot.range.start)
            // As long as the building allows, to the end of the opening period the time is in.
            let close = day.periods.first { $0.open <= start.minutes && start.minutes < $0.close }?.close ?? 1440
            let longest = min(situation.policy.maxMinutes, close - start.minutes)
            let lengths = Self.lengths(from: slot.range.start, through: longest, wanted: wanted, campus: campus, t: t)
            let lastDay = situation.today.adding(days: situation.policy.horizonDays)
            return Booking(
                date: day.date.description, start: start.description,
                heading: t("rooms.day.bookFrom", ["time": start.description]), what: what, lengths: lengths,
                wholeRoom: slot.empty, people: min(group, max(1, slot.freeSeats)), maxPeople: max(1, slot.freeSeats),
                untilMax: lastDay.description,
                untilDefault: min(day.date.adding(days: 28), lastDay).description)
        }
        mine = situation.mine.map { Mine($0, campus: campus, now: situation.now, t: t) }
        hasSlots = !slots.isEmpty
        hasMine = !mine.isEmpty
        notice = Self.notice(situation, t: t)
        refreshSeconds = situation.refreshSeconds
        generatedAt = Int(situation.now.timeIntervalSince1970 * 1000)
        doorPath = "\(path)/check-in"
    }

    /// What the last form did: `?booked=ID[&dates=N&of=M]`, `?checkedin=1`, `?error=…`, or the failure drawn again.
    static func notice(_ situation: Situation, t: Localizer) -> RoomsRoutes.Notice? {
        if let failure = situation.failure {
            return .init(
                kind: "error",
                text: failure == "invalid" || failure == "until"
                    ? t("rooms.day.invalid") : failure == "seats" ? t("rooms.day.invalidSeats") : failure)
        }
        let query = situation.query
        if let id = BookingID(query.get("booked")) {
            // What was booked, said in full when it is the person's own (a crafted link says only the room).
            let what = situation.mine.first { $0.id == id.value }.map {
                booked(
                    hold: $0.hold, seats: $0.seats, name: situation.room.name, start: $0.range.start,
                    end: $0.range.end, campus: situation.campus, t: t)
            }
            let text = what ?? t("rooms.bookedMessage", ["name": situation.room.name])
            if let booked = Int(query.get("dates") ?? ""), let total = Int(query.get("of") ?? "") {
                let series =
                    booked == total
                    ? t("rooms.day.seriesAll", count: total)
                    : t("rooms.day.seriesBooked", ["booked": String(booked), "total": String(total)])
                return .init(kind: booked == total ? "success" : "error", text: "\(text) \(series)")
            }
            return .init(kind: "success", text: text)
        }
        if query.get("checkedin") == "1" { return .init(kind: "success", text: t("rooms.day.checkedIn")) }
        if let position = Int(query.get("waiting") ?? ""), position > 0 {
            return .init(kind: "success", text: t("rooms.day.inLine", ordinal: position))
        }
        if let error = query.get("error"),
            [
                "full", "already", "closed", "taken", "early", "over", "held", "freeNow", "waiting",
            ].contains(error)
        {
            return .init(kind: "error", text: t("rooms.errors.\(error)"))
        }
        return nil
    }

    /// A quarter hour as the pages draw it, when the quarter hour now is `current`: its state for the colour
    /// (`past`, `full`, `free` when nobody holds any of it, else `low`) and its words ("3 seats free").
    static func state(of slot: RoomDay.Slot, current: Int, t: Localizer) -> (state: String, words: String) {
        if slot.range.lower < current { return ("past", t("rooms.day.past")) }
        if slot.freeSeats == 0 { return ("full", t("rooms.day.taken")) }
        return (slot.empty ? "free" : "low", t("rooms.day.seatsFree", count: slot.freeSeats))
    }

    /// "Booked 6 seats in Mostafa: Friday 28 November 2026, 10:00–10:30." (or a seat, or the whole room).
    static func booked(
        hold: Hold, seats: Int, name: String, start: Date, end: Date, campus: CampusClock, t: Localizer
    ) -> String {
        let when = when(start, end, campus: campus, t: t)
        return hold == .room
            ? t("rooms.bookedRoom", ["name": name, "when": when])
            : t("rooms.bookedSeats", count: seats, ["name": name, "when": when])
    }

    /// The lengths a booking from `start` may have, each saying when it would end ("30 minutes, until 10:30"),
    /// `wanted` chosen (or the longest, when shorter).
    static func lengths(
        from start: Date, through longest: Int, wanted: Int, campus: CampusClock, t: Localizer
    ) -> [Option] {
        stride(from: 15, through: longest, by: 15).map { minutes in
            let end = campus.time(of: start.addingTimeInterval(Double(minutes * 60))).description
            return Option(
                value: minutes, label: t("rooms.day.lengthUntil", ["length": length(minutes, t: t), "end": end]),
                selected: minutes == min(wanted, longest))
        }
    }

    /// A length as people say it: "45 minutes", "2 hours", "1 h 30 min".
    static func length(_ minutes: Int, t: Localizer) -> String {
        if minutes < 60 { return t("rooms.day.minutes", count: minutes) }
        if minutes % 60 == 0 { return t("rooms.day.hours", count: minutes / 60) }
        return t("rooms.day.hoursMinutes", ["hours": String(minutes / 60), "minutes": String(minutes % 60)])
    }

    /// "Tuesday 1 December 2026, 10:00–11:00", on the campus clock.
    static func when(_ start: Date, _ end: Date, campus: CampusClock, t: Localizer) -> String {
        t(
            "rooms.day.when",
            [
                "date": t.longDate(campus.date(of: start)), "start": campus.time(of: start).description,
                "end": campus.time(of: end).description,
            ])
    }

    /// A refusal as the page's `?error=` names it.
    static func reason(_ problem: Problem) -> String {
        let kinds = [
            "already-booked": "already", "room-closed": "closed", "slot-taken": "taken", "too-early": "early",
            "booking-over": "over", "series-unavailable": "taken", "held-for-line": "held", "free-now": "freeNow",
            "already-waiting": "waiting",
        ]
        return kinds.first { problem.type.hasSuffix($0.key) }?.value ?? "full"
    }
}
