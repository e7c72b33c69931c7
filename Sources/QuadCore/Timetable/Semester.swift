import Foundation

/// A break in teaching (mid-semester break, study week, a public holiday), both days included. No class
/// meets on any day inside a break. Weeks whose every weekday (Monday to Friday) falls inside breaks are
/// not teaching weeks and are not counted; a break that leaves a weekday out (Labour Day or Easter Monday,
/// Good Friday, Wednesday to Friday) only cancels its own days: the week keeps its number and its other
/// days keep their classes.
public struct TeachingBreak: Hashable, Sendable, Codable {
    public var name: String
    public var start: LocalDate
    public var end: LocalDate

    public init(name: String, start: LocalDate, end: LocalDate) {
        self.name = name
        self.start = start
        self.end = end
    }

    public func contains(_ date: LocalDate) -> Bool { start <= date && date <= end }
}

/// The campus and its semester. The teaching week number is always derived from these, never stored.
public struct CampusSettings: Sendable, Equatable {
    public var name: String
    public var timeZone: TimeZone
    /// The first day of teaching week 1 (any day of that week).
    public var semesterStart: LocalDate
    public var teachingWeeks: Int
    public var breaks: [TeachingBreak]

    public init(
        name: String, timeZone: TimeZone, semesterStart: LocalDate, teachingWeeks: Int, breaks: [TeachingBreak]
    ) {
        self.name = name
        self.timeZone = timeZone
        self.semesterStart = semesterStart
        self.teachingWeeks = teachingWeeks
        self.breaks = breaks.sorted { $0.start < $1.start }
    }

    public var clock: CampusClock { CampusClock(timeZone: timeZone) }

    /// Where a day falls in the semester.
    public enum WeekStatus: Equatable, Sendable {
        case beforeSemester(startsOn: LocalDate)
        case teaching(week: Int)
        /// In a break; teaching resumes on the Monday given (nil when no teaching weeks are left).
        case inBreak(TeachingBreak, resumesOn: LocalDate?)
        case afterSemester
    }

    /// True when the calendar week starting on `monday` is a break week: no weekday of it is left to teach.
    /// (A Monday holiday alone leaves Tuesday to Friday: still a teaching week.)
    func isBreakWeek(_ monday: LocalDate) -> Bool {
        (0..<5).allSatisfy { offset in breaks.contains { $0.contains(monday.adding(days: offset)) } }
    }

    /// The break `date` falls in, if any (a day off inside a teaching week included).
    public func breakOn(_ date: LocalDate) -> TeachingBreak? { breaks.first { $0.contains(date) } }

    /// The Mondays of teaching weeks 1 … `teachingWeeks`, skipping break weeks.
    public var teachingMondays: [LocalDate] {
        var mondays: [LocalDate] = []
        var monday = semesterStart.monday
        var guardWeeks = 0
        while mondays.count < teachingWeeks, guardWeeks < 200 {
            if !isBreakWeek(monday) { mondays.append(monday) }
            monday = monday.adding(days: 7)
            guardWeeks += 1
        }
        return mondays
    }

    public func status(of date: LocalDate) -> WeekStatus {
        let monday = date.monday
        let mondays = teachingMondays
        guard let first = mondays.first, monday >= first else {
            return .beforeSemester(startsOn: mondays.first ?? semesterStart)
        }
        if let index = mondays.firstIndex(of: monday) { return .teaching(week: index + 1) }
        guard let last = mondays.last, monday < last else { return .afterSemester }
        let resumes = mondays.first { $0 > monday }
        // The break taking most of the week's weekdays names it (a week-long break over a holiday in it).
        let weekdays = (0..<5).map { monday.adding(days: $0) }
        let covered = { (interruption: TeachingBreak) in weekdays.filter(interruption.contains).count }
        let interruption =
            breaks.filter { covered($0) > 0 }.max { covered($0) < covered($1) }
            ?? TeachingBreak(name: "", start: monday, end: monday.adding(days: 6))
        return .inBreak(interruption, resumesOn: resumes)
    }

    /// The teaching week number of `date`, nil outside teaching weeks.
    public func week(of date: LocalDate) -> Int? {
        if case .teaching(let week) = status(of: date) { return week }
        return nil
    }

    /// The date of `weekday` (1 Monday … 7 Sunday) in teaching week `week`.
    public func date(week: Int, weekday: Int) -> LocalDate? {
        let mondays = teachingMondays
        guard week >= 1, week <= mondays.count, (1...7).contains(weekday) else { return nil }
        return mondays[week - 1].adding(days: weekday - 1)
    }
}

/// A class that meets once a week: "FIT1031 Lecture 01", Fridays 10:00–12:00, in the weeks listed.
public struct TimetableClass: Hashable, Sendable, Codable {
    public var id: String
    public var course: String
    public var courseTitle: String
    /// Kind and number, as students know it: "Lecture 01", "Lab 01".
    public var name: String
    public var lecturer: String
    public var room: String
    public var campus: String
    /// 1 Monday … 7 Sunday.
    public var weekday: Int
    public var start: LocalTime
    public var end: LocalTime
    /// The teaching weeks it runs, e.g. 1…12.
    public var weeks: [Int]

