import Foundation
import Hummingbird
import NIOConcurrencyHelpers
import OpenAPIHummingbird
import QuadCore
import QuadPlatform
import SQLKit
import ServiceLifecycle

/// The Timetable service: a student's week, live car parks and the next shuttles. Time comes from the
/// platform's clock, so tests choose it.
package final class Timetable: Feature, PersonRemoval {
    let store: TimetableStore
    let platform: Platform
    /// Each student's own `GET /api/schedules` (this week, today's departures) as sent, by student id; and
    /// `GET /api/parkings` and `GET /api/departures`, polled by every open timetable: dropped on every instance when
    /// anything in the timetable changes (`changed()`), and by themselves when they go stale.
    let weeks: KeptAnswer
    let parkings: KeptAnswer
    let departures: KeptAnswer

    /// Who else puts things in a student's calendar feed: Rooms (the person's bookings), Waiting (their offers'
    /// ends and loans' due dates) and Accounts (whose account the student is).
    let calendar: any PersonCalendar
    let reminders: any PersonReminders
    let students: any StudentAccounts
    /// The campus's time zone (this feature's setting, built before it for the features that keep time in it).
    package let campus: CampusZone
    /// The GTFS feed as last read, with its version and its boarding stops (worked out once per version, not per
    /// page): read again only when the stored version differs.
    private let gtfsCopy = NIOLockedValueBox<GTFSCopy?>(nil)

    private struct GTFSCopy {
        let version: String
        let schedule: GTFSSchedule
        let boarding: [GTFSSchedule.Stop]
    }

    /// The operator's realtime feed as last read by this instance (`GTFSRealtimePoller`): in memory only, since it
    /// is read again every few seconds and believed for a minute or two.
    private let realtimeCopy = NIOLockedValueBox<TripUpdates?>(nil)

    var realtime: TripUpdates? { realtimeCopy.withLockedValue { $0 } }

    /// What the realtime feed says now. Open pages and kept answers are told when that changes what a departure shows:
    /// another prediction or cancellation, or the feed believed again after it went stale (its growing stale needs no
    /// word: every departure it predicts says until when it is live).
    func setRealtime(_ updates: TripUpdates) async {
        let now = self.now
        let before = realtimeCopy.withLockedValue { copy in
            defer { copy = updates }
            return copy
        }
        guard before?.trips != updates.trips || before?.isLive(now: now) != true else { return }
        await fed()
        await platform.events.publish(
            DepartureChange(id: "gtfs-rt", expectedAt: "", live: true, refresh: true, predictedArrivalDate: ""))
    }

    /// The operator's feed, if one is loaded.
    func gtfs() async throws -> GTFSSchedule? { try await gtfsRead()?.schedule }

    /// The stops of the operator's feed where riders board (none without a feed): those a student may choose.
    func boardingStops() async throws -> [GTFSSchedule.Stop] { try await gtfsRead()?.boarding ?? [] }

    private func gtfsRead() async throws -> GTFSCopy? {
        guard let version = try await store.gtfsVersion() else { return nil }
        if let copy = gtfsCopy.withLockedValue({ $0 }), copy.version == version { return copy }
        guard let stored = try await store.gtfs() else { return nil }
        let read = GTFSCopy(version: stored.version, schedule: stored.schedule, boarding: stored.schedule.boardingStops)
        gtfsCopy.withLockedValue { $0 = read }
        return read
    }

    /// Loads an operator's GTFS feed (a ZIP), replacing the one before: open pages show its departures at once.
    func importGTFS(_ zip: Data) async throws -> GTFSSchedule {
        let schedule = try GTFSFeedFile.schedule(zip: zip)
        try await store.setGTFS(schedule)
        await changed()
        await platform.events.publish(
            DepartureChange(id: "gtfs", expectedAt: "", live: false, refresh: true, predictedArrivalDate: ""))
        return schedule
    }

    /// The room bookings of the person whose student record is `studentId` (none when no account is theirs).
    func bookings(ofStudent studentId: String) async throws -> [CalendarBooking] {
        guard let username = try await students.username(ofStudent: studentId) else { return [] }
        return try await bookings(of: username)
    }

    /// The offers and loan reminders of the person whose student record is `studentId` (none when no account is theirs).
    func reminders(ofStudent studentId: String) async throws -> [CalendarReminder] {
        guard let username = try await students.username(ofStudent: studentId) else { return [] }
        return try await reminders.calendarReminders(of: username)
    }

    /// `username`'s room bookings, as their calendar shows them.
    func bookings(of username: String) async throws -> [CalendarBooking] {
        try await calendar.calendarBookings(of: username)
    }

    package init(
        platform: Platform, campus: CampusZone, calendar: any PersonCalendar, reminders: any PersonReminders,
        students: any StudentAccounts
    ) {
        self.platform = platform
        self.campus = campus
        self.calendar = calendar
        self.reminders = reminders
        self.students = students
        self.store = campus.store
        let store = campus.store
        let later = Later<Timetable>()
        self.weeks = KeptAnswer(
            operation: Operations.GetSchedules.id, path: "/api/schedules", platform: platform,
            droppedBy: [.notice(Self.noticeType), .fed],
            // Someone's own week, with no date asked.
            key: { _, person in person?.studentId.flatMap { TimetableAPI.isStudentId($0) ? $0 : nil } }
        ) { id in
            // The student is read within the one build: the polls waiting for it do not each read them first.
            guard let timetable = later.value, let student = try await store.student(id) else { throw HandlerAnswers() }
            let built = try await timetable.scheduleAndExpiry(for: student, date: nil)
            return try EncodedAnswer.json(built.payload, expires: built.validUntil)
        }
        self.parkings = Self.keptList(Operations.ListParkings.id, "/api/parkings", platform: platform, later: later) {
            try await $0.parkingsAndExpiry()
        }
        self.departures = Self.keptList(
            Operations.ListDepartures.id, "/api/departures", platform: platform, later: later
        ) { try await $0.departuresAndExpiry() }
        later.value = self
    }

    /// A list every open timetable polls (the car parks, the departures), kept as sent until it goes stale.
    private static func keptList<List: Encodable & Sendable>(
        _ operation: String, _ path: String, platform: Platform, later: Later<Timetable>,
        build: @escaping @Sendable (TimetableAPI) async throws -> (list: List, validUntil: Date)
    ) -> KeptAnswer {
        KeptAnswer(
            operation: operation, path: path, platform: platform, droppedBy: [.notice(noticeType), .fed],
            // One answer for everyone.
            key: { _, _ in "" }
        ) { _ in
            guard let timetable = later.value else { throw HandlerAnswers() }
            let built = try await build(TimetableAPI(timetable: timetable))
            return try EncodedAnswer.json(built.list, expires: built.validUntil)
        }
    }

    /// Call after a change is stored (a reading, a prediction, an admin's edit): kept answers are dropped everywhere.
    /// (The weeks and the lists are dropped by the same notice.)
    func changed() async {
        await campus.changed()
        await weeks.changed()
    }

    /// Call after a feed's reading is stored (a car park's, a departure's prediction, the realtime feed): the kept
    /// answers go as after `changed()`, announced as a feed's (`HubChange.fed`); the campus's zone stays. Why: measured
    /// with `Benchmarks/run` (issue 41), each of the demo's readings announced an edit of the timetable, so every
    /// `/timetable` and Today reader waited for the page to be drawn again: p99 of 36 and 33 ms against nginx's 3 and 7.
    func fed() async {
        await weeks.changed(by: .fed)
    }

    /// The hub's events for a car park's reading and a departure's prediction, and the notices that a feed's reading
    /// (`fed()`) or anything else in the timetable changed (`changed()`): what the `/timetable` page shows changes with
    /// these.
    static let noticeType = "timetable"
    static let changeTypes: [HubChange] = [.event(.parking), .event(.departure), .notice(noticeType), .fed]

    /// The most stops a student may choose.
    static let chosenStopsLimit = 20

    /// The stops `student` uses (ids of the operator's feed's boarding stops): their shuttles are listed first on the
    /// student's timetable, in their `/api/schedules` and on their Today. Throws a validation problem for a stop the
    /// feed does not have. The stops chosen, each once.
    @discardableResult
    func chooseStops(student: String, stops: [String]) async throws -> [String] {
        let boarding = Set(try await boardingStops().map(\.id))
        var chosen: [String] = []
        for stop in stops where !chosen.contains(stop) {
            guard boarding.contains(stop) else {
                throw Problem.validation([FieldError(field: "stop", message: "There is no stop \(stop).")])
            }
            chosen.append(stop)
        }
        guard chosen.count <= Self.chosenStopsLimit else {
            throw Problem.validation([
                FieldError(field: "stop", message: "Choose at most \(Self.chosenStopsLimit) stops.")
            ])
        }
        guard try await store.setStops(student: student, stops: chosen) else {
            throw Problem.notFound("There is no student \(student).")
        }
        await changed()
        return chosen
    }

    /// A new calendar address for the student (the old one stops working), announced: the pages other instances
    /// keep show the old address.
    func rotateCalendarKey(student id: String) async throws -> String {
        let key = try await store.rotateKey(student: id)
        await changed()
        return key
    }

    /// The platform's clock's time.
    var now: Date { platform.clock.now }

    /// The campus as set by an admin; a UTC placeholder until then.
    func settings() async throws -> CampusSettings {
        try await store.campus()
            ?? CampusSettings(
                name: "Campus", timeZone: .gmt, semesterStart: CampusClock(timeZone: .gmt).date(of: now),
                teachingWeeks: 12, breaks: [])
    }

    /// The student linked to `person`'s account, if any.
    func student(for person: Person) async throws -> StudentRecord? {
        guard let id = person.studentId else { return nil }
        return try await store.student(id)
    }

    /// Today's and tomorrow's departures (campus days) with their latest predictions.
    func departures(settings: CampusSettings, at instant: Date) async throws -> [Departure] {
        Self.departures(
            routes: try await store.routes(), predictions: try await store.predictions(), settings: settings,
            at: instant, gtfs: try await gtfs(), realtime: realtime)
    }

    /// Today's and tomorrow's departures of `routes`, with `predictions` (by departure id), and the next day's of the
    /// operator's feed with what its realtime feed says (a feed account's prediction made since wins).
    static func departures(
        routes: [RouteRecord], predictions: [String: (predicted: Date, madeAt: Date)], settings: CampusSettings,
        at instant: Date, gtfs: GTFSSchedule?, realtime: TripUpdates? = nil
    ) -> [Departure] {
        let clock = settings.clock
        let today = clock.date(of: instant)
        var departures: [Departure] = []
        // Each day's part of the ids, once: a route runs a few hundred times a day (profiled: building it per departure
        // was a tenth of a student's Today page).
        let days = [today, today.adding(days: 1)].map { ($0, Self.dayId($0)) }
        for route in routes {
            for (date, day) in days {
                for time in route.times {
                    let id = "\(route.id)-\(day)-\(Self.timeId(time))"
                    let prediction = predictions[id]
                    departures.append(
                        Departure(
                            id: id, routeId: route.id, from: route.from, to: route.to,
                            scheduled: clock.instant(date, time), predicted: prediction?.predicted,
                            predictedAt: prediction?.madeAt))
                }
            }
        }
        let fromFeed = (gtfs?.departures(at: instant, realtime: realtime) ?? []).map { departure in
            var departure = departure
            if let prediction = predictions[departure.id], prediction.madeAt > departure.predictedAt ?? .distantPast {
                departure.predicted = prediction.predicted
                departure.predictedAt = prediction.madeAt
                departure.cancelled = false
                departure.liveFor = Freshness.predictionLimit
            }
            return departure
        }
        return departures + fromFeed
    }

    /// A departure's id's day, `20200313` (`clayton-caulfield-20200313-0604`: the route, the campus day and the
    /// scheduled time).
    static func dayId(_ date: LocalDate) -> String { date.description.replacingOccurrences(of: "-", with: "") }

    /// `0604`.
    static func timeId(_ time: LocalTime) -> String {
        String(time.hour).leftPaddedForId + String(time.minute).leftPaddedForId
    }

    static func parseDepartureId(_ id: String) -> (route: String, date: LocalDate, time: LocalTime)? {
        let parts = id.split(separator: "-")
        guard parts.count >= 3, let day = parts.last.map(String.init), day.count == 4,
            let hour = Int(day.prefix(2)), let minute = Int(day.suffix(2)), hour < 24, minute < 60
        else { return nil }
        let date = String(parts[parts.count - 2])
        guard date.count == 8,
            let local = LocalDate("\(date.prefix(4))-\(date.dropFirst(4).prefix(2))-\(date.suffix(2))")
        else { return nil }
        return (parts.dropLast(2).joined(separator: "-"), local, LocalTime(hour: hour, minute: minute))
    }

    /// The payload of `GET /api/schedules` for `student` on `date`.
    func schedule(for student: StudentRecord, date: LocalDate?) async throws -> ScheduleResponse {
        try await scheduleAndExpiry(for: student, date: date).payload
    }

    /// The payload, and until when it stays the same unless something is stored (`ScheduleResponse.validUntil`).
    func scheduleAndExpiry(
        for student: StudentRecord, date: LocalDate?
    ) async throws -> (payload: ScheduleResponse, validUntil: Date) {
        let now = self.now
        // The reads at once, each on a connection of its own: on PostgreSQL a rebuild after a change (every few
        // seconds with live readings) is then one round trip long, not five, and so is the wait of every poll
        // that came meanwhile (measured: p99 2.1–2.6x nginx's with them one after another).
        async let readSettings = settings()
        async let readCarParks = store.carParks()
        async let readClasses = store.classes(student: student.id)
        async let readPredictions = store.predictions()
        async let readRoutes = store.routes()
        async let readGTFS = gtfs()
        let settings = try await readSettings
        let carParks = try await readCarParks
        let departures = Self.departures(
            routes: try await readRoutes, predictions: try await readPredictions, settings: settings, at: now,
            gtfs: try await readGTFS, realtime: realtime)
        let payload = ScheduleResponse(
            settings: settings, date: date ?? settings.clock.date(of: now), now: now,
            student: .init(id: student.id, name: student.name), classes: try await readClasses,
            carParks: carParks, departures: departures, chosenStops: Set(student.stops))
        let validUntil = ScheduleResponse.validUntil(
            settings: settings, now: now, carParks: carParks, departures: departures)
        return (payload, validUntil)
    }

    // MARK: Feeds

    typealias ParkingChange = ParkingEvent
    typealias DepartureChange = DepartureEvent

    /// An admin saved or deleted a car park: the same `parking` event a feed publishes, marked `refresh`.
    func carParkChanged(_ id: String) async throws {
        let now = self.now
        let park = try await store.carParks().first(where: { $0.id == id })
        await platform.events.publish(
            ParkingChange(
                id: id, free: park?.free ?? 0, capacity: park?.capacity ?? 0,
                state: park?.state ?? CarParkState(free: 0, capacity: 0),
                updatedAt: park?.updatedAt?.formatted(.iso8601) ?? "", live: park?.isLive(now: now) ?? false,
                refresh: true))
    }

    /// An admin saved or deleted a route: a `departure` event for each of its coming departures (or, when it is
    /// gone, one naming the route), marked `refresh`.
    func routeChanged(_ routeId: String) async throws {
        let now = self.now
        let settings = try await settings()
        let coming = try await departures(settings: settings, at: now).filter {
            $0.routeId == routeId && $0.expected(now: now).time > now
        }
        guard !coming.isEmpty else {
            await platform.events.publish(
                DepartureChange(id: routeId, expectedAt: "", live: false, refresh: true, predictedArrivalDate: ""))
            return
        }
        for departure in coming.prefix(3) {
            let expected = departure.expected(now: now)
            await platform.events.publish(
                DepartureChange(
                    id: departure.id, expectedAt: expected.time.formatted(.iso8601), live: expected.live,
                    refresh: true, predictedArrivalDate: settings.clock.wallClock(expected.time)))
        }
    }

    func recordReading(_ id: String, free: Int?) async throws -> CarPark {
        let now = self.now
        let park = try await store.setFree(id, free: free, at: now)
        await fed()
        await platform.events.publish(
            ParkingChange(
                id: park.id, free: park.free, capacity: park.capacity, state: park.state,
                updatedAt: now.formatted(.iso8601), live: true))
        return park
    }

    func recordPrediction(_ id: String, predicted: Date?) async throws -> Departure {
        let now = self.now
        let settings = try await settings()
        // A route an admin typed in, or the operator's feed (whose departures within the last six hours count too:
        // a late bus is still predicted).
        var departure: Departure
        var typedRoute: String?
        if let parsed = Self.parseDepartureId(id),
            let route = try await store.routes().first(where: { $0.id == parsed.route }),
            route.times.contains(parsed.time)
        {
            departure = Departure(
                id: id, routeId: route.id, from: route.from, to: route.to,
                scheduled: settings.clock.instant(parsed.date, parsed.time))
            typedRoute = route.id
        } else if let fromFeed = try await gtfs()?.departures(at: now, since: 6 * 3600).first(where: { $0.id == id }) {
            departure = fromFeed
        } else {
            throw Problem.notFound("There is no departure \(id).")
        }
        let checked: Date
        do {
            checked = try Departure.validatePrediction(predicted, scheduled: departure.scheduled)
        } catch {
            throw Problem.validation(error.errors)
        }
        try await store.setPrediction(departure: id, route: typedRoute, predicted: checked, at: now)
        await fed()
        departure.predicted = checked
        departure.predictedAt = now
        await platform.events.publish(
            DepartureChange(
                id: id, expectedAt: checked.formatted(.iso8601), live: true,
                predictedArrivalDate: settings.clock.wallClock(checked)))
        return departure
    }
}

