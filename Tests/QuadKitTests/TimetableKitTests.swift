import Foundation
import QuadCore
import QuadTestSupport
import Testing

@testable import QuadKit
@testable import quad

/// TimetableStore and `quad timetable` against a real Quad with the demo campus (Clayton, Melbourne time;
/// this week is teaching week 8, the week two before it the mid-semester break) and student Kier.
@Suite("Timetable in the kit and the command line", .serialized)
struct TimetableKitTests {
    static let campus = CampusClock(timeZone: TimeZone(identifier: "Australia/Melbourne")!)

    /// This week's Monday on the demo campus, by the server's clock (the demo places week 8 on it).
    static func thisMonday(_ server: LiveServer) -> LocalDate { campus.date(of: server.clock.now).monday }

    @MainActor
    func makeStore(
        _ server: LiveServer, clock: ManualClock? = nil, date: LocalDate? = nil, offline: URL? = nil
    ) async throws -> TimetableStore {
        var options = QuadClient.Options.forTests
        options.retry = RetryMiddleware(maxAttempts: 3, clock: InstantClock())
        if let clock { options.clock = clock }
        let client = try await server.client(as: "kier", options: options)
        let session = KitSession(
            client: client, offline: OfflineStore(directory: offline ?? temporaryDirectory()),
            refresh: .init(interval: .seconds(30)))
        return TimetableStore(session: session, date: date)
    }

