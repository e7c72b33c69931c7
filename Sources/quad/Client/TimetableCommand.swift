import ArgumentParser
import Foundation
import QuadCore
import QuadKit

/// `quad timetable [--date YYYY-MM-DD]`: the signed-in student's day (today's classes, or the next
/// teaching day's), the car parks and the next shuttles; offline, the cached timetable with its age.
struct TimetableCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "timetable",
        abstract: "Show your classes today (or on the next teaching day), the car parks and the next shuttles.")

    @OptionGroup var options: ClientOptions

    @Option(help: "The day to show, as YYYY-MM-DD (default: today).")
    var date: String?

    func validate() throws {
        if let date, LocalDate(date) == nil { throw ValidationError("--date must be a day as YYYY-MM-DD") }
    }

    func run() async throws {
        let options = options
        let day = date.flatMap(LocalDate.init)
        try await runClient { try await Self.show(options: options, date: day) }
    }

    @MainActor
    static func show(options: ClientOptions, date: LocalDate?) async throws {
        let context = try ClientContext(options)
        let session = KitSession(client: context.client, offline: context.offline)
        let store = TimetableStore(session: session, date: date)
        if !(await store.refresh()) {
            if store.isOffline {
                guard store.snapshot != nil else {
                    throw CLIError.offline(
                        "offline: \(context.serverURL.absoluteString) is unreachable and no timetable is cached yet"
                    )
                }
            } else {
                if case .unauthorized = store.lastFailure { throw CLIError.failed("Sign in first: quad login") }
                throw CLIError.failed(store.lastError ?? "the timetable could not be loaded")
            }
        }
        guard let response = store.response, let plan = store.plan, let clock = store.campusClock else {
            throw CLIError.failed("the server sent no timetable")
        }
        let countdowns = store.countdowns
        if context.json {
            try context.printJSON(
                Output(
                    student: response.student.name, week: response.week, weekStatus: response.weekStatus,
                    kind: plan.kind.rawValue, date: plan.date?.description,
                    classes: plan.meetings.map {
                        .init(
                            start: clock.time(of: $0.start).description, end: clock.time(of: $0.end).description,
                            course: $0.class.course, name: $0.class.name, title: $0.class.courseTitle,
                            room: $0.class.room, lecturer: $0.class.lecturer)
                    },
                    parkings: store.parkings,
                    shuttles: countdowns.map {
                        .init(
                            from: $0.stop.departure, to: $0.stop.arrival, expectedAt: $0.expectedAt,
                            minutes: $0.minutes, live: $0.live)
                    },
                    offline: store.isOffline, updatedAt: store.lastUpdated))
            return
        }
        if store.isOffline, let age = store.age {
            context.note("Offline: showing the timetable saved \(TerminalText.age(age)).", .yellow)
        }
        context.print(
            TimetableText.render(
                name: response.student.name, week: response.week, weekStatus: response.weekStatus, plan: plan,
                parkings: store.parkings, countdowns: countdowns, clock: clock, now: session.clock.now,
                style: context.style))
    }

    struct Output: Encodable {
        struct Class: Encodable {
            var start: String
            var end: String
            var course: String
            var name: String
            var title: String
            var room: String
            var lecturer: String
        }

        struct Shuttle: Encodable {
            var from: String
            var to: String
            var expectedAt: Date
            var minutes: Int
            var live: Bool
        }

        var student: String
        var week: Int
        var weekStatus: String
        /// `today`, `nextTeachingDay`, `afterBreak` or `none`.
        var kind: String
        var date: String?
        var classes: [Class]
        var parkings: [ScheduleResponse.Parking]
        var shuttles: [Shuttle]
        var offline: Bool
        var updatedAt: Date?
    }
}

/// `quad stops [ID…]`: the stops a student uses (their shuttles come first), and the ones they may choose; with ids,
/// those become theirs (`--none`: no choice).
struct StopsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stops",
        abstract: "Show the shuttle stops you use and those you may choose; with stop ids, use those from now on.")

    @OptionGroup var options: ClientOptions

    @Argument(help: "The ids of the stops you use, as listed.")
    var ids: [String] = []

    @Flag(help: "Choose no stop (every shuttle is listed by its time).")
    var none = false

    func validate() throws {
        if none, !ids.isEmpty { throw ValidationError("give stop ids or --none, not both") }
    }

    func run() async throws {
        try await runClient {
            let context = try ClientContext(options, signedIn: true)
            let stops: KitStops
            if none || !ids.isEmpty {
                do { stops = try await context.client.setMyStops(ids) } catch {
                    throw context.writeError(error, doing: "choose your stops")
                }
            } else {
                stops = try await context.client.myStops()
            }
            if context.json { return try context.printJSON(stops) }
            guard !stops.stops.isEmpty else { return context.print("The campus has no shuttle stops to choose.\n") }
            var table = TextTable(columns: [.init("ID"), .init("STOP"), .init("")])
            for stop in stops.stops {
                let yours = stops.chosen.contains(stop.id)
                table.add([.init(stop.id, .dim), .init(stop.name), yours ? .init("yours", .green) : ""])
            }
            context.print(table.render(style: context.style))
        }
    }
}
