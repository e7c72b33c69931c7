import Foundation
import Hummingbird
import QuadCore
import QuadPlatform

/// The `/timetable` web app (a page that works without JavaScript and that `timetable.js` keeps live)
/// and the admin pages at `/admin/timetable`.
struct TimetableRoutes {
    let timetable: Timetable
    let web: WebShell

    func register(on routes: Routes) {
        routes.on(.get, "/timetable", .public) { request, _ in try await self.page(request) }
        routes.on(.get, "/timetable/week", .public) { request, _ in
            try await TimetableWeekRoutes(timetable: timetable, web: web).page(request)
        }
        routes.on(.post, "/timetable/calendar", .member, audit: true) { request, _ in try await self.rotate(request) }
        routes.on(.post, "/timetable/stops", .member) { request, _ in try await self.chooseStops(request) }
        TimetableAdminRoutes(timetable: timetable, web: web).register(on: routes)
    }

    static func locale(_ language: Language) -> Locale {
        Locale(identifier: language == .french ? "fr_FR" : "en_AU")
    }

    /// "Friday 13 March 2020" / "vendredi 13 mars 2020".
    static func longDate(_ date: LocalDate, zone: TimeZone, language: Language) -> String {
        Localizer(language: language).longDate(date)
    }

    /// What the signed-in student's page shows, before it is put into words.
    struct StudentView {
        var student: StudentRecord
        var payload: ScheduleResponse
        var plan: DayPlan
        var settings: CampusSettings
        var today: LocalDate
        var now: Date
        var link: TimetableAPI.CalendarLink
        /// The feed's boarding stops the student may choose among.
        var stopChoices: [GTFSSchedule.Stop]
    }

    /// What everyone may see (car parks and the next shuttles are not personal): the page shows them to
    /// visitors and to accounts without a student.
    struct PublicLive {
        var parkings: [ScheduleResponse.Parking]
        var stops: [ScheduleResponse.Stop]
    }

    /// As many departures as a student's page shows.
    static let stopLimit = 6

    func page(_ request: Request) async throws -> Response {
        var view: StudentView?
        var notStudent = false
        let now = timetable.now
        let settings = try await timetable.settings()
        // Until when the live data reads the same (`ScheduleResponse.validUntil`): the page may be kept until then.
        var validUntil = now
        if let person = RequestInfo.current.person {
            if let student = try await timetable.student(for: person) {
                let today = settings.clock.date(of: now)
                let schedule = try await timetable.scheduleAndExpiry(for: student, date: today)
                validUntil = schedule.validUntil
                view = StudentView(
                    student: student, payload: schedule.payload,
                    plan: settings.plan(now: now, classes: try await timetable.store.classes(student: student.id)),
                    settings: settings, today: today, now: now,
                    link: TimetableAPI.calendarLink(
                        baseURL: request.baseURL(trustProxy: timetable.platform.configuration.trustProxy),
                        student: student),
                    stopChoices: try await timetable.boardingStops())
            } else {
                notStudent = true
            }
        }
        var live: PublicLive?
        if view == nil {
            let carParks = try await timetable.store.carParks()
            let departures = try await timetable.departures(settings: settings, at: now)
            validUntil = ScheduleResponse.validUntil(
                settings: settings, now: now, carParks: carParks, departures: departures)
            live = PublicLive(
                parkings: carParks.map { TimetableAPI.parking($0, now: now) },
                stops: TimetableAPI.stops(departures, now: now, clock: settings.clock, limit: Self.stopLimit))
        }
        let language = web.language(for: request)
        let rotated = request.uri.queryParameters.get("rotated") != nil
        let stopsSaved = request.uri.queryParameters.get("stops") == "saved"
        let refreshSeconds = timetable.platform.configuration.refreshSeconds
        return try web.page(
            request, template: "timetable", title: { $0("timetable.title") },
            fragments: ["live": "timetable-live"], keptUntilChangeOf: Timetable.changeTypes,
            keptUntil: { page in page.changes(after: now).map { min($0, validUntil) } ?? validUntil }
        ) { t in
            var page = TimetablePage(refreshSeconds: refreshSeconds, generatedAt: now)
            if let view {
                page.show(Self.day(view, t: t, language: language))
                page.source = "schedules"
                page.rotated = rotated
                page.stopsSaved = stopsSaved
            } else if let live {
                let lists = Self.live(parkings: live.parkings, stops: live.stops, now: now, clock: settings.clock, t: t)
                page.parkings = lists.parkings
                page.stops = lists.stops
                page.source = "public"
                page.notStudent = notStudent
                page.signedOut = !notStudent
            }
            return page
        }
    }

