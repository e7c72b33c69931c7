import Foundation
import Hummingbird
import QuadCore
import QuadPlatform

/// `/rooms-timeline`: every room's day side by side, for tablets and desktops: a table with a row per room and a
/// column per quarter hour from the earliest opening to the latest closing. Each free quarter hour links to the
/// room's day with the booking panel open there; a room's name links to its day as a list.
struct RoomsTimelineRoutes {
    let rooms: Rooms
    let web: WebShell

    func register(on routes: Routes) {
        routes.on(.get, "/rooms-timeline", .public) { request, _ in try await self.page(request) }
    }

    func page(_ request: Request) async throws -> Response {
        let campus = await rooms.store.campusClock()
        let now = rooms.platform.clock.now
        let today = campus.date(of: now)
        let date = LocalDate(request.uri.queryParameters.get("date") ?? "").map { max($0, today) } ?? today
        let records = try await rooms.store.all().sorted { $0.name.lowercased() < $1.name.lowercased() }
        let horizon = try await rooms.horizonDays()
        let occupancies = try await rooms.reservations.occupancies(during: RoomDay.span(of: date, clock: campus))
        var days: [(RoomRecord, RoomDay)] = []
        for record in records {
            let day = RoomDay(
                date: date, policy: try await rooms.policy(record.id),
                occupancy: occupancies[record.id] ?? Occupancy(seats: 0), clock: campus, now: now)
            days.append((record, day))
        }
        return try web.page(
            request, template: "rooms-timeline", title: { $0("rooms.timeline.title") },
            keptUntilChangeOf: [.event(.room)]
        ) { t in
            RoomsTimelinePage(days: days, date: date, today: today, horizon: horizon, campus: campus, now: now, t: t)
        }
    }
}

/// The timeline's words and cells.
struct RoomsTimelinePage {
    let dateText: String
    let previousPath: String?
    let nextPath: String
    /// The date picker: the day shown, and from today to the furthest any building takes bookings.
    let date: String
    let dateMin: String
    let dateMax: String
    let hours: [Hour]
    let rows: [Row]
    let hasRows: Bool

    struct Hour {
        let label: String
    }

    struct Row {
        let id: String
        let name: String
        /// "4 seats": what a row's colours are out of.
        let seatsText: String
        let path: String
        let cells: [Cell]
    }

    struct Cell {
        /// `free`, `low`, `full`, `past` or `closed`.
        let state: String
        let label: String
        let path: String?
        /// The quarter hour now falls in.
        let now: Bool
    }

    init(
        days: [(RoomRecord, RoomDay)], date: LocalDate, today: LocalDate, horizon: Int, campus: CampusClock, now: Date,
        t: Localizer
    ) {
        dateText = t.longDate(date)
        self.date = date.description
        dateMin = today.description
        dateMax = today.adding(days: horizon).description
        previousPath = date > today ? "/rooms-timeline?date=\(date.adding(days: -1))" : nil
        nextPath = "/rooms-timeline?date=\(date.adding(days: 1))"
        // From the earliest opening to the latest closing of any room that day, whole hours.
        let periods = days.flatMap(\.1.periods)
        let open = (periods.map(\.open).min() ?? 480) / 60 * 60
        let close = min(1440, ((periods.map(\.close).max() ?? 1200) + 59) / 60 * 60)
        hours = stride(from: open, to: close, by: 60).map { Hour(label: LocalTime(hour: $0 / 60).description) }
        let current = SlotRange.slot(containing: now)
        let nowMinute = date == today ? campus.time(of: now).minutes / 15 * 15 : nil
        rows = days.map { record, day in
            let byTime = Dictionary(
                day.slots.map { (campus.time(of: $0.range.start).minutes, $0) }, uniquingKeysWith: { first, _ in first }
            )
            let cells = stride(from: open, to: close, by: 15).map { minute -> Cell in
                let time = LocalTime(hour: minute / 60, minute: minute % 60).description
                guard let slot = byTime[minute] else {
                    return Cell(
                        state: "closed", label: t("rooms.timeline.closed", ["time": time]), path: nil,
                        now: minute == nowMinute)
                }
                let (state, words) = RoomDayPage.state(of: slot, current: current, t: t)
                return Cell(
                    state: state, label: "\(time), \(words)",
                    path: slot.bookable ? "/rooms/\(record.id)?date=\(date)&start=\(time)#book" : nil,
                    now: minute == nowMinute)
            }
            return Row(
                id: record.id, name: record.name, seatsText: t("rooms.timeline.capacity", count: record.seats),
                path: "/rooms/\(record.id)?date=\(date)", cells: cells)
        }
        hasRows = !rows.isEmpty
    }
}
