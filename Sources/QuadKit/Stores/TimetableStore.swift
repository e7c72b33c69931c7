import Foundation
import Observation
import QuadCore

/// The single source of truth for the timetable screen: the signed-in student's classes today (or on the
/// next teaching day, chosen by QuadCore's `CampusSettings.plan`), the car parks (moved live by `parking`
/// events) and countdowns to the next shuttles (from the session's clock, moved by `departure` events),
/// kept on disk for offline use.
@MainActor
@Observable
public final class TimetableStore {
    /// What is kept on disk: the weeks fetched (the first is the week of the day asked), the car parks and
    /// the next departures as last known.
    public struct Snapshot: Codable, Sendable, Equatable {
        public var weeks: [ScheduleResponse]
        public var parkings: [ScheduleResponse.Parking]
        public var stops: [ScheduleResponse.Stop]
    }

    public private(set) var snapshot: Snapshot?
    public private(set) var isOffline = false
    public private(set) var lastUpdated: Date?
    public private(set) var lastError: String?
    /// The last failure as an error (nil after a success): `.unauthorized` means signing in is needed.
    public private(set) var lastFailure: KitError?

    /// The day asked for (nil: today on the campus, by the session's clock).
    public let date: LocalDate?
    public let session: KitSession
    /// Polling and live updates: the lifecycle every store shares.
    @ObservationIgnored public private(set) var link: LiveLink?
    private var refresher: Refresher? { link?.refresher }

    /// Weeks looked ahead for the next teaching day (a break, the weekend after the last class).
    static let lookAhead = 6

    /// Under `KitSession.personalKeys`' "timetable" prefix, so signing out forgets it.
    var cacheKey: String { "timetable" + (date.map { "-\($0.description)" } ?? "") }

    public init(session: KitSession, date: LocalDate? = nil) {
        self.session = session
        self.date = date
        link = LiveLink(session: session) { [weak self] in try await self?.fetch() }
        loadCached()
    }

    // MARK: Reading

    public var response: ScheduleResponse? { snapshot?.weeks.first }
    public var studentName: String? { response?.student.name }
    /// The teaching week of the day asked (0 outside teaching weeks).
    public var week: Int? { response?.week }
    public var parkings: [ScheduleResponse.Parking] { snapshot?.parkings ?? [] }

    /// The campus clock (its time zone), once the server has said which it is.
    public var campusClock: CampusClock? {
        response.flatMap { TimeZone(identifier: $0.timeZone) }.map { CampusClock(timeZone: $0) }
    }

    /// The moment the day plan is made for: now, or the start of the day asked.
    public var planInstant: Date {
        if let date, let clock = campusClock { return clock.instant(date, LocalTime(hour: 0)) }
        return session.clock.now
    }

    /// Today's classes while any is to come or in progress, else the next teaching day's: QuadCore's rule,
    /// applied to the weeks fetched.
    public var plan: DayPlan? {
        guard let snapshot, let (settings, classes) = Self.calendar(snapshot.weeks) else { return nil }
        var plan = settings.plan(now: planInstant, classes: classes)
        // The server knows the break's name and when teaching resumes; the weeks fetched may not reach it.
        if let first = snapshot.weeks.first, first.weekStatus != "teaching" {
            plan.resumesOn = first.resumesOn.flatMap(LocalDate.init) ?? plan.resumesOn
            if first.weekStatus != "break" { plan.breakName = nil }
        }
        return plan
    }

    /// The weeks fetched as QuadCore's calendar: each teaching week in order, the others as breaks, and each
    /// meeting as a class of that one week.
    nonisolated static func calendar(_ weeks: [ScheduleResponse]) -> (CampusSettings, [TimetableClass])? {
        guard let first = weeks.first, let zone = TimeZone(identifier: first.timeZone),
            let firstDay = LocalDate(first.date)
        else { return nil }
        let clock = CampusClock(timeZone: zone)
        var breaks: [TeachingBreak] = []
        var classes: [TimetableClass] = []
        var teaching = 0
        var start = firstDay.monday
        // A break is between teaching weeks: an empty teaching week before it keeps it one for QuadCore.
        if first.weekStatus == "break" {
            start = start.adding(days: -7)
            teaching = 1
        }
        for (offset, week) in weeks.enumerated() {
            let monday = firstDay.monday.adding(days: 7 * offset)
            guard week.weekStatus == "teaching" else {
                breaks.append(TeachingBreak(name: "", start: monday, end: monday.adding(days: 6)))
                continue
            }
            teaching += 1
            // A day off inside a teaching week (a public holiday) is a one-day break, named.
            for dayOff in week.daysOff ?? [] {
                guard let day = LocalDate(dayOff.date) else { continue }
                breaks.append(TeachingBreak(name: dayOff.name, start: day, end: day))
            }
            for meeting in week.schedules {
                guard let start = clock.parseWallClock(meeting.startTime),
                    let end = clock.parseWallClock(meeting.endTime)
                else { continue }
                classes.append(
                    TimetableClass(
                        id: meeting.id, course: meeting.course, courseTitle: meeting.courseTitle,
                        name: meeting.scheduleClass, lecturer: meeting.lecturer, room: meeting.room,
                        campus: meeting.campus, weekday: clock.date(of: start).weekday, start: clock.time(of: start),
                        end: clock.time(of: end), weeks: [teaching]))
            }
        }
        let settings = CampusSettings(
            name: first.campus, timeZone: zone, semesterStart: start, teachingWeeks: teaching,
            breaks: breaks)
        return (settings, classes)
    }