    /// The car parks and shuttles as the page's lists show them.
    static func live(
        parkings: [ScheduleResponse.Parking], stops: [ScheduleResponse.Stop], now: Date, clock: CampusClock,
        t: Localizer
    ) -> (parkings: [TimetablePage.Parking], stops: [TimetablePage.Stop]) {
        let parkings = parkings.map { park in
            TimetablePage.Parking(
                id: park.id, name: park.name, free: park.slot, capacity: park.capacity,
                freeText: t("timetable.freePlaces", count: park.slot),
                ofText: t("timetable.of", ["capacity": String(park.capacity)]), state: park.state.rawValue,
                stateLabel: t("timetable.state.\(park.state.rawValue)"), live: park.live,
                liveLabel: park.live ? t("timetable.live") : t("timetable.notLive"), updatedAt: park.updatedAt,
                // Past this, the reading is too old to believe: the page says so without asking again.
                liveUntil: park.updatedAt.flatMap(Timestamp.date).map {
                    $0.addingTimeInterval(Freshness.readingLimit).milliseconds
                })
        }
        let stops = stops.map { stop in
            let expected = Timestamp.date(stop.expectedAt) ?? now
            let cancelled = stop.cancelled == true
            // Drawn again when the words change, and when a live prediction stops being believed.
            let redraw = [Countdown.nextChange(from: now, to: expected) ?? expected, stop.liveUntil].compactMap { $0 }
            return TimetablePage.Stop(
                id: stop.id, from: stop.departure, to: stop.arrival, time: clock.time(of: expected).description,
                expectedAt: stop.expectedAt, leavesAt: expected.milliseconds,
                countdown: cancelled ? "" : Countdown(from: now, to: expected).words(t),
                wordsChangeAt: (redraw.min() ?? expected).milliseconds,
                // A cancelled bus has nothing to count down to.
                ticksFrom: cancelled ? nil : expected.addingTimeInterval(-Countdown.tickingWithin).milliseconds,
                live: stop.live, cancelled: cancelled, modeLabel: modeLabel(stop, t: t))
        }
        return (parkings, stops)
    }

    /// "Live", "Live · 3 min late", "Scheduled", "Cancelled".
    static func modeLabel(_ stop: ScheduleResponse.Stop, t: Localizer) -> String {
        if stop.cancelled == true { return t("timetable.cancelled") }
        guard stop.live else { return t("timetable.scheduled") }
        guard let late = stop.lateBy else { return t("timetable.live") }
        let delay = late > 0 ? t("timetable.late", count: late) : t("timetable.early", count: -late)
        return t("timetable.liveDelay", ["delay": delay])
    }

    /// Where a week falls in the semester, in words: "Week 8", "Mid-semester break: teaching resumes on …".
    static func weekText(_ status: CampusSettings.WeekStatus, t: Localizer) -> String {
        switch status {
        case .teaching(let week): t("timetable.week", ["week": String(week)])
        case .inBreak(let interruption, let resumes):
            resumes.map {
                t(
                    "timetable.inBreak",
                    [
                        "name": interruption.name.isEmpty ? t("timetable.breakFallback") : interruption.name,
                        "date": t.longDate($0),
                    ])
            } ?? t("timetable.afterSemester")
        case .beforeSemester(let starts): t("timetable.beforeSemester", ["date": t.longDate(starts)])
        case .afterSemester: t("timetable.afterSemester")
        }
    }