extension String {
    fileprivate var leftPaddedForId: String { count >= 2 ? self : "0" + self }
}

extension Timetable {
    package static var migrations: [Migration] { TimetableStore.migrations }
    package static let files = WebFiles(module: "QuadTimetable", bundle: .module)

    package var adminLinks: [AdminLink] { [AdminLink(title: "timetable.adminTitle", path: "/admin/timetable")] }

    package var link: ServiceLink? {
        // The tab bar shows a calendar.
        ServiceLink(
            key: "timetable", path: "/timetable",
            icon: "M4 5h16v15H4zM4 10h16M8 3v4M16 3v4")
    }

    package func register(on routes: Routes, web: WebShell) throws {
        TimetableRoutes(timetable: self, web: web).register(on: routes)
        try TimetableOperations(timetable: self).registerHandlers(
            on: routes.router, configuration: .quad,
            middlewares: .quad(kept: keptAnswers))
    }

    /// A student's own week, the car parks and the departures, polled by open pages and apps.
    package var keptAnswers: [any AnyKeptAnswer] { [weeks, parkings, departures] }

    /// The demo's car parks and shuttles move as if fed live; the operator's realtime feed is read if one is set.
    package var services: [any Service] {
        (platform.configuration.loadDemoData ? [TimetableSimulator(timetable: self)] : [])
            + (platform.configuration.gtfsRealtime.map { [GTFSRealtimePoller(timetable: self, settings: $0)] } ?? [])
    }