    /// A shuttle departure with the time left before it leaves.
    public struct Countdown: Sendable, Equatable {
        public var stop: ScheduleResponse.Stop
        public var expectedAt: Date
        public var secondsLeft: TimeInterval
        /// Whole minutes left, rounded down ("due" at 0).
        public var minutes: Int { max(0, Int(secondsLeft / 60)) }
        public var live: Bool { stop.live }
    }

    /// The next departures still to leave, soonest first, counted down from the session's clock.
    public var countdowns: [Countdown] {
        let now = session.clock.now
        return (snapshot?.stops ?? []).compactMap { stop -> Countdown? in
            guard let at = Self.instant(stop.expectedAt), at > now else { return nil }
            return Countdown(stop: stop, expectedAt: at, secondsLeft: at.timeIntervalSince(now))
        }
        .sorted { $0.expectedAt < $1.expectedAt }
    }

    /// An ISO 8601 instant as the server writes it.
    nonisolated static func instant(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: text)
    }

    public var age: TimeInterval? { lastUpdated.map { session.clock.now.timeIntervalSince($0) } }

    // MARK: Lifecycle

    public func loadCached() {
        guard let entry = session.offline?.load(Snapshot.self, for: cacheKey) else { return }
        snapshot = entry.value
        lastUpdated = entry.savedAt
    }

    /// A `parking` event moves that car park, a `departure` event that shuttle; `reset` refreshes.
    public func apply(_ event: ServerEvent) async {
        switch event.kind {
        case .parking:
            // A refresh running now may have read before this change: it reads again.
            await refresher?.noteChange()
            guard let change = event.decode(ParkingEvent.self),
                let index = snapshot?.parkings.firstIndex(where: { $0.id == change.id })
            else { return }
            snapshot?.parkings[index].slot = change.free
            snapshot?.parkings[index].capacity = change.capacity
            snapshot?.parkings[index].state = change.state
            snapshot?.parkings[index].updatedAt = change.updatedAt
            snapshot?.parkings[index].live = change.live
            save(at: session.clock.now)
        case .departure:
            await refresher?.noteChange()
            guard let change = event.decode(DepartureEvent.self),
                let index = snapshot?.stops.firstIndex(where: { $0.id == change.id })
            else { return }
            snapshot?.stops[index].expectedAt = change.expectedAt
            snapshot?.stops[index].live = change.live
            if let clock = campusClock, let at = Self.instant(change.expectedAt) {
                snapshot?.stops[index].predictedArrivalDate = clock.wallClock(at)
            }
            save(at: session.clock.now)
        case .reset:
            await refresher?.refreshAfterChange()
        default:
            break
        }
    }

    private func save(at date: Date) {
        guard let snapshot else { return }
        try? session.offline?.save(snapshot, for: cacheKey, at: date)
    }

    private func fetch() async throws {
        do {
            let client = session.client
            var weeks = [try await client.schedules(date: date).value]
            // Today's classes may be over: look ahead week by week until QuadCore's plan finds a day.
            while weeks.count < Self.lookAhead, let last = weeks.last, last.weekStatus != "after",
                let lastDay = LocalDate(last.date)
            {
                if let (settings, classes) = Self.calendar(weeks),
                    settings.plan(now: planInstant(for: weeks), classes: classes).kind != .none
                {
                    break
                }
                weeks.append(try await client.schedules(date: lastDay.monday.adding(days: 7)).value)
            }
            let now = session.clock.now
            let first = weeks[0]
            snapshot = Snapshot(weeks: weeks, parkings: first.parkings, stops: first.stops)
            lastUpdated = now
            isOffline = false
            lastError = nil
            lastFailure = nil
            save(at: now)
        } catch {
            let kit = KitError.from(error)
            if kit.isOffline { isOffline = true }
            lastError = kit.description
            lastFailure = kit
            throw kit
        }
    }

    private func planInstant(for weeks: [ScheduleResponse]) -> Date {
        if let date, let zone = weeks.first.flatMap({ TimeZone(identifier: $0.timeZone) }) {
            return CampusClock(timeZone: zone).instant(date, LocalTime(hour: 0))
        }
        return session.clock.now
    }
}

extension TimetableStore: LiveStore {}
