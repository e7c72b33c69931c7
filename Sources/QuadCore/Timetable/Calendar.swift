import Foundation

/// A calendar day on the campus's wall calendar, with no time zone: `2020-03-13`.
public struct LocalDate: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    public var year: Int
    public var month: Int
    public var day: Int

    public init(year: Int, month: Int, day: Int) {
        self.year = year
        self.month = month
        self.day = day
    }

    /// Parses `yyyy-MM-dd`; nil for anything else, or a day that does not exist.
    public init?(_ text: String) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
            let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]),
            (1...12).contains(month), (1...31).contains(day)
        else { return nil }
        self.init(year: year, month: month, day: day)
        guard LocalDate(dayNumber: dayNumber) == self else { return nil }
    }

    /// Days since 1970-01-01 (negative before), by the proleptic Gregorian calendar.
    public var dayNumber: Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146097 + doe - 719468
    }

    public init(dayNumber: Int) {
        let z = dayNumber + 719468
        let era = (z >= 0 ? z : z - 146096) / 146097
        let doe = z - era * 146097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        self.init(year: yoe + era * 400 + (month <= 2 ? 1 : 0), month: month, day: day)
    }

    /// ISO weekday: 1 Monday … 7 Sunday.
    public var weekday: Int {
        let d = (dayNumber + 3) % 7  // 1970-01-01 was a Thursday
        return (d < 0 ? d + 7 : d) + 1
    }

    public func adding(days: Int) -> LocalDate { LocalDate(dayNumber: dayNumber + days) }

    /// The Monday of this date's week.
    public var monday: LocalDate { adding(days: 1 - weekday) }

    public var description: String {
        String(year).leftPadded(4) + "-" + String(month).leftPadded(2) + "-" + String(day).leftPadded(2)
    }

    /// `yyyyMMdd`, as iCalendar writes dates.
    var compact: String { description.replacingOccurrences(of: "-", with: "") }

    public static func < (a: LocalDate, b: LocalDate) -> Bool { a.dayNumber < b.dayNumber }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let date = LocalDate(text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "Not yyyy-MM-dd"))
        }
        self = date
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

/// A time of day on the campus's clocks, to the minute: `10:00`.
public struct LocalTime: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    /// Minutes since midnight, 0 ..< 1440.
    public var minutes: Int

    public init(hour: Int, minute: Int = 0) {
        self.minutes = hour * 60 + minute
    }

    /// Parses `HH:mm` (or `HH:mm:ss` with zero seconds).
    public init?(_ text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2 || (parts.count == 3 && parts[2] == "00"), parts[0].count == 2, parts[1].count == 2,
            let hour = Int(parts[0]), let minute = Int(parts[1]), (0..<24).contains(hour), (0..<60).contains(minute)
        else { return nil }
        self.init(hour: hour, minute: minute)
    }

    public var hour: Int { minutes / 60 }
    public var minute: Int { minutes % 60 }

    public var description: String { String(hour).leftPadded(2) + ":" + String(minute).leftPadded(2) }

    public static func < (a: LocalTime, b: LocalTime) -> Bool { a.minutes < b.minutes }
}

extension String {
    func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}

/// Converts between instants and the campus's wall clock.
public struct CampusClock: Sendable {
    public let timeZone: TimeZone
    private let calendar: Calendar

    public init(timeZone: TimeZone) {
        self.timeZone = timeZone
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        self.calendar = calendar
    }

    public func date(of instant: Date) -> LocalDate {
        let parts = calendar.dateComponents([.year, .month, .day], from: instant)
        return LocalDate(year: parts.year!, month: parts.month!, day: parts.day!)
    }

    public func time(of instant: Date) -> LocalTime {
        let parts = calendar.dateComponents([.hour, .minute], from: instant)
        return LocalTime(hour: parts.hour!, minute: parts.minute!)
    }

    /// The instant the campus clocks show `time` on `date` (a time skipped by a DST change moves forward).
    public func instant(_ date: LocalDate, _ time: LocalTime, seconds: Int = 0) -> Date {
        let parts = DateComponents(
            year: date.year, month: date.month, day: date.day, hour: time.hour, minute: time.minute, second: seconds)
        return calendar.date(from: parts)!
    }

    /// The start of the next day on the campus's clock after `instant`: when words such as "today" next change.
    public func nextDay(after instant: Date) -> Date {
        self.instant(date(of: instant).adding(days: 1), LocalTime(hour: 0))
    }

    /// `yyyy-MM-dd'T'HH:mm:ss` in campus time, as the original app reads dates.
    public func wallClock(_ instant: Date) -> String {
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: instant)
        return LocalDate(year: parts.year!, month: parts.month!, day: parts.day!).description + "T"
            + String(parts.hour!).leftPadded(2) + ":" + String(parts.minute!).leftPadded(2) + ":"
            + String(parts.second!).leftPadded(2)
    }

    /// Parses `yyyy-MM-dd'T'HH:mm:ss` in campus time.
    public func parseWallClock(_ text: String) -> Date? {
        let parts = text.split(separator: "T")
        guard parts.count == 2, let date = LocalDate(String(parts[0])) else { return nil }
        let time = parts[1].split(separator: ":")
        guard time.count == 3, let h = Int(time[0]), let m = Int(time[1]), let s = Int(time[2]),
            (0..<24).contains(h), (0..<60).contains(m), (0..<60).contains(s)
        else { return nil }
        return instant(date, LocalTime(hour: h, minute: m), seconds: s)
    }
}