    package func loadDemoData(announce: @escaping @Sendable (String) -> Void) async throws {
        try await TimetableDemo.load(store, now: platform.clock.now)
        await changed()
    }
}

/// With demo data (the demo campus, marked as such), moves car-park counts and bus predictions every few seconds so the live parts move.
struct TimetableSimulator: Service {
    let timetable: Timetable
    var interval: Duration = .seconds(3)

    func run() async throws {
        await cancelWhenGracefulShutdown {
            var generator = SystemRandomNumberGenerator()
            while !Task.isCancelled {
                try? await timetable.platform.clock.sleep(for: interval)
                try? await step(using: &generator)
            }
        }
    }

    func step(using generator: inout some RandomNumberGenerator) async throws {
        // Only the demo campus: a real campus's feeds are never overwritten.
        guard try await timetable.store.isSimulated() else { return }
        for park in try await timetable.store.carParks() {
            let change = Int.random(in: -12...12, using: &generator)
            _ = try await timetable.recordReading(park.id, free: min(park.capacity, max(0, park.free + change)))
        }
        let now = timetable.now
        let settings = try await timetable.settings()
        let soon = try await timetable.departures(settings: settings, at: now).filter {
            // The next hour's: as an operator's feed predicts the buses on their way.
            $0.scheduled > now.addingTimeInterval(-600) && $0.scheduled < now.addingTimeInterval(3600)
                && $0.expected(now: now).time > now.addingTimeInterval(20)
        }
        for departure in soon {
            let base =
                departure.predicted
                ?? departure.scheduled.addingTimeInterval(Double.random(in: 0...120, using: &generator))
            let drifted = base.addingTimeInterval(Double(Int.random(in: -20...30, using: &generator)))
            let earliest = max(now.addingTimeInterval(15), departure.scheduled.addingTimeInterval(-60))
            let predicted = min(max(drifted, earliest), departure.scheduled.addingTimeInterval(600))
            _ = try? await timetable.recordPrediction(departure.id, predicted: predicted)
        }
        try await timetable.store.deletePredictions(before: now.addingTimeInterval(-86400))
    }
}

