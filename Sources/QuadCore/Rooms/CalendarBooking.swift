import Foundation

/// A room booking as a person's calendar shows it: once, or a series (its rule, and the dates of the rule that hold
/// no booking: skipped, taken when it was booked, or cancelled since). Times are on the campus's wall clock.
public struct CalendarBooking: Sendable, Equatable, Codable {
    /// Stays the same from one download to the next, so calendars update rather than duplicate.
    public var uid: String
    public var summary: String
    public var location: String
    public var first: LocalDate
    public var start: LocalTime
    public var minutes: Int
    public var recurrence: Recurrence?
    public var excluded: [LocalDate]

    /// A reminder this long before each start.
    public static let reminderMinutes = 15

    public init(
        uid: String, summary: String, location: String, first: LocalDate, start: LocalTime, minutes: Int,
        recurrence: Recurrence? = nil, excluded: [LocalDate] = []
    ) {
        self.uid = uid
        self.summary = summary
        self.location = location
        self.first = first
        self.start = start
        self.minutes = minutes
        self.recurrence = recurrence
        self.excluded = excluded
    }

    /// A series from its rule and the dates still booked: the rule's dates from the first booked one, less those
    /// without a booking (nil when none is left).
    public static func series(
        uid: String, summary: String, location: String, rule: Recurrence, ruleFirst: LocalDate, start: LocalTime,
        minutes: Int, booked: Set<LocalDate>
    ) -> CalendarBooking? {
        let dates = Recurrence(frequency: rule.frequency, until: rule.until).dates(from: ruleFirst)
        guard let first = dates.first(where: booked.contains) else { return nil }
        let excluded = dates.filter { $0 > first && !booked.contains($0) }
        return CalendarBooking(
            uid: uid, summary: summary, location: location, first: first, start: start, minutes: minutes,
            recurrence: Recurrence(frequency: rule.frequency, until: rule.until), excluded: excluded)
    }
}
