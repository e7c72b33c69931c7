import Foundation

/// A booking repeated daily or weekly until a date, but for the dates skipped: iCalendar's RRULE (`FREQ`,
/// `UNTIL`) and EXDATE. Each occurrence keeps the wall-clock times, so a weekly 10:00 stays at 10:00 across a
/// daylight-saving change.
public struct Recurrence: Sendable, Equatable, Codable {
    public enum Frequency: String, Sendable, Codable, CaseIterable {
        case daily
        case weekly

        var days: Int { self == .daily ? 1 : 7 }
    }

    public var frequency: Frequency
    /// The last date an occurrence may fall on (included).
    public var until: LocalDate
    /// Dates left out (EXDATE).
    public var skipped: Set<LocalDate>
    /// The most dates a series may leave out (the contract's `repeat.skip` `maxItems`): a horizon's worth.
    public static let maxSkipped = 400

    /// A series has at most this many occurrences (a daily one over the longest horizon has fewer).
    public static let maxOccurrences = 400

    public init(frequency: Frequency, until: LocalDate, skipped: Set<LocalDate> = []) {
        self.frequency = frequency
        self.until = until
        self.skipped = skipped
    }

    /// The dates from `first`, every day or week until `until`, without the skipped ones.
    public func dates(from first: LocalDate) -> [LocalDate] {
        stride(from: first.dayNumber, through: until.dayNumber, by: frequency.days).prefix(Self.maxOccurrences)
            .map(LocalDate.init(dayNumber:)).filter { !skipped.contains($0) }
    }

    /// The series as a building takes it from `first`: it ends within the horizon, after the first date.
    public func checked(from first: LocalDate, policy: BookingPolicy, today: LocalDate) throws(ValidationFailure) {
        if until < first {
            throw ValidationFailure(field: "until", message: "A series ends on or after its first date.")
        }
        if until > today.adding(days: policy.horizonDays) {
            throw ValidationFailure(
                field: "until", message: "A series ends within \(policy.horizonDays) days of today.")
        }
    }

    /// `RRULE:FREQ=WEEKLY;UNTIL=20270115T225959Z`: until the end of `until` in the campus's time zone.
    public func rule(clock: CampusClock) -> String {
        let end = clock.instant(until.adding(days: 1), LocalTime(hour: 0)).addingTimeInterval(-1)
        return "RRULE:FREQ=\(frequency.rawValue.uppercased());UNTIL=\(ICalendar.utc(end))"
    }
}

/// What became of one date of a series when it was booked.
public struct OccurrenceOutcome: Sendable, Equatable, Codable {
    public enum Result: String, Sendable, Codable {
        case booked
        /// Taken by others (no seat free, or not the whole room).
        case taken
        /// The building is closed then, or the time is not bookable that day (clocks changing, past).
        case unavailable
    }

    public var date: LocalDate
    public var result: Result
    /// Why it was not booked, in words.
    public var reason: String?

    public init(date: LocalDate, result: Result, reason: String? = nil) {
        self.date = date
        self.result = result
        self.reason = reason
    }
}