    @Test("The day plan: a teaching day's classes, the next teaching day after a day without, after the break")
    @MainActor
    func dayPlan() async throws {
        try await LiveServer.with { server in
            let monday = Self.thisMonday(server)
            let store = try await makeStore(server, date: monday)
            #expect(await store.refresh())
            #expect(store.studentName == "Kier" && store.week == 8)
            let plan = try #require(store.plan)
            #expect(plan.kind == .today && plan.date == monday)
            #expect(
                plan.meetings.map { "\($0.class.course) \($0.class.name) \($0.class.room)" } == [
                    "FIT1031 Lecture 01 S4"
                ])
            #expect(plan.meetings.map { Self.campus.time(of: $0.start).description } == ["10:00"])

            // Friday has no classes: Monday of week 9, fetched from the next week.
            let friday = try await makeStore(server, date: monday.adding(days: 4))
            #expect(await friday.refresh())
            let next = try #require(friday.plan)
            #expect(next.kind == .nextTeachingDay && next.date == monday.adding(days: 7))
            #expect(next.meetings.map(\.class.name) == ["Lecture 01"])
            #expect(friday.snapshot?.weeks.map(\.week) == [8, 9])

            // In the break: the first teaching day after it (week 7's Monday).
            let inBreak = try await makeStore(server, date: monday.adding(days: -12))
            #expect(await inBreak.refresh())
            let after = try #require(inBreak.plan)
            #expect(inBreak.week == 0 && after.kind == .afterBreak && after.date == monday.adding(days: -7))
            #expect(after.resumesOn == monday.adding(days: -7))

            // Today (by the clock), whatever day this runs: the classes are the server's for the day shown.
            let clock = ManualClock(now: server.clock.now)
            let today = try await makeStore(server, clock: clock)
            #expect(await today.refresh())
            let shown = try #require(today.plan)
            if let day = shown.date {
                #expect(day >= Self.campus.date(of: clock.now))
                let week = try await today.session.client.schedules(date: day).value
                let expected = week.schedules.filter { $0.startTime.hasPrefix(day.description) }.map(\.id)
                #expect(shown.meetings.map(\.class.id) == expected)
                #expect(shown.kind == .today || !shown.meetings.isEmpty)
            }
        }
    }

    @Test("Countdowns to the next shuttles follow the injected clock; a departed shuttle drops off")
    @MainActor
    func countdowns() async throws {
        // Five minutes before the 13:00 shuttle to Caulfield (every 20 minutes from 06:00), on the tests' day.
        try await LiveServer.with(at: TestTime.next(LocalTime(hour: 12, minute: 55))) { server in
            let clock = ManualClock(now: server.clock.now)
            let store = try await makeStore(server, clock: clock)
            #expect(await store.refresh())
            let first = try #require(store.countdowns.first)
            #expect(store.countdowns.map(\.expectedAt) == store.countdowns.map(\.expectedAt).sorted())
            #expect(first.secondsLeft > 0 && first.secondsLeft <= 30 * 60)
            // Half-way to the first departure (however near it is when this runs): the same bus, half the time.
            let step = first.secondsLeft / 2
            clock.advance(by: .milliseconds(Int64(step * 1000)))
            let later = try #require(store.countdowns.first)
            #expect(later.stop.id == first.stop.id)
            #expect(abs(later.secondsLeft - (first.secondsLeft - step)) < 0.01)
            #expect(later.minutes == Int(later.secondsLeft / 60))
            // Past its departure: gone, the next one first.
            clock.advance(by: .seconds(Int64(later.secondsLeft) + 1))
            #expect(!store.countdowns.contains { $0.stop.id == first.stop.id })
            // A minute later a bus further off shows one minute less.
            let far = try #require(store.countdowns.last { $0.secondsLeft > 120 })
            clock.advance(by: .seconds(60))
            #expect(store.countdowns.first { $0.stop.id == far.stop.id }?.minutes == far.minutes - 1)
        }
    }

    @Test("A car-park reading from the feed API reaches the store as a parking event, and is kept on disk")
    @MainActor
    func liveCarPark() async throws {
        let folder = temporaryDirectory()
        try await LiveServer.with { server in
            let store = try await makeStore(server, offline: folder)
            #expect(await store.refresh())
            await store.start()
            try await eventually("live") { store.isLive }
            let before = try #require(store.parkings.first { $0.id == "caulfield" })
            #expect(before.capacity == 300)
            // Far from where the simulator's random walk (a dozen places a step) could take it in the time.
            let free = before.slot < 150 ? 280 : 20
            let admin = QuadClient(serverURL: server.url, token: LiveServer.adminToken, options: .forTests)
            // The demo simulator moves the car parks every few seconds too, and on a busy machine its next
            // reading can land right behind this one: watch for this reading, and send it again if it was
            // overtaken before it could be seen.
            var park: ScheduleResponse.Parking?
            for _ in 0..<3 where park == nil {
                _ = try await admin.raw(
                    .put, "/api/parkings/caulfield", body: Data(#"{"free": \#(free)}"#.utf8),
                    operationID: "setParking")
                try? await eventually("the reading arrives", timeout: .seconds(5)) {
                    park = store.parkings.first { $0.id == "caulfield" && $0.slot == free }
                    return park != nil
                }
            }
            #expect(park?.live == true)
            #expect(park?.state == (free == 280 ? .plenty : .almostFull))

            // A shuttle's prediction arrives as a `departure` event: live, and the countdown moves with it.
            let bus = try #require(store.countdowns.last)
            let predicted = bus.expectedAt.addingTimeInterval(180)
            let text = predicted.formatted(.iso8601)
            _ = try await admin.raw(
                .put, "/api/departures/\(bus.stop.id)", body: Data(#"{"predicted": "\#(text)"}"#.utf8),
                operationID: "setDeparture")
            try await eventually("the prediction arrives") {
                store.countdowns.first { $0.stop.id == bus.stop.id }?.expectedAt == predicted
            }
            let moved = try #require(store.countdowns.first { $0.stop.id == bus.stop.id })
            #expect(moved.live && moved.stop.predictedArrivalDate.hasSuffix(Self.campus.wallClock(predicted).suffix(8)))
            await store.stop()
            let saved = OfflineStore(directory: folder).load(TimetableStore.Snapshot.self, for: "timetable")
            #expect(saved?.value.parkings.contains { $0.id == "caulfield" } == true)
        }
    }

    @Test("A public holiday named in the week's daysOff: the kit's day plan names it, as the web page does")
    func aDayOffIsNamed() throws {
        let zone = TimeZone(identifier: "Australia/Melbourne")!
        let settings = CampusSettings(
            name: "Clayton", timeZone: zone, semesterStart: LocalDate("2025-03-03")!, teachingWeeks: 12,
            breaks: [
                TeachingBreak(name: "Good Friday", start: LocalDate("2025-04-18")!, end: LocalDate("2025-04-18")!),
                TeachingBreak(
                    name: "Mid-semester break", start: LocalDate("2025-04-21")!, end: LocalDate("2025-04-27")!),
            ])
        let friday = TimetableClass(
            id: "fit1031-lecture-01", course: "FIT1031", courseTitle: "Computers and networks", name: "Lecture 01",
            lecturer: "Arun", room: "S4", campus: "Clayton", weekday: 5, start: LocalTime("10:00")!,
            end: LocalTime("12:00")!, weeks: Array(1...12))
        let clock = CampusClock(timeZone: zone)
        let goodFriday = LocalDate("2025-04-18")!
        let weeks = [goodFriday, goodFriday.adding(days: 7), goodFriday.adding(days: 14)].map { date in
            ScheduleResponse(
                settings: settings, date: date, now: clock.instant(goodFriday, LocalTime(hour: 9)),
                student: .init(id: "305491", name: "Kier"), classes: [friday], carParks: [], departures: [])
        }
        #expect(weeks.map(\.weekStatus) == ["teaching", "break", "teaching"])
        let (calendar, classes) = try #require(TimetableStore.calendar(weeks))
        let plan = calendar.plan(now: clock.instant(goodFriday, LocalTime(hour: 9)), classes: classes)
        #expect(plan.kind == .afterBreak && plan.breakName == "Good Friday")
        #expect(plan.date?.description == "2025-05-02")
        #expect(TimetableText.heading(plan) == "After Good Friday: \(TimetableText.day(LocalDate("2025-05-02")!))")
    }

    @Test("A 500 from the server: the store keeps what it showed and says why; quad timetable reports it")
    @MainActor
    func serverError() async throws {
        try await LiveServer.with { server in
            let store = try await makeStore(server, date: Self.thisMonday(server))
            #expect(await store.refresh())
            let plan = try #require(store.plan)
            #expect(!plan.meetings.isEmpty)
            try await server.breakTheTimetable()
            #expect(!(await store.refresh()))
            // Not offline: the server answered, with an error. What was shown stays.
            #expect(!store.isOffline)
            if case .problem(let status, _, _) = store.lastFailure {
                #expect(status == 500)
            } else {
                Issue.record("expected the server's 500, got \(String(describing: store.lastFailure))")
            }
            #expect(store.lastError?.isEmpty == false)
            #expect(store.plan == plan && store.studentName == "Kier")

            guard CLI.binary != nil else { return }
            let cli = CLI(server: server.url, clock: server.clock)
            _ = try await cli.run(["login", "--username", "kier"], stdin: server.passwords["kier"]! + "\n")
            let shown = try await cli.run(["timetable"])
            #expect(shown.status == 1 && shown.out.isEmpty)
            #expect(shown.err.hasPrefix("quad: An unexpected error happened. Quote reference "), "\(shown.err)")
        }
    }

    @Test("Offline: the cached timetable at start, isOffline, the same plan; then recovery")
    @MainActor
    func offline() async throws {
        let folder = temporaryDirectory()
        var server = try await LiveServer.start()
        do {
            let monday = Self.thisMonday(server)
            let store = try await makeStore(server, date: monday, offline: folder)
            #expect(await store.refresh())
            let plan = store.plan
            #expect(plan != nil && !store.isOffline)
            await server.stop()
            #expect(!(await store.refresh()))
            #expect(store.isOffline && store.plan == plan && store.lastError?.hasPrefix("offline") == true)

            // A relaunch opens with the timetable from disk.
            let relaunched = TimetableStore(
                session: KitSession(
                    client: QuadClient(serverURL: server.url, options: .forTests),
                    offline: OfflineStore(directory: folder)),
                date: monday)
            #expect(relaunched.plan == plan && relaunched.lastUpdated != nil && relaunched.studentName == "Kier")

            server = try await server.restart()
            #expect(await store.refresh())
            #expect(!store.isOffline)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    @Test("quad timetable: greeting and week, the day's classes aligned, car parks, shuttles; --json; offline; 401")
    func commandLine() async throws {
        guard CLI.binary != nil else { return }
        // Early morning on the tests' day: shuttles minutes away (their countdowns set the table's width), and no
        // class in progress yet (that would be marked).
        try await LiveServer.with(at: TestTime.next(LocalTime(hour: 7, minute: 55))) { server in
            let cli = CLI(server: server.url, clock: server.clock)
            let anonymous = try await cli.run(["timetable"])
            #expect(anonymous.status == 1 && anonymous.out.isEmpty)
            #expect(anonymous.err == "quad: Sign in first: quad login\n")

            _ = try await cli.run(["login", "--username", "kier"], stdin: server.passwords["kier"]! + "\n")
            let monday = Self.thisMonday(server)
            let tuesday = monday.adding(days: 1)
            let shown = try await cli.run(["timetable", "--date", tuesday.description])
            #expect(shown.status == 0 && shown.err.isEmpty)
            let lines = shown.out.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            #expect(lines[0] == "Hey, Kier · Week 8")
            #expect(lines[1] == "")
            #expect(lines[2] == "Today, \(TimetableText.day(tuesday))" && lines[2].hasPrefix("Today, Tuesday "))
            #expect(lines[3] == "TIME         CLASS           ROOM  LECTURER")
            #expect(lines[4] == "12:30–13:30  FIT1031 Lab 01  S4    Arun")
            #expect(lines[5] == "" && lines[6] == "Car parks")
            #expect(lines[7] == "CAR PARK   FREE   OF  STATE" + lines[7].dropFirst(27))
            #expect(lines[7].hasSuffix("FEED"))
            let parks = lines[8...9]
            #expect(parks.contains { $0.hasPrefix("Clayton") && $0.contains(" 800  ") })
            #expect(parks.contains { $0.hasPrefix("Caulfield") && $0.contains(" 300  ") })
            #expect(lines[10] == "" && lines[11] == "Next shuttles")
            #expect(lines[12].hasPrefix("    IN  FROM     TO") && lines[12].hasSuffix("AT     FEED"))
            #expect(lines[13...].contains { $0.contains(" min  Clayton  ") || $0.contains("due  Clayton  ") })

            let json = try await cli.run(["timetable", "--date", tuesday.description, "--json"])
            #expect(json.status == 0)
            let object = try #require(try JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [String: Any])
            #expect(object["student"] as? String == "Kier" && object["week"] as? Int == 8)
            #expect(object["kind"] as? String == "today" && object["date"] as? String == tuesday.description)
            let classes = try #require(object["classes"] as? [[String: Any]])
            #expect(classes.map { $0["room"] as? String } == ["S4"] && classes.first?["start"] as? String == "12:30")
            #expect(object["offline"] as? Bool == false)

            let bad = try await cli.run(["timetable", "--date", "tuesday"])
            #expect(bad.status != 0 && bad.out.isEmpty)

            // Offline: the cached day with its age.
            await server.stop()
            let offline = try await cli.run(["timetable", "--date", tuesday.description])
            #expect(offline.status == 0 && isOfflineNote(offline.err, "the timetable"))
            #expect(offline.out.contains("12:30–13:30  FIT1031 Lab 01  S4    Arun"))
            let never = try await cli.run(["timetable", "--date", monday.description])
            #expect(never.status == 3 && never.err.hasPrefix("quad: offline: ") && never.out.isEmpty)
        }
    }
}
