import Foundation
import QuadCore
import QuadPlatform

/// The Timetable's part of a student's day: their next class (where, when, "in 25 minutes"; on a day without classes
/// left, when the next one is), the next shuttles and the car parks. Someone who is not a student has none.
extension Timetable: TodayPart {
    /// As many shuttles as a day lists.
    static let shuttlesShown = 3

    /// Car parks' readings, departures' predictions and the timetable's settings, as for its own page.
    package var todayChanges: [HubChange] { Self.changeTypes }

    package func today(for person: Person?, at now: Date, t: Localizer) async throws -> [TodaySection] {
        guard let person, let student = try await student(for: person) else { return [] }
        async let readSettings = settings()
        async let readClasses = store.classes(student: student.id)
        async let readCarParks = store.carParks()
        let settings = try await readSettings
        let clock = settings.clock
        let departures = try await self.departures(settings: settings, at: now)
        let plan = settings.plan(now: now, classes: try await readClasses)
        let stops = TimetableAPI.stops(
            departures, now: now, clock: clock, limit: Self.shuttlesShown, first: Set(student.stops))
        let timetable = TodayLink(label: t("timetable.today.classes.more"), path: "/timetable")
        return [
            TodaySection(
                key: .classes, title: t("timetable.today.classes.title"), empty: t("timetable.noClasses"),
                more: timetable,
                items: plan.meetings.first { $0.end > now }.map {
                    [Self.todayItem($0, plan: plan, clock: clock, now: now, t: t)]
                }
                    ?? []),
            TodaySection(
                key: .shuttles, title: t("timetable.shuttleHeading"), empty: t("timetable.noDepartures"),
                more: timetable,
                items: stops.map { stop in
                    let leaves = Timestamp.date(stop.expectedAt) ?? now
                    return TodayItem(
                        id: stop.id,
                        title: t("timetable.today.shuttles.route", ["from": stop.departure, "to": stop.arrival]),
                        detail: stop.cancelled == true
                            ? t("timetable.today.shuttles.cancelled", ["time": clock.time(of: leaves).description])
                            : t(
                                "timetable.today.shuttles.detail",
                                [
                                    "time": clock.time(of: leaves).description,
                                    "in": Countdown(from: now, to: leaves).words(t),
                                    "mode": TimetableRoutes.modeLabel(stop, t: t),
                                ]),
                        path: "/timetable", startsAt: leaves)
                }),
            TodaySection(
                key: .parkings, title: t("timetable.parkingHeading"), empty: t("timetable.noParkings"),
                more: timetable,
                items: try await readCarParks.map { TimetableAPI.parking($0, now: now) }.map { park in
                    TodayItem(
                        id: park.id, title: park.name,
                        detail: t(
                            "timetable.today.parkings.detail",
                            [
                                "free": t("timetable.freePlaces", count: park.slot),
                                "of": t("timetable.of", ["capacity": String(park.capacity)]),
                                "state": t("timetable.state.\(park.state.rawValue)"),
                            ]),
                        path: "/timetable")
                }),
        ]
    }

    /// The next class: today's in words ("in 25 minutes", or in progress until its end), another day's with its date.
    static func todayItem(
        _ meeting: ClassMeeting, plan: DayPlan, clock: CampusClock, now: Date, t: Localizer
    ) -> TodayItem {
        let item = meeting.class
        let time = t(
            "timetable.today.classes.time",
            [
                "start": clock.time(of: meeting.start).description, "end": clock.time(of: meeting.end).description,
            ])
        let when: String
        if meeting.isInProgress(at: now) {
            when = t("timetable.inProgress")
        } else if plan.kind == .today {
            let minutes = Int(meeting.start.timeIntervalSince(now)) / 60
            // Counted down within the hour; later today, its time says enough.
            when = minutes < 60 ? t("timetable.minutes", count: minutes) : t("timetable.today.day.today")
        } else {
            when = t.longDate(meeting.date)
        }
        return TodayItem(
            id: "\(item.id)-\(meeting.date)", title: "\(item.course) \(item.name)",
            detail: t("timetable.today.classes.detail", ["when": when, "time": time, "room": item.room]),
            path: "/timetable", startsAt: meeting.start, endsAt: meeting.end)
    }
}
