import Foundation

/// A room's day on the campus clock, quarter hour by quarter hour within its opening hours: what the day view
/// shows, computed here so every client shows the same.
public struct RoomDay: Sendable, Equatable {
    public struct Slot: Sendable, Equatable {
        public var range: SlotRange
        public var freeSeats: Int
        /// Nobody holds any of it: the whole room can be booked then.
        public var empty: Bool
        /// A seat can still be booked from it: it has not ended, it is within the horizon, a seat is free.
        public var bookable: Bool
    }

    public var date: LocalDate
    /// The day's opening periods (none: closed).
    public var periods: [OpeningHours.Period]
    public var slots: [Slot]

    public init(date: LocalDate, policy: BookingPolicy, occupancy: Occupancy, clock: CampusClock, now: Date) {
        self.date = date
        periods = policy.hours.periods(on: date)
        let current = SlotRange.slot(containing: now)
        let withinHorizon = date <= clock.date(of: now).adding(days: policy.horizonDays)
        var seen = Set<Int>()
        var slots: [Slot] = []
        for period in periods {
            for minute in stride(from: period.open, to: period.close, by: 15) {
                let time = LocalTime(hour: minute / 60, minute: minute % 60)
                let start = clock.instant(date, time)
                // A time the clocks skip does not exist; one they repeat is listed once.
                guard clock.time(of: start) == time, clock.date(of: start) == date,
                    let slot = SlotRange.slot(at: start), seen.insert(slot).inserted
                else { continue }
                let range = SlotRange(lower: slot, upper: slot + 1)!
                let free = occupancy.freeSeats(in: slot)
                slots.append(
                    Slot(
                        range: range, freeSeats: free, empty: occupancy.allows(.room, during: range),
                        bookable: slot >= current && withinHorizon && free > 0))
            }
        }
        self.slots = slots
    }

    /// The whole day's slots, midnight to midnight on the campus clock: what to read bookings for.
    public static func span(of date: LocalDate, clock: CampusClock) -> SlotRange {
        let start = SlotRange.slot(containing: clock.instant(date, LocalTime(hour: 0)))
        let end = SlotRange.slot(containing: clock.instant(date.adding(days: 1), LocalTime(hour: 0)))
        return SlotRange(lower: start, upper: max(end, start + 1))!
    }
}
