import Foundation

/// When a building's rooms can be booked, in campus time: periods per weekday on the 15-minute grid.
/// Written as people write it, `Mon-Fri 08:00-20:00; Sat 09:00-13:00`, and stored so.
public struct OpeningHours: Sendable, Equatable, Codable, CustomStringConvertible {
    /// Open from `open` to `close`, in minutes since midnight (`close` 1440: until the day's end).
    public struct Period: Sendable, Equatable, Comparable {
        public let open: Int
        public let close: Int

        public init(open: Int, close: Int) {
            self.open = open
            self.close = close
        }

        public func contains(_ start: Int, _ end: Int) -> Bool { open <= start && end <= close }

        public var description: String { Self.text(open) + "-" + Self.text(close) }

        public static func < (a: Period, b: Period) -> Bool { a.open < b.open }

        static func text(_ minutes: Int) -> String {
            String(minutes / 60).leftPadded(2) + ":" + String(minutes % 60).leftPadded(2)
        }
    }

    static let dayNames = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]

    /// By ISO weekday less one: 0 Monday … 6 Sunday; a day without periods is closed.
    public let days: [[Period]]

    /// Weekdays 08:00 to 20:00: a campus's usual hours, until an admin sets others.
    public static let weekdays = OpeningHours(
        days: Array(repeating: [Period(open: 480, close: 1200)], count: 5) + [[], []])

    /// Every day, all day: a building nobody set up, so its rooms can be booked as they always could.
    public static let always = OpeningHours(days: Array(repeating: [Period(open: 0, close: 1440)], count: 7))

    public init(days: [[Period]]) {
        precondition(days.count == 7)
        self.days = days.map { $0.sorted() }
    }

    /// The periods of `date`'s weekday.
    public func periods(on date: LocalDate) -> [Period] { days[date.weekday - 1] }

    /// When it next opens after `now`, on the campus's wall clock: nil when it is open now, or opens on no day of the
    /// coming week.
    public func nextOpening(after now: Date, clock: CampusClock) -> Date? {
        let today = clock.date(of: now)
        let minute = clock.time(of: now).minutes
        if periods(on: today).contains(where: { $0.open <= minute && minute < $0.close }) { return nil }
        for offset in 0...7 {
            let date = today.adding(days: offset)
            if let period = periods(on: date).first(where: { offset > 0 || $0.open > minute }) {
                return clock.instant(date, LocalTime(hour: period.open / 60, minute: period.open % 60))
            }
        }
        return nil
    }

    /// Whether the quarter hour `slot` falls in one of the periods, on the campus's wall clock.
    public func isOpen(inSlot slot: Int, clock: CampusClock) -> Bool {
        let start = SlotRange.instant(ofSlot: slot)
        let minute = clock.time(of: start).minutes
        return periods(on: clock.date(of: start)).contains { $0.open <= minute && minute < $0.close }
    }

    /// Parses `Mon-Fri 08:00-12:00,13:00-20:00; Sat 09:00-13:00` (days not named are closed; `24:00` closes at
    /// midnight). Every time is on the quarter hour, periods of a day do not overlap, a day is named once.
    public init(_ text: String) throws(ValidationFailure) {
        func fail(_ message: String) -> ValidationFailure { ValidationFailure(field: "hours", message: message) }
        var days: [[Period]?] = Array(repeating: nil, count: 7)
        for part in text.split(separator: ";").map({ $0.trimmingCharacters(in: .whitespaces) }) where !part.isEmpty {
            let words = part.split(separator: " ", maxSplits: 1).map(String.init)
            guard words.count == 2 else {
                throw fail("Write the days, then the hours: Mon-Fri 08:00-20:00; Sat 09:00-13:00.")
            }
            guard let named = Self.days(words[0]) else {
                throw fail("\"\(words[0])\" is not a day or a span of days such as Mon-Fri.")
            }
            var periods: [Period] = []
            for range in words[1].split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) {
                let ends = range.split(separator: "-").map(String.init)
                guard ends.count == 2, let open = Self.minutes(ends[0]), let close = Self.minutes(ends[1]),
                    open < close
                else { throw fail("\"\(range)\" is not a span of time such as 08:00-20:00.") }
                guard open % 15 == 0, close % 15 == 0 else {
                    throw fail("\"\(range)\" does not begin and end on the quarter hour.")
                }
                periods.append(Period(open: open, close: close))
            }
            periods.sort()
            for (a, b) in zip(periods, periods.dropFirst()) where b.open < a.close {
                throw fail("\(a.description) and \(b.description) overlap.")
            }
            for day in named {
                guard days[day] == nil else { throw fail("\(Self.dayNames[day]) is named twice.") }
                days[day] = periods
            }
        }
        self.init(days: days.map { $0 ?? [] })
    }

    /// From a form's seven rows, Monday first: an opening and a closing time each (`HH:MM`; both empty: closed; a
    /// close of `00:00`: midnight). Checked as the text is.
    public init(week: [(open: String, close: String)]) throws(ValidationFailure) {
        var parts: [String] = []
        for (day, row) in week.prefix(7).enumerated() {
            let (open, close) = (
                row.open.trimmingCharacters(in: .whitespaces), row.close.trimmingCharacters(in: .whitespaces)
            )
            if open.isEmpty, close.isEmpty { continue }
            guard !open.isEmpty, !close.isEmpty else {
                throw ValidationFailure(
                    field: "hours", message: "\(Self.dayNames[day]): give both times, or neither when it is closed.")
            }
            parts.append("\(Self.dayNames[day]) \(open)-\(close == "00:00" ? "24:00" : close)")
        }
        try self.init(parts.joined(separator: "; "))
    }

    /// The seven rows of a form (`HH:MM`, both empty when closed, midnight as `00:00`); nil when a day has more than
    /// one period, which only the text can say.
    public var week: [(open: String, close: String)]? {
        guard days.allSatisfy({ $0.count <= 1 }) else { return nil }
        return days.map { periods in
            periods.first.map {
                (Period.text($0.open), $0.close == 1440 ? "00:00" : Period.text($0.close))
            } ?? ("", "")
        }
    }

    /// `Mon-Fri 08:00-20:00; Sat 09:00-13:00`: consecutive days with the same hours as one span.
    public var description: String {
        var parts: [String] = []
        var day = 0
        while day < 7 {
            var last = day
            while last + 1 < 7, days[last + 1] == days[day] { last += 1 }
            if !days[day].isEmpty {
                let name = last == day ? Self.dayNames[day] : Self.dayNames[day] + "-" + Self.dayNames[last]
                parts.append(name + " " + days[day].map(\.description).joined(separator: ","))
            }
            day = last + 1
        }
        return parts.joined(separator: "; ")
    }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        do {
            try self.init(text)
        } catch {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: error.errors.first?.message ?? text))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }

    /// `Mon`, `Mon-Fri`, `Sat,Sun` as day indexes.
    private static func days(_ text: String) -> [Int]? {
        var result: [Int] = []
        for item in text.split(separator: ",") {
            let ends = item.split(separator: "-").map { dayNames.firstIndex(of: $0.capitalized) }
            guard (1...2).contains(ends.count), let first = ends.first!, let last = ends.last!, first <= last else {
                return nil
            }
            result += Array(first...last)
        }
        return result.isEmpty ? nil : result
    }

    /// `08:30` as 510; `24:00` as 1440.
    private static func minutes(_ text: String) -> Int? {
        if text == "24:00" { return 1440 }
        return LocalTime(text)?.minutes
    }
}
