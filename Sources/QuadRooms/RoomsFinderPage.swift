import Foundation
import Hummingbird
import QuadCore
import QuadPlatform

/// The finder on `/rooms`: a day, a start, a length and a number of people (`?date=&start=&minutes=&people=`),
/// answered with QuadCore's `RoomFinder`: the rooms that fit, each booked in one tap, and when the others are next
/// free. The form's defaults are today, the next quarter hour, 30 minutes and one person.
struct RoomsFinderPage {
    /// What was asked, read from the query.
    struct Ask: Equatable {
        var date: LocalDate
        var start: LocalTime
        var minutes: Int
        var people: Int

        /// The lengths offered: a building may allow less, and says so when booked.
        static let lengths = [15, 30, 45, 60, 90, 120, 180, 240]
        static let maxPeople = 500

        /// The defaults: today from the next quarter hour, for 30 minutes, for one.
        static func defaults(now: Date, campus: CampusClock) -> Ask {
            let next = SlotRange.instant(ofSlot: SlotRange.slot(containing: now) + 1)
            return Ask(date: campus.date(of: next), start: campus.time(of: next), minutes: 30, people: 1)
        }

        /// What `query` asks (nil: it asks nothing), or `.failure` when a field is given but cannot be read.
        static func read(_ query: Parameters, today: LocalDate, defaults: Ask) -> Result<Ask, Invalid>? {
            let keys = ["date", "start", "minutes", "people"]
            guard keys.contains(where: { query.get($0) != nil }) else { return nil }
            var ask = defaults
            if let text = query.get("date") {
                guard let date = LocalDate(text), date >= today else { return .failure(Invalid()) }
                ask.date = date
            }
            if let text = query.get("start") {
                guard let time = LocalTime(text), time.minutes % 15 == 0 else { return .failure(Invalid()) }
                ask.start = time
            }
            if let text = query.get("minutes") {
                guard let minutes = Int(text), lengths.contains(minutes) else { return .failure(Invalid()) }
                ask.minutes = minutes
            }
            if let text = query.get("people") {
                guard let people = Int(text.trimmingCharacters(in: .whitespaces)), (1...maxPeople).contains(people)
                else { return .failure(Invalid()) }
                ask.people = people
            }
            return .success(ask)
        }

        /// The quarter hours asked for, on the campus clock (nil: a time the clocks skip that day).
        func range(campus: CampusClock) -> SlotRange? {
            let instant = campus.instant(date, start)
            guard campus.time(of: instant) == start, let lower = SlotRange.slot(at: instant) else { return nil }
            return SlotRange(lower: lower, upper: lower + minutes / 15)
        }
    }

    struct Invalid: Error {}

    struct Option {
        let value: String
        let label: String
        let selected: Bool
    }

    /// A room in the answer: one that fits, with its Book button, or one that does not, with when it is next free.
    struct Found {
        let id: String
        let name: String
        let building: String
        let seatsText: String
        /// `seat` or `room`: what Book takes.
        let hold: String
        let bookLabel: String
        let nextText: String?
        let nextPath: String?
    }

    // The form.
    let date: String
    let dateMin: String
    let dateMax: String
    let starts: [Option]
    let lengths: [Option]
    let people: Int
    let maxPeople: Int
    // The answer (none until something is asked).
    let asked: Bool
    let error: String?
    let heading: String?
    let when: String?
    let start: String
    let minutes: Int
    /// Signing in comes back to this question.
    let signInPath: String
    let fitting: [Found]
    let others: [Found]
    let hasFitting: Bool
    let hasOthers: Bool

    /// `answer`: what `RoomFinder` found for `ask` (nil when nothing was asked, or it could not be read).
    init(
        ask: Ask, asked: Bool, invalid: Bool, answer: (fitting: [RoomFinder.Choice], others: [RoomFinder.Choice])?,
        records: [RoomRecord], today: LocalDate, horizonDays: Int, campus: CampusClock, t: Localizer
    ) {
        date = ask.date.description
        dateMin = today.description
        dateMax = today.adding(days: horizonDays).description
        starts = stride(from: 0, to: 1440, by: 15).map { minute in
            let time = LocalTime(hour: minute / 60, minute: minute % 60).description
            return Option(value: time, label: time, selected: minute == ask.start.minutes)
        }
        lengths = Ask.lengths.map {
            Option(value: String($0), label: RoomDayPage.length($0, t: t), selected: $0 == ask.minutes)
        }
        people = ask.people
        maxPeople = Ask.maxPeople
        self.asked = asked
        error = invalid ? t("rooms.find.invalid", ["max": String(Ask.maxPeople)]) : nil
        start = ask.start.description
        minutes = ask.minutes
        let question = "/rooms?date=\(ask.date)&start=\(ask.start)&minutes=\(ask.minutes)&people=\(ask.people)"
        signInPath = "/signin?next=" + (question.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
        let range = ask.range(campus: campus)
        let when = range.map { RoomDayPage.when($0.start, $0.end, campus: campus, t: t) }
        self.when = when
        heading = answer == nil ? nil : t("rooms.find.results", count: ask.people, ["when": when ?? ""])
        let byId = Dictionary(uniqueKeysWithValues: records.map { ($0.id, $0) })
        let people = ask.people
        fitting = (answer?.fitting ?? []).compactMap { choice in
            byId[choice.id].map { room in
                let whole = choice.hold == .room
                return Found(
                    id: room.id, name: room.name, building: room.building,
                    seatsText: whole
                        ? t("rooms.find.wholeRoom", count: room.capacity)
                        : RoomsPage.seatsFree(choice.freeSeats, of: room.seats, t: t),
                    hold: whole ? "room" : "seat",
                    bookLabel: whole ? t("rooms.find.bookRoom") : t("rooms.find.book", count: people),
                    nextText: nil, nextPath: nil)
            }
        }
        others = (answer?.others ?? []).compactMap { choice in
            byId[choice.id].map { room in
                let next = choice.nextFree.map { campus.time(of: $0).description }
                return Found(
                    id: room.id, name: room.name, building: room.building,
                    seatsText: RoomsPage.seatsFree(choice.freeSeats, of: room.seats, t: t),
                    hold: "seat", bookLabel: "",
                    nextText: next.map { t("rooms.find.nextFree", ["time": $0]) } ?? t("rooms.find.notThatDay"),
                    nextPath: next.map {
                        "/rooms/\(room.id)?date=\(ask.date)&start=\($0)&minutes=\(ask.minutes)&people=\(ask.people)#book"
                    })
            }
        }
        hasFitting = !fitting.isEmpty
        hasOthers = !others.isEmpty
    }
}