    /// A student's day: their week, the classes shown (today's, or the next teaching day's) and the live lists.
    static func day(_ view: StudentView, t: Localizer, language: Language) -> TimetablePage.Day {
        let settings = view.settings
        let zone = settings.timeZone
        let clock = settings.clock
        let weekText = Self.weekText(settings.status(of: view.today), t: t)
        let plan = view.plan
        var heading = t("timetable.todayHeading")
        var note: String?
        if let date = plan.date, plan.kind != .today {
            heading = t("timetable.nextDayHeading", ["date": longDate(date, zone: zone, language: language)])
            // The week's classes (from the payload) say whether today had any.
            let hadClassesToday = view.payload.schedules.contains { $0.startTime.hasPrefix(view.today.description) }
            if plan.kind == .afterBreak, case .teaching = settings.status(of: view.today) {
                // A day off inside a teaching week (a public holiday): the week keeps its number, the
                // note names the day off; the heading gives the next day with classes.
                let name = plan.breakName.flatMap { $0.isEmpty ? nil : $0 } ?? t("timetable.breakFallback")
                note = t("timetable.dayOff", ["name": name])
            } else if plan.kind == .afterBreak {
                note = weekText
            } else {
                note = t(hadClassesToday ? "timetable.nextDayNote" : "timetable.noClassesTodayNote")
            }
        }
        if plan.kind == .none { note = t("timetable.noClasses") }
        let cards = plan.meetings.map { meeting in
            TimetablePage.Card(
                id: meeting.class.id, start: meeting.class.start.description, end: meeting.class.end.description,
                startAt: meeting.start.formatted(.iso8601), endAt: meeting.end.formatted(.iso8601),
                course: meeting.class.course, courseTitle: meeting.class.courseTitle, className: meeting.class.name,
                lecturer: t("timetable.lecturer", ["name": meeting.class.lecturer]), room: meeting.class.room,
                campus: meeting.class.campus, inProgress: meeting.isInProgress(at: view.now),
                // It starts or ends then: the page is drawn again.
                refreshAt: [meeting.start, meeting.end].first { $0 > view.now }.map(\.milliseconds))
        }
        // When what the page shows next changes: the end of today's last class (then the next teaching day is
        // shown), else the campus midnight. An open page fetches itself again then.
        var changesAt = clock.instant(view.today.adding(days: 1), LocalTime(hour: 0))
        if plan.kind == .today, let lastEnd = plan.meetings.map(\.end).max(), lastEnd < changesAt {
            changesAt = lastEnd
        }
        let lists = live(parkings: view.payload.parkings, stops: view.payload.stops, now: view.now, clock: clock, t: t)
        return TimetablePage.Day(
            changesAt: changesAt.milliseconds,
            student: .init(name: view.student.name, id: view.student.id),
            greeting: t("timetable.greeting", ["name": view.student.name]),
            dateText: longDate(view.today, zone: zone, language: language), weekText: weekText, heading: heading,
            note: note, cards: cards, calendarURL: view.link.url, webcalURL: view.link.webcal,
            parkings: lists.parkings, stops: lists.stops,
            stopChoices: view.stopChoices.map {
                .init(id: $0.id, name: $0.name, checked: view.student.stops.contains($0.id))
            })
    }

    /// A new calendar address from the page's form (CSRF-checked).
    func rotate(_ request: Request) async throws -> Response {
        let person = try Access.person()
        guard let student = try await timetable.student(for: person) else {
            throw Problem.notFound("Your account is not linked to a student.")
        }
        _ = try await timetable.rotateCalendarKey(student: student.id)
        return .seeOther("/timetable?rotated=1#calendar")
    }

    /// The stops a student uses, from the page's checkboxes (`stop[]`; none checked: none chosen).
    func chooseStops(_ request: Request) async throws -> Response {
        struct Chosen: Decodable {
            var stop: [String]?
        }
        var request = request
        let chosen = try await request.form(Chosen.self)
        let person = try Access.person()
        guard let student = try await timetable.student(for: person) else {
            throw Problem.notFound("Your account is not linked to a student.")
        }
        try await timetable.chooseStops(student: student.id, stops: chosen.stop ?? [])
        return .seeOther("/timetable?stops=saved#stops")
    }
}