    public init(
        id: String, course: String, courseTitle: String, name: String, lecturer: String, room: String,
        campus: String, weekday: Int, start: LocalTime, end: LocalTime, weeks: [Int]
    ) {
        self.id = id
        self.course = course
        self.courseTitle = courseTitle
        self.name = name
        self.lecturer = lecturer
        self.room = room
        self.campus = campus
        self.weekday = weekday
        self.start = start
        self.end = end
        self.weeks = weeks.sorted()
    }

    enum CodingKeys: String, CodingKey {
        case id, course, courseTitle, name, lecturer, room, campus, weekday, start, end, weeks
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        guard let start = LocalTime(try c.decode(String.self, forKey: .start)),
            let end = LocalTime(try c.decode(String.self, forKey: .end))
        else { throw DecodingError.dataCorruptedError(forKey: .start, in: c, debugDescription: "Not HH:mm") }
        self.init(
            id: try c.decode(String.self, forKey: .id), course: try c.decode(String.self, forKey: .course),
            courseTitle: try c.decode(String.self, forKey: .courseTitle),
            name: try c.decode(String.self, forKey: .name),
            lecturer: try c.decode(String.self, forKey: .lecturer), room: try c.decode(String.self, forKey: .room),
            campus: try c.decode(String.self, forKey: .campus), weekday: try c.decode(Int.self, forKey: .weekday),
            start: start, end: end, weeks: try c.decode([Int].self, forKey: .weeks))
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(course, forKey: .course)
        try c.encode(courseTitle, forKey: .courseTitle)
        try c.encode(name, forKey: .name)
        try c.encode(lecturer, forKey: .lecturer)
        try c.encode(room, forKey: .room)
        try c.encode(campus, forKey: .campus)
        try c.encode(weekday, forKey: .weekday)
        try c.encode(start.description, forKey: .start)
        try c.encode(end.description, forKey: .end)
        try c.encode(weeks, forKey: .weeks)
    }
}

/// One meeting of a class: a class on a date, with its start and end as instants.
public struct ClassMeeting: Hashable, Sendable {
    public var `class`: TimetableClass
    public var date: LocalDate
    public var start: Date
    public var end: Date

    public func isInProgress(at now: Date) -> Bool { start <= now && now < end }
}

/// What the day view shows: today's classes, or the next teaching day's and why.
public struct DayPlan: Equatable, Sendable {
    public enum Kind: String, Sendable {
        /// Classes later today (or in progress).
        case today
        /// Today's classes are over (or there were none): the next day with classes.
        case nextTeachingDay
        /// In a break: the first day with classes after it.
        case afterBreak
        /// No classes left this semester.
        case none
    }

    public var kind: Kind
    /// The day whose classes are shown (nil with `.none`).
    public var date: LocalDate?
    public var meetings: [ClassMeeting]
    /// When in a break, the day teaching resumes: the Monday after a break week, the next day with
    /// classes after a day off inside a teaching week.
    public var resumesOn: LocalDate?
    public var breakName: String?
}

extension CampusSettings {
    /// The meetings of `classes` on `date`, in time order (none outside teaching weeks, none on a day
    /// inside a break).
    public func meetings(on date: LocalDate, of classes: [TimetableClass]) -> [ClassMeeting] {
        guard let week = week(of: date), breakOn(date) == nil else { return [] }
        let clock = clock
        return classes.filter { $0.weekday == date.weekday && $0.weeks.contains(week) }
            .map {
                ClassMeeting(
                    class: $0, date: date, start: clock.instant(date, $0.start), end: clock.instant(date, $0.end))
            }
            .sorted { ($0.start, $0.class.course, $0.class.name) < ($1.start, $1.class.course, $1.class.name) }
    }

    /// The meetings in the teaching week of `date` (Monday to Sunday), in time order.
    public func meetings(inWeekOf date: LocalDate, of classes: [TimetableClass]) -> [ClassMeeting] {
        let monday = date.monday
        return (0..<7).flatMap { meetings(on: monday.adding(days: $0), of: classes) }
    }

    /// Today's classes while any is still to come or in progress; else the next teaching day's.
    public func plan(now: Date, classes: [TimetableClass]) -> DayPlan {
        let today = clock.date(of: now)
        let todays = meetings(on: today, of: classes)
        if todays.contains(where: { $0.end > now }) {
            return DayPlan(kind: .today, date: today, meetings: todays)
        }
        var resumesOn: LocalDate?
        var breakName: String?
        if case .inBreak(let interruption, let resumes) = status(of: today) {
            resumesOn = resumes
            breakName = interruption.name
        }
        let dayOff = resumesOn == nil ? breakOn(today) : nil
        if let dayOff { breakName = dayOff.name }
        // Only the teaching weeks still to come can hold the next classes: at most `teachingWeeks` × 7 days,
        // however far away the semester is.
        let tomorrow = today.adding(days: 1)
        for monday in teachingMondays where monday.adding(days: 6) >= tomorrow {
            for day in (0..<7).map({ monday.adding(days: $0) }) where day >= tomorrow {
                let next = meetings(on: day, of: classes)
                guard !next.isEmpty else { continue }
                // A day off inside a teaching week: teaching resumes on the day shown.
                if dayOff != nil { resumesOn = day }
                return DayPlan(
                    kind: resumesOn == nil ? .nextTeachingDay : .afterBreak, date: day, meetings: next,
                    resumesOn: resumesOn, breakName: breakName)
            }
        }
        return DayPlan(kind: .none, date: nil, meetings: [], resumesOn: resumesOn, breakName: breakName)
    }
}
