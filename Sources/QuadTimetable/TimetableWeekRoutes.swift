import Foundation
import Hummingbird
import QuadCore
import QuadPlatform

/// `/timetable/week?date=…`: a student's week at a glance (`CampusSettings.weekPlan`), the current week unless a
/// date is asked: days as columns on a tablet and a desk, a strip of days to swipe on a phone, today and now
/// marked, clashes flagged, days off named. Anyone else is told what the day view tells them.
struct TimetableWeekRoutes {
    let timetable: Timetable
    let web: WebShell

    func page(_ request: Request) async throws -> Response {
        let now = timetable.now
        let settings = try await timetable.settings()
        let today = settings.clock.date(of: now)
        // A date that does not parse shows the current week, as a room's day does.
        let date = request.uri.queryParameters.get("date").flatMap { LocalDate(String($0)) } ?? today
        var plan: WeekPlan?
        var notStudent = false
        if let person = RequestInfo.current.person {
            if let student = try await timetable.student(for: person) {
                plan = settings.weekPlan(of: date, classes: try await timetable.store.classes(student: student.id))
            } else {
                notStudent = true
            }
        }
        // The line marking now moves with the minute.
        let nextMinute = Date(timeIntervalSince1970: ((now.timeIntervalSince1970 / 60).rounded(.down) + 1) * 60)
        return try web.page(
            request, template: "timetable-week", title: { $0("timetable.weekTitle") },
            keptUntilChangeOf: [.notice(Timetable.noticeType)], keptUntil: { _ in nextMinute }
        ) { t in
            var page = TimetableWeekPage(signedOut: RequestInfo.current.person == nil, notStudent: notStudent)
            page.week = plan.map { Self.week($0, today: today, now: now, clock: settings.clock, t: t) }
            return page
        }
    }

    static func week(
        _ plan: WeekPlan, today: LocalDate, now: Date, clock: CampusClock, t: Localizer
    )
        -> TimetableWeekPage.Week
    {
        let hours = plan.lastHour - plan.firstHour
        // Hours from the grid's top, as the stylesheet places things.
        func offset(_ instant: Date) -> String {
            let time = clock.time(of: instant)
            return String(Double(time.hour - plan.firstHour) + Double(time.minute) / 60)
        }
        func name(_ meeting: ClassMeeting) -> String { "\(meeting.class.course) \(meeting.class.name)" }
        let nowHour = Double(clock.time(of: now).hour) + Double(clock.time(of: now).minute) / 60
        let nowInGrid = nowHour >= Double(plan.firstHour) && nowHour < Double(plan.lastHour)
        let days = plan.days.map { day in
            let isToday = day.date == today
            let showsNow = isToday && nowInGrid
            return TimetableWeekPage.Day(
                id: "day-\(day.date)", shortName: t.shortDay(day.date),
                dateText: t.longDate(day.date), isToday: isToday,
                dayOff: day.dayOff.map {
                    t("timetable.dayOffShort", ["name": $0.name.isEmpty ? t("timetable.breakFallback") : $0.name])
                },
                classes: day.classes.map { placed in
                    let meeting = placed.meeting
                    return TimetableWeekPage.Card(
                        id: meeting.class.id, name: name(meeting),
                        room: meeting.class.room, start: meeting.class.start.description,
                        end: meeting.class.end.description, from: offset(meeting.start),
                        length: String(meeting.end.timeIntervalSince(meeting.start) / 3600), lane: placed.lane,
                        lanes: placed.lanes, clash: placed.clashes,
                        clashText: placed.clashes
                            ? t(
                                "timetable.clashesWith", ["names": placed.clashesWith.map(name).joined(separator: ", ")]
                            )
                            : nil,
                        inProgress: meeting.isInProgress(at: now))
                },
                hasClasses: !day.classes.isEmpty,
                nowAt: showsNow ? offset(now) : nil,
                nowTime: showsNow ? clock.time(of: now).description : nil)
        }
        let clashes = plan.days.flatMap(\.classes).filter(\.clashes).count
        let path = "/timetable/week"
        let currentMonday = today.monday
        return TimetableWeekPage.Week(
            title: TimetableRoutes.weekText(plan.status, t: t),
            range: t("timetable.weekOf", ["date": t.longDate(plan.monday)]),
            previous: "\(path)?date=\(plan.monday.adding(days: -7))",
            next: "\(path)?date=\(plan.monday.adding(days: 7))",
            current: path, isCurrent: plan.monday == currentMonday, date: plan.monday.description,
            days: days,
            hours: (plan.firstHour..<plan.lastHour).map { LocalTime(hour: $0, minute: 0).description },
            hourCount: hours,
            clashNote: clashes > 0 ? t("timetable.clashes", count: clashes) : nil,
            empty: days.allSatisfy { !$0.hasClasses } ? t("timetable.noClassesThisWeek") : nil)
    }
}

/// What the week view's template shows (see `TimetableWeekRoutes`).
struct TimetableWeekPage {
    let signedOut: Bool
    let notStudent: Bool
    var week: Week?

    init(signedOut: Bool, notStudent: Bool) {
        self.signedOut = signedOut
        self.notStudent = notStudent
    }

    struct Week {
        /// "Week 8", or the break and when teaching resumes.
        let title: String
        /// "Week of Monday 23 March 2026".
        let range: String
        let previous: String
        let next: String
        let current: String
        let isCurrent: Bool
        /// The week's Monday, for the date field.
        let date: String
        let days: [Day]
        /// The grid's hour labels, "08:00" …, one an hour the grid spans.
        let hours: [String]
        let hourCount: Int
        let clashNote: String?
        let empty: String?
    }

    struct Day {
        let id: String
        let shortName: String
        let dateText: String
        let isToday: Bool
        let dayOff: String?
        let classes: [Card]
        let hasClasses: Bool
        /// Where the line marking now sits, in hours from the grid's top (today, within the grid's hours).
        let nowAt: String?
        let nowTime: String?
    }

    struct Card {
        let id: String
        let name: String
        let room: String
        let start: String
        let end: String
        /// Hours from the grid's top, and how many hours it lasts.
        let from: String
        let length: String
        let lane: Int
        let lanes: Int
        let clash: Bool
        let clashText: String?
        let inProgress: Bool
    }
}