extension Timetable {
    /// A person removed: their own feed's address goes with them.
    package func release(
        _ usernameKey: String, in sql: any SQLDatabase
    ) async throws -> @Sendable () async -> Void {
        try await TimetableStore.forgetPersonKey(usernameKey, in: sql)
        return {}
    }
}

extension Timetable: PersonKeys {
    package func endKeys(
        of usernameKey: String?, studentIds: [String], in sql: any SQLDatabase
    ) async throws -> @Sendable () async -> Void {
        if let usernameKey { try await TimetableStore.forgetPersonKey(usernameKey, in: sql) }
        for id in studentIds { try await TimetableStore.rotateKey(student: id, in: sql) }
        // Kept pages show the old addresses.
        return { [self] in if !studentIds.isEmpty { await changed() } }
    }
}

/// A reference set at the end of an `init`, for closures that the `init` hands out before `self` may be captured
/// (the timetable's kept answers are declared in its `init`; their builds read the timetable). Weak: no cycle.
final class Later<Value: AnyObject & Sendable>: Sendable {
    private struct Reference {
        weak var value: Value?
    }

    private let reference = NIOLockedValueBox(Reference())

    var value: Value? {
        get { reference.withLockedValue { $0.value } }
        set { reference.withLockedValue { $0.value = newValue } }
    }
}
