import Foundation

/// `GET /api/schedules`: the original app's payload (`week`, `student`, `schedules`, `parkings`,
/// `stops`, dates as `yyyy-MM-dd'T'HH:mm:ss` campus time) with new fields the original ignores.
public struct ScheduleResponse: Codable, Sendable, Hashable {
    /// The teaching week of the date asked for; 0 outside teaching weeks (see `weekStatus`).
    public var week: Int
    public var student: Student
    public var schedules: [Schedule]
    public var parkings: [Parking]
    public var stops: [Stop]
    // New fields.
    public var date: String
    public var campus: String
    public var timeZone: String
    /// `teaching`, `break`, `before` or `after`.
    public var weekStatus: String
    public var resumesOn: String?
    public var generatedAt: String
    /// The days of the week asked (Monday to Sunday) inside a break, named: a public holiday in a teaching
    /// week has no classes, and says why. (Absent from payloads made before it existed.)
    public var daysOff: [DayOff]? = nil

    public struct DayOff: Codable, Sendable, Hashable {
        public var date: String
        public var name: String

        public init(date: String, name: String) {
            self.date = date
            self.name = name
        }
    }

    public struct Student: Codable, Sendable, Hashable {
        public var id: String
        public var name: String

        public init(id: String, name: String) {
            self.id = id
            self.name = name
        }
    }

    public struct Schedule: Codable, Sendable, Hashable {
        public var startTime: String
        public var endTime: String
        public var course: String
        public var scheduleClass: String
        public var lecturer: String
        public var room: String
        public var campus: String
        public var id: String
        public var courseTitle: String

        enum CodingKeys: String, CodingKey {
            case startTime = "start_time"
            case endTime = "end_time"
            case course
            case scheduleClass = "class"
            case lecturer, room, campus, id, courseTitle
        }
    }

    public struct Parking: Codable, Sendable, Hashable {
        public var name: String
        /// Free places.
        public var slot: Int
        public var id: String
        public var capacity: Int
        public var state: CarParkState
        public var updatedAt: String?
        public var live: Bool

        public init(
            name: String, slot: Int, id: String, capacity: Int, state: CarParkState, updatedAt: String?, live: Bool
        ) {
            self.name = name
            self.slot = slot
            self.id = id
            self.capacity = capacity
            self.state = state
            self.updatedAt = updatedAt
            self.live = live
        }
    }

    public struct Stop: Codable, Sendable, Hashable {
        public var departure: String
        public var arrival: String
        /// When the bus is expected: the live prediction, or the scheduled time when there is none fresh.
        public var predictedArrivalDate: String
        public var id: String
        public var scheduledDate: String
        /// The expected time as an instant (ISO 8601 with zone), for countdowns.
        public var expectedAt: String
        public var live: Bool
        /// True when the operator's live feed says this run will not leave from here; absent otherwise (the
        /// original apps' shape is kept).
        public var cancelled: Bool?
        /// When `live` turns false unless the feed speaks again (not sent: the page draws itself again then).
        public var liveUntil: Date?
        /// Whole minutes the live prediction is behind the schedule (ahead when negative); nil when on time or not
        /// live (not sent: the pages say it in words).
        public var lateBy: Int?

        public init(
            departure: String, arrival: String, predictedArrivalDate: String, id: String, scheduledDate: String,
            expectedAt: String, live: Bool, cancelled: Bool? = nil, liveUntil: Date? = nil
        ) {
            self.departure = departure
            self.arrival = arrival
            self.predictedArrivalDate = predictedArrivalDate
            self.id = id
            self.scheduledDate = scheduledDate
            self.expectedAt = expectedAt
            self.live = live
            self.cancelled = cancelled
            self.liveUntil = liveUntil
        }

        /// `departure` as the wire shows it at `now`.
        public init(_ departure: Departure, now: Date, clock: CampusClock) {
            let expected = departure.expected(now: now)
            self.init(
                departure: departure.from, arrival: departure.to, predictedArrivalDate: clock.wallClock(expected.time),
                id: departure.id, scheduledDate: clock.wallClock(departure.scheduled),
                expectedAt: expected.time.formatted(.iso8601), live: expected.live,
                cancelled: departure.isCancelled(now: now) ? true : nil,
                liveUntil: expected.live
                    ? departure.predictedAt?.addingTimeInterval(departure.liveFor + Freshness.step) : nil)
            let minutes = Int((expected.time.timeIntervalSince(departure.scheduled) / 60).rounded())
            lateBy = expected.live && minutes != 0 ? minutes : nil
        }

        enum CodingKeys: String, CodingKey {
            case departure, arrival
            case predictedArrivalDate = "predicted_arrival_date"
            case id, scheduledDate, expectedAt, live, cancelled
        }
    }
}

extension ScheduleResponse {
    /// Builds the payload for `date` at `now`: the week's classes, car parks and the next departures.
    public init(
        settings: CampusSettings, date: LocalDate, now: Date, student: Student, classes: [TimetableClass],
        carParks: [CarPark], departures: [Departure], stopLimit: Int = 6, chosenStops: Set<String> = []
    ) {
        let clock = settings.clock
        let status = settings.status(of: date)
        var weekStatus = "teaching"
        var resumesOn: LocalDate?
        switch status {
        case .teaching: weekStatus = "teaching"
        case .inBreak(_, let resumes):
            weekStatus = "break"
            resumesOn = resumes
        case .beforeSemester(let starts):
            weekStatus = "before"
            resumesOn = starts
        case .afterSemester: weekStatus = "after"
        }
        self.init(
            week: settings.week(of: date) ?? 0, student: student,
            schedules: settings.meetings(inWeekOf: date, of: classes).map { meeting in
                Schedule(
                    startTime: clock.wallClock(meeting.start), endTime: clock.wallClock(meeting.end),
                    course: meeting.class.course, scheduleClass: meeting.class.name, lecturer: meeting.class.lecturer,
                    room: meeting.class.room, campus: meeting.class.campus, id: meeting.class.id,
                    courseTitle: meeting.class.courseTitle)
            },
            parkings: carParks.map { park in
                Parking(
                    name: park.name, slot: park.free, id: park.id, capacity: park.capacity, state: park.state,
                    updatedAt: park.updatedAt?.formatted(.iso8601), live: park.isLive(now: now))
            },
            stops: Departure.upcoming(departures, now: now, limit: stopLimit, first: chosenStops).map {
                Stop($0, now: now, clock: clock)
            },
            date: date.description, campus: settings.name, timeZone: settings.timeZone.identifier,
            weekStatus: weekStatus, resumesOn: resumesOn?.description, generatedAt: now.formatted(.iso8601))
        let monday = date.monday
        daysOff = (0..<7).compactMap { offset in
            let day = monday.adding(days: offset)
            return settings.breakOn(day).map { DayOff(date: day.description, name: $0.name) }
        }
    }
}

extension ScheduleResponse {
    /// Until when the payload built at `now` stays the same (but for `generatedAt`) while nothing is stored: the
    /// first instant a car park's reading or a bus's prediction grows too old, a bus leaves, or the campus day
    /// ends (today's date and departures move on).
    public static func validUntil(
        settings: CampusSettings, now: Date, carParks: [CarPark], departures: [Departure]
    ) -> Date {
        let clock = settings.clock
        let midnight = clock.instant(clock.date(of: now).adding(days: 1), LocalTime(hour: 0))
        let changes =
            carParks.compactMap { $0.liveEnds(after: now) } + departures.compactMap { $0.nextChange(after: now) }
        return changes.reduce(midnight) { min($0, $1) }
    }
}
