import Foundation

/// When a booking can be checked in: from a quarter hour before it starts until it ends (the server, the pages and
/// the kit all ask here).
public enum CheckInWindow {
    public static let opensBefore: TimeInterval = 900

    public static func isOpen(start: Date, end: Date, at now: Date) -> Bool {
        now >= start.addingTimeInterval(-opensBefore) && now < end
    }
}

/// A building's rules for booking its rooms in time: when they open, how far ahead and how long one may book,
/// and whether a booking must be checked in (and by when after its start) or is released.
public struct BookingPolicy: Sendable, Equatable, Codable {
    public var hours: OpeningHours
    /// Bookings start at most this many days after today (campus time).
    public var horizonDays: Int
    /// A booking lasts at most this long.
    public var maxMinutes: Int
    /// Minutes after its start within which a booking must be checked in, else it is released; nil: no check-in.
    public var checkInMinutes: Int?

    /// A building nobody set up: open at all hours (as rooms were before they had time), eight weeks ahead, four
    /// hours at most, no check-in.
    public static let `default` = BookingPolicy(hours: .always, horizonDays: 56, maxMinutes: 240, checkInMinutes: nil)

    public init(hours: OpeningHours, horizonDays: Int, maxMinutes: Int, checkInMinutes: Int?) {
        self.hours = hours
        self.horizonDays = horizonDays
        self.maxMinutes = maxMinutes
        self.checkInMinutes = checkInMinutes
    }

    public static let horizonLimits = 1...365
    public static let lengthLimits = 15...1440
    public static let checkInLimits = 5...240

    /// A building's policy as an admin types it; every field at fault is named. Hours are `OpeningHours` text, check-in
    /// minutes empty for none.
    public static func validated(
        hours: String?, horizonDays: Int?, maxMinutes: Int?, checkInMinutes: Int?
    ) throws(ValidationFailure) -> BookingPolicy {
        var errors: [FieldError] = []
        var parsed = OpeningHours.weekdays
        do {
            parsed = try OpeningHours(hours ?? "")
        } catch {
            errors += error.errors
        }
        let horizon = horizonDays ?? 0
        if !horizonLimits.contains(horizon) {
            errors.append(.init(field: "horizonDays", message: "Book ahead from 1 to 365 days."))
        }
        let longest = maxMinutes ?? 0
        if !lengthLimits.contains(longest) || longest % 15 != 0 {
            errors.append(
                .init(field: "maxMinutes", message: "The longest booking is whole quarter hours, up to 1,440 minutes."))
        }
        // Every deadline falls on a five-minute mark (bookings start on the quarter hour), where the release looks.
        if let checkIn = checkInMinutes, !checkInLimits.contains(checkIn) || checkIn % 5 != 0 {
            errors.append(
                .init(
                    field: "checkInMinutes",
                    message: "Check in within 5 to 240 minutes, in fives, or not at all."))
        }
        guard errors.isEmpty else { throw ValidationFailure(errors) }
        return BookingPolicy(hours: parsed, horizonDays: horizon, maxMinutes: longest, checkInMinutes: checkInMinutes)
    }

    /// The slots of a booking from `start` on `date` for `minutes`, if this building takes it at `now`: on the
    /// quarter hour, within one opening period, not over, within the horizon and the longest length. Each rule
    /// broken is named.
    public func range(
        date: LocalDate, start: LocalTime, minutes: Int, clock: CampusClock, now: Date
    ) throws(ValidationFailure) -> SlotRange {
        var errors: [FieldError] = []
        if start.minute % 15 != 0 {
            errors.append(.init(field: "start", message: "Start on the quarter hour (:00, :15, :30 or :45)."))
        }
        if minutes <= 0 || minutes % 15 != 0 {
            errors.append(.init(field: "minutes", message: "A booking lasts a whole number of quarter hours."))
        } else if minutes > maxMinutes {
            errors.append(.init(field: "minutes", message: "A booking lasts at most \(maxMinutes) minutes here."))
        }
        let today = clock.date(of: now)
        if date > today.adding(days: horizonDays) {
            errors.append(.init(field: "date", message: "Rooms can be booked up to \(horizonDays) days ahead."))
        }
        guard errors.isEmpty else { throw ValidationFailure(errors) }
        if let closed = closedReason(date: date, start: start.minutes, end: start.minutes + minutes) {
            throw ValidationFailure(field: "start", message: closed)
        }
        let startInstant = clock.instant(date, start)
        let endInstant = startInstant.addingTimeInterval(Double(minutes * 60))
        // A time the clocks skip (spring forward) does not exist; an hour they repeat is one wall-clock hour longer.
        guard clock.date(of: startInstant) == date, clock.time(of: startInstant) == start,
            clock.time(of: endInstant).minutes == (start.minutes + minutes) % 1440,
            let range = SlotRange(start: startInstant, end: endInstant)
        else {
            throw ValidationFailure(field: "start", message: "The clocks change then: choose another time.")
        }
        // The quarter hour now falls in may still be booked ("from now"); an earlier one may not.
        if range.lower < SlotRange.slot(containing: now) {
            throw ValidationFailure(field: "start", message: "That time has passed.")
        }
        return range
    }

    /// Why `start ..< end` (minutes of `date`) cannot be booked for the opening hours, or nil when it fits one
    /// period.
    func closedReason(date: LocalDate, start: Int, end: Int) -> String? {
        let periods = hours.periods(on: date)
        if periods.contains(where: { $0.contains(start, end) }) { return nil }
        if periods.isEmpty { return "The building is closed on \(OpeningHours.dayNames[date.weekday - 1])." }
        return "Book within the opening hours: " + periods.map(\.description).joined(separator: ", ") + " that day."
    }

    /// When a booking of `range` made at `bookedAt` is released if nobody checked it in (its start, or when it was
    /// made if later, plus the minutes this building allows, on a five-minute mark), or nil when this building asks
    /// no check-in.
    public func checkInDeadline(for range: SlotRange, bookedAt: Date) -> Date? {
        guard let minutes = checkInMinutes else { return nil }
        let from = max(range.start, bookedAt).addingTimeInterval(Double(minutes * 60)).timeIntervalSince1970
        let mark = (from / 300).rounded(.up) * 300
        return min(Date(timeIntervalSince1970: mark), range.end)
    }

    /// From the quarter hour now falls in to the end of the opening period it is in: what the original apps'
    /// `bookRoom` takes. Nil when the building is closed now.
    public func restOfPeriod(at now: Date, clock: CampusClock) -> SlotRange? {
        let date = clock.date(of: now)
        let minute = clock.time(of: now).minutes / 15 * 15
        guard let period = hours.periods(on: date).first(where: { $0.open <= minute && minute < $0.close }) else {
            return nil
        }
        let close =
            period.close == 1440
            ? clock.instant(date.adding(days: 1), LocalTime(hour: 0))
            : clock.instant(date, LocalTime(hour: period.close / 60, minute: period.close % 60))
        return SlotRange(lower: SlotRange.slot(containing: now), upper: SlotRange.slot(containing: close))
    }
}
