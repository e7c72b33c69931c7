import Foundation

/// A week as the week view lays it out: its days (Monday to Friday, and Saturday and Sunday when a class meets
/// then), each day's classes placed side by side where they clash, the days off named, and the hours the grid spans.
public struct WeekPlan: Equatable, Sendable {
    public var monday: LocalDate
    public var status: CampusSettings.WeekStatus
    public var days: [Day]
    /// The grid's first and last hours: 8 to 18, widened to every class of the week.
    public var firstHour: Int
    public var lastHour: Int

    public struct Day: Equatable, Sendable {
        public var date: LocalDate
        /// The break this day falls in (a week-long break, or a public holiday inside a teaching week).
        public var dayOff: TeachingBreak?
        public var classes: [Placed]
    }

    /// A meeting and where it sits: lane `lane` of `lanes` side by side, with the meetings it overlaps.
    public struct Placed: Equatable, Sendable {
        public var meeting: ClassMeeting
        public var lane: Int
        public var lanes: Int
        public var clashesWith: [ClassMeeting]

        public var clashes: Bool { !clashesWith.isEmpty }
    }

    static let usualHours = (first: 8, last: 18)
}

extension ClassMeeting {
    /// True when the two meet at the same time somewhere (one ending as the other starts is no clash).
    public func overlaps(_ other: ClassMeeting) -> Bool { start < other.end && other.start < end }
}

extension CampusSettings {
    /// The week of `date`, laid out for the week view.
    public func weekPlan(of date: LocalDate, classes: [TimetableClass]) -> WeekPlan {
        let monday = date.monday
        let campus = clock
        var days = (0..<7).map { offset in
            let day = monday.adding(days: offset)
            return WeekPlan.Day(date: day, dayOff: breakOn(day), classes: Self.placed(meetings(on: day, of: classes)))
        }
        // The weekend only when something meets then.
        days.removeAll { $0.date.weekday >= 6 && $0.classes.isEmpty }
        let week = days.flatMap(\.classes).map(\.meeting)
        let starts = week.map { campus.time(of: $0.start).hour }
        let ends = week.map { meeting in
            let end = campus.time(of: meeting.end)
            return end.minute > 0 ? end.hour + 1 : end.hour
        }
        return WeekPlan(
            monday: monday, status: status(of: monday), days: days,
            firstHour: min(WeekPlan.usualHours.first, starts.min() ?? 24),
            lastHour: min(24, max(WeekPlan.usualHours.last, ends.max() ?? 0)))
    }

    /// A day's meetings (in time order) in lanes: each group of meetings that overlap one another, directly or
    /// through another, shares its width; each meeting takes the first lane free at its start.
    static func placed(_ meetings: [ClassMeeting]) -> [WeekPlan.Placed] {
        var placed: [WeekPlan.Placed] = []
        var group: [WeekPlan.Placed] = []
        var laneEnds: [Date] = []
        var groupEnd = Date.distantPast
        func close() {
            placed += group.map {
                var item = $0; item.lanes = laneEnds.count; return item
            }
            group = []
            laneEnds = []
        }
        for meeting in meetings {
            if meeting.start >= groupEnd { close() }
            let lane = laneEnds.firstIndex { $0 <= meeting.start } ?? laneEnds.count
            if lane == laneEnds.count { laneEnds.append(meeting.end) } else { laneEnds[lane] = meeting.end }
            groupEnd = max(groupEnd, meeting.end)
            group.append(
                WeekPlan.Placed(
                    meeting: meeting, lane: lane, lanes: 1,
                    clashesWith: meetings.filter { $0 != meeting && $0.overlaps(meeting) }))
        }
        close()
        return placed
    }
}