/// `/timetable`: a student's day (their week, classes, calendar address), or for anyone else the live car parks
/// and shuttles. Its live part (`timetable-live`) is drawn again when the feeds change and at the moments in
/// `data-refresh-at` (a class starts or ends, a bus leaves, the day is over).
struct TimetablePage {
    let refreshSeconds: Int
    /// When its data was read (ms since 1970): the page says how old what it shows is ("Updated 3 min ago").
    let generatedAt: Int
    /// `schedules` (a student's) or `public`: where the script refreshes from.
    var source = ""
    var rotated = false
    /// The student's stops were just saved.
    var stopsSaved = false
    var stopChoices: [StopChoice] = []
    var hasStopChoices = false
    var notStudent = false
    var signedOut = false
    var parkings: [Parking] = []
    var stops: [Stop] = []
    // A student's day:
    /// When the day shown changes (ms since 1970): the end of today's last class, or the campus midnight.
    var changesAt: Int?
    var student: Student?
    var greeting: String?
    var dateText: String?
    var weekText: String?
    var heading: String?
    var note: String?
    var cards: [Card] = []
    var hasCards = false
    var calendarURL: String?
    var webcalURL: String?

    init(refreshSeconds: Int, generatedAt: Date) {
        self.refreshSeconds = refreshSeconds
        self.generatedAt = Int(generatedAt.timeIntervalSince1970 * 1000)
    }

    /// The first instant after `now` when this page, drawn again, would read otherwise with the same data: a
    /// countdown's minute, a class starting or ending, a reading growing old, the day shown changing.
    func changes(after now: Date) -> Date? {
        let instants =
            stops.map(\.wordsChangeAt) + cards.compactMap(\.refreshAt) + parkings.compactMap(\.liveUntil) + [changesAt]
        return instants.compactMap { $0 }.min().map { Date(timeIntervalSince1970: Double($0) / 1000) }
    }

    /// Shows a student's day.
    mutating func show(_ day: Day) {
        changesAt = day.changesAt
        student = day.student
        greeting = day.greeting
        dateText = day.dateText
        weekText = day.weekText
        heading = day.heading
        note = day.note
        cards = day.cards
        hasCards = !day.cards.isEmpty
        calendarURL = day.calendarURL
        webcalURL = day.webcalURL
        stopChoices = day.stopChoices
        hasStopChoices = !day.stopChoices.isEmpty
        parkings = day.parkings
        stops = day.stops
    }

    struct Day {
        let changesAt: Int
        let student: Student
        let greeting: String
        let dateText: String
        let weekText: String
        let heading: String
        let note: String?
        let cards: [Card]
        let calendarURL: String
        let webcalURL: String
        let parkings: [Parking]
        let stops: [Stop]
        let stopChoices: [StopChoice]
    }

    /// A stop of the operator's feed, checked when the student uses it.
    struct StopChoice {
        let id: String
        let name: String
        let checked: Bool
    }

    struct Student {
        let name: String
        let id: String
    }

    struct Card {
        let id: String
        let start: String
        let end: String
        let startAt: String
        let endAt: String
        let course: String
        let courseTitle: String
        let className: String
        let lecturer: String
        let room: String
        let campus: String
        let inProgress: Bool
        /// When it starts or ends next (ms since 1970), if still to come.
        let refreshAt: Int?
    }

    struct Parking {
        let id: String
        let name: String
        let free: Int
        let capacity: Int
        let freeText: String
        let ofText: String
        let state: String
        let stateLabel: String
        let live: Bool
        let liveLabel: String
        let updatedAt: String?
        let liveUntil: Int?
    }

    struct Stop {
        let id: String
        let from: String
        let to: String
        let time: String
        let expectedAt: String
        /// When it leaves (ms since 1970): the page ticks a clock to it in its last minutes.
        let leavesAt: Int
        /// "in 4 min" (`Countdown`), until `wordsChangeAt` (ms since 1970), when the page draws the list again.
        let countdown: String
        let wordsChangeAt: Int
        /// When the seconds start ticking beside the words (ms since 1970); nil for a bus cancelled.
        let ticksFrom: Int?
        let live: Bool
        let cancelled: Bool
        let modeLabel: String
    }
}

/// Milliseconds since 1970, as page scripts count time.
