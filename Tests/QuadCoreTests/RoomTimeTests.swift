import Foundation
import Testing

@testable import QuadCore

/// Rooms in time: opening hours, the quarter-hour grid, what a room's bookings leave free, series across a
/// daylight-saving change, and finding a room. Every instant is given: nothing here reads a clock.
@Suite struct RoomTimeTests {
    static let melbourne = CampusClock(timeZone: TimeZone(identifier: "Australia/Melbourne")!)
    /// Tuesday 1 December 2026, 09:07 in Melbourne.
    static let now = melbourne.instant(LocalDate("2026-12-01")!, LocalTime(hour: 9, minute: 7))
    static let tuesday = LocalDate("2026-12-01")!
    /// A campus's usual building: weekdays 08:00 to 20:00.
    static let weekdays = BookingPolicy(hours: .weekdays, horizonDays: 56, maxMinutes: 240, checkInMinutes: nil)

    static func range(_ date: LocalDate, _ start: String, _ minutes: Int) -> SlotRange {
        let begin = melbourne.instant(date, LocalTime(start)!)
        return SlotRange(start: begin, end: begin.addingTimeInterval(Double(minutes * 60)))!
    }

    // MARK: Opening hours

    @Test func openingHoursAreAWeekOfRowsOfTimesWhileEachDayHasOnePeriod() throws {
        let closed = ("", "")
        let hours = try OpeningHours(
            week: Array(repeating: ("08:00", "20:00"), count: 5) + [("09:00", "00:00"), closed])
        #expect(hours.description == "Mon-Fri 08:00-20:00; Sat 09:00-24:00")
        #expect(hours.week?.map(\.open) == ["08:00", "08:00", "08:00", "08:00", "08:00", "09:00", ""])
        #expect(hours.week?[5].close == "00:00")
        #expect(try OpeningHours("Mon 08:00-12:00,13:00-18:00").week == nil)  // two periods: only text says it
        #expect {
            try OpeningHours(week: [("08:00", "")] + Array(repeating: closed, count: 6))
        } throws: { ($0 as? ValidationFailure)?.errors.first?.message.hasPrefix("Mon: give both times") == true }
        #expect(throws: ValidationFailure.self) {
            try OpeningHours(week: [("20:00", "08:00")] + Array(repeating: closed, count: 6))
        }
    }

    @Test func openingHoursReadAndWriteAsPeopleWriteThem() throws {
        let hours = try OpeningHours("sat 09:00-13:00; Mon-Fri 08:00-12:00,13:00-20:00")
        #expect(hours.description == "Mon-Fri 08:00-12:00,13:00-20:00; Sat 09:00-13:00")
        #expect(try OpeningHours(hours.description) == hours)
        #expect(hours.periods(on: Self.tuesday).map(\.description) == ["08:00-12:00", "13:00-20:00"])
        #expect(hours.periods(on: Self.tuesday.adding(days: 5)).isEmpty)  // Sunday
        #expect(try OpeningHours("Mon-Sun 00:00-24:00").periods(on: Self.tuesday) == [.init(open: 0, close: 1440)])
        let json = try JSONEncoder().encode(hours)
        #expect(String(decoding: json, as: UTF8.self) == #""Mon-Fri 08:00-12:00,13:00-20:00; Sat 09:00-13:00""#)
        #expect(try JSONDecoder().decode(OpeningHours.self, from: json) == hours)
    }

    @Test(arguments: [
        ("Mon-Fri", "Write the days"), ("Funday 08:00-10:00", "is not a day"), ("Mon 08:00-07:00", "is not a span"),
        ("Mon 08:10-10:00", "quarter hour"), ("Mon 08:00-12:00,11:00-13:00", "overlap"),
        ("Mon-Fri 08:00-20:00; Fri 09:00-10:00", "Fri is named twice"),
    ])
    func hoursThatCannotBeAreRefusedWithTheReason(text: String, says: String) {
        #expect {
            _ = try OpeningHours(text)
        } throws: { error in
            (error as? ValidationFailure)?.errors.first?.message.contains(says) == true
        }
    }

    // MARK: A booking's time

    @Test func aBookingOnTheGridWithinTheHoursIsTaken() throws {
        let range = try Self.weekdays.range(
            date: Self.tuesday, start: LocalTime(hour: 10), minutes: 30, clock: Self.melbourne, now: Self.now)
        #expect(range == Self.range(Self.tuesday, "10:00", 30))
        #expect(range.minutes == 30 && range.slots.count == 2)
        // The quarter hour now falls in (09:00-09:15 at 09:07) may still be booked, from now.
        #expect(
            try Self.weekdays.range(
                date: Self.tuesday, start: LocalTime(hour: 9), minutes: 15, clock: Self.melbourne, now: Self.now)
                == Self.range(Self.tuesday, "09:00", 15))
    }

    @Test(arguments: [
        ("2026-12-01", "10:10", 30, "start", "quarter hour"),
        ("2026-12-01", "10:00", 20, "minutes", "whole number of quarter hours"),
        ("2026-12-01", "10:00", 255, "minutes", "at most 240 minutes"),
        ("2026-12-01", "19:45", 30, "start", "opening hours: 08:00-20:00"),
        ("2026-12-05", "10:00", 30, "start", "closed on Sat"),
        ("2026-12-01", "08:45", 15, "start", "has passed"),
        ("2027-01-27", "10:00", 30, "date", "56 days ahead"),
    ])
    func aBookingOutsideTheRulesSaysWhichRule(date: String, start: String, minutes: Int, field: String, says: String) {
        #expect {
            _ = try Self.weekdays.range(
                date: LocalDate(date)!, start: LocalTime(start)!, minutes: minutes, clock: Self.melbourne,
                now: Self.now)
        } throws: { error in
            let first = (error as? ValidationFailure)?.errors.first
            return first?.field == field && first?.message.contains(says) == true
        }
    }

    @Test func aTimeTheClocksSkipCannotBeBooked() throws {
        // Melbourne springs forward on Sunday 4 October 2026: 02:00 becomes 03:00.
        var policy = Self.weekdays
        policy.hours = try OpeningHours("Mon-Sun 00:00-24:00")
        let before = Self.melbourne.instant(LocalDate("2026-10-01")!, LocalTime(hour: 9))
        #expect {
            _ = try policy.range(
                date: LocalDate("2026-10-04")!, start: LocalTime(hour: 2, minute: 15), minutes: 30,
                clock: Self.melbourne, now: before)
        } throws: { error in
            (error as? ValidationFailure)?.errors.first?.message.contains("clocks change") == true
        }
        // Before and after the change, the same hours are bookable.
        let night = try policy.range(
            date: LocalDate("2026-10-04")!, start: LocalTime(hour: 3), minutes: 60, clock: Self.melbourne, now: before)
        #expect(night.minutes == 60)
    }

    @Test func theOriginalAppsBookingRunsFromNowToTheEndOfTheOpeningPeriod() throws {
        let rest = try #require(Self.weekdays.restOfPeriod(at: Self.now, clock: Self.melbourne))
        #expect(rest == Self.range(Self.tuesday, "09:00", 11 * 60))
        let night = Self.melbourne.instant(Self.tuesday, LocalTime(hour: 21))
        #expect(Self.weekdays.restOfPeriod(at: night, clock: Self.melbourne) == nil)
    }

    @Test func aBuildingNobodySetUpIsOpenAtAllHoursUntilMidnight() throws {
        let night = Self.melbourne.instant(Self.tuesday, LocalTime(hour: 21, minute: 40))
        let rest = try #require(BookingPolicy.default.restOfPeriod(at: night, clock: Self.melbourne))
        #expect(rest == Self.range(Self.tuesday, "21:30", 150))
        let slot = SlotRange.slot(containing: night)
        #expect(OpeningHours.always.isOpen(inSlot: slot, clock: Self.melbourne))
        #expect(!OpeningHours.weekdays.isOpen(inSlot: slot, clock: Self.melbourne))
        #expect(OpeningHours.weekdays.isOpen(inSlot: SlotRange.slot(containing: Self.now), clock: Self.melbourne))
    }

    @Test func aCheckInDeadlineFallsOnAFiveMinuteMark() throws {
        var policy = Self.weekdays
        let ten = Self.range(Self.tuesday, "10:00", 60)
        #expect(policy.checkInDeadline(for: ten, bookedAt: Self.now) == nil)
        policy.checkInMinutes = 10
        #expect(
            policy.checkInDeadline(for: ten, bookedAt: Self.now)
                == Self.melbourne.instant(Self.tuesday, LocalTime(hour: 10, minute: 10)))
        // Booked from now (09:07) in the quarter hour that began at 09:00: ten minutes from now, to the next mark.
        #expect(
            policy.checkInDeadline(for: Self.range(Self.tuesday, "09:00", 60), bookedAt: Self.now)
                == Self.melbourne.instant(Self.tuesday, LocalTime(hour: 9, minute: 20)))
        #expect {
            _ = try BookingPolicy.validated(
                hours: "Mon-Fri 08:00-20:00", horizonDays: 56, maxMinutes: 240, checkInMinutes: 7)
        } throws: { error in
            (error as? ValidationFailure)?.errors.first?.field == "checkInMinutes"
        }
    }

    // MARK: What a room's bookings leave free

    @Test func twentySeatsTakeTwentySeatBookingsAndNoMore() {
        let slot = Self.range(Self.tuesday, "10:00", 30)
        var room = Occupancy(seats: 20)
        var taken = 0
        for _ in 0..<200 where room.allows(.seat, during: slot) {
            room.add(.seat, during: slot)
            taken += 1
        }
        #expect(taken == 20)
        #expect(room.peakSeatsHeld == 20 && room.freeSeats(during: slot) == 0)
        // The quarter hours either side are free.
        #expect(room.freeSeats(during: Self.range(Self.tuesday, "10:30", 15)) == 20)
    }

    @Test func aWholeRoomBookingAndSeatBookingsExcludeEachOther() {
        let meeting = Self.range(Self.tuesday, "10:00", 60)
        var room = Occupancy(seats: 8, holds: [(meeting, .room)])
        #expect(!room.allows(.seat, during: Self.range(Self.tuesday, "10:45", 30)))
        #expect(!room.allows(.room, during: Self.range(Self.tuesday, "09:30", 45)))
        #expect(room.allows(.seat, during: Self.range(Self.tuesday, "11:00", 30)))  // touching is not overlapping
        room.add(.seat, during: Self.range(Self.tuesday, "11:00", 30))
        #expect(!room.allows(.room, during: Self.range(Self.tuesday, "11:15", 15)))
        #expect(room.peakSeatsHeld == 8)
    }

    @Test func rangesThatShareOneQuarterHourCompeteOnlyThere() {
        let morning = Self.range(Self.tuesday, "09:00", 75)  // to 10:15
        let late = Self.range(Self.tuesday, "10:00", 60)  // from 10:00
        #expect(morning.overlaps(late) && late.overlaps(morning))
        let room = Occupancy(seats: 1, holds: [(morning, .seat)])
        #expect(!room.allows(.seat, during: late))
        #expect(room.allows(.seat, during: Self.range(Self.tuesday, "10:15", 45)))
    }

    @Test func aGroupTakesAsManySeatsAsItHasPeopleOrNone() {
        let slot = Self.range(Self.tuesday, "10:00", 30)
        var room = Occupancy(seats: 8, groups: [(Self.range(Self.tuesday, "10:15", 15), .seat, 3)])
        #expect(room.freeSeats(during: slot) == 5)
        #expect(room.allows(.seat, seats: 5, during: slot))
        #expect(!room.allows(.seat, seats: 6, during: slot))
        #expect(!room.allows(.seat, seats: 0, during: slot))
        // Six people fit at 10:30, once the three have gone.
        #expect(room.allows(.seat, seats: 6, during: Self.range(Self.tuesday, "10:30", 30)))
        room.add(.seat, seats: 5, during: slot)
        #expect(room.freeSeats(during: slot) == 0 && room.peakSeatsHeld == 8)
        #expect(!room.allows(.room, during: Self.range(Self.tuesday, "10:00", 15)))
    }

    // MARK: Series

    @Test func aWeeklySeriesKeepsItsWallClockAcrossDaylightSavingAndSkipsItsSkippedDate() throws {
        // Mondays from 28 September 2026; Melbourne's clocks go forward on 4 October.
        let series = Recurrence(
            frequency: .weekly, until: LocalDate("2026-10-19")!, skipped: [LocalDate("2026-10-12")!])
        let dates = series.dates(from: LocalDate("2026-09-28")!)
        #expect(dates.map(\.description) == ["2026-09-28", "2026-10-05", "2026-10-19"])
        let starts = dates.map { Self.melbourne.instant($0, LocalTime(hour: 10)) }
        #expect(starts.map { Self.melbourne.time(of: $0) } == Array(repeating: LocalTime(hour: 10), count: 3))
        // 10:00 is 00:00 UTC before the change and 23:00 UTC the day before after it.
        let utc = CampusClock(timeZone: TimeZone(identifier: "UTC")!)
        #expect(starts.map { utc.time(of: $0).hour } == [0, 23, 23])
        #expect(series.rule(clock: Self.melbourne) == "RRULE:FREQ=WEEKLY;UNTIL=20261019T125959Z")
    }

    @Test func aSeriesEndsAfterItBeginsAndWithinTheHorizon() {
        let first = Self.tuesday
        #expect(throws: Never.self) {
            try Recurrence(frequency: .daily, until: first.adding(days: 56))
                .checked(from: first, policy: Self.weekdays, today: first)
        }
        #expect(throws: ValidationFailure.self) {
            try Recurrence(frequency: .daily, until: first.adding(days: -1))
                .checked(from: first, policy: Self.weekdays, today: first)
        }
        #expect(throws: ValidationFailure.self) {
            try Recurrence(frequency: .weekly, until: first.adding(days: 57))
                .checked(from: first, policy: Self.weekdays, today: first)
        }
        #expect(Recurrence(frequency: .daily, until: first.adding(days: 6)).dates(from: first).count == 7)
    }

    // MARK: Finding a room

    @Test func roomsThatFitComeMostRoomFirstAndTheOthersWithWhenTheyAreNextFree() {
        let asked = Self.range(Self.tuesday, "10:00", 30)
        let rooms = [
            RoomFinder.Candidate(id: "mina", name: "Mina", occupancy: Occupancy(seats: 6)),
            RoomFinder.Candidate(id: "helmold", name: "Helmold", occupancy: Occupancy(seats: 12)),
            // Big enough and free, but closed at 10:00.
            RoomFinder.Candidate(
                id: "late", name: "Late", occupancy: Occupancy(seats: 20),
                policy: BookingPolicy(
                    hours: try! OpeningHours("Mon-Fri 12:00-20:00"), horizonDays: 56, maxMinutes: 240,
                    checkInMinutes: nil)),
            // Booked whole until 11:00: free for six from 11:00.
            RoomFinder.Candidate(
                id: "yana", name: "Yana",
                occupancy: Occupancy(seats: 10, holds: [(Self.range(Self.tuesday, "09:00", 120), .room)])),
            // Five seats free at 10:00, but only from 10:15 for thirty minutes at 10:30.
            RoomFinder.Candidate(
                id: "ljerka", name: "Ljerka",
                occupancy: Occupancy(seats: 6, holds: [(Self.range(Self.tuesday, "10:00", 30), .seat)])),
            RoomFinder.Candidate(id: "tiny", name: "Tiny", occupancy: Occupancy(seats: 4)),
        ]
        let found = RoomFinder.find(rooms, range: asked, people: 6, clock: Self.melbourne)
        #expect(found.fitting.map(\.id) == ["helmold", "mina"])
        #expect(found.fitting.map(\.freeSeats) == [12, 6])
        #expect(found.others.map(\.id) == ["ljerka", "yana", "late", "tiny"])
        #expect(found.others[0].nextFree == Self.melbourne.instant(Self.tuesday, LocalTime(hour: 10, minute: 30)))
        #expect(found.others[1].nextFree == Self.melbourne.instant(Self.tuesday, LocalTime(hour: 11)))
        #expect(found.others[3].nextFree == nil)  // four seats never hold six
    }

    @Test func aGroupGetsTheWholeOfAnEmptyRoomThatHoldsMoreThanItsSeats() {
        let asked = Self.range(Self.tuesday, "10:00", 30)
        let rooms = [
            // Holds 12, four seats to book: six people fit only as the whole room, and only while it is empty.
            RoomFinder.Candidate(id: "mostafa", name: "Mostafa", occupancy: Occupancy(seats: 4), capacity: 12),
            RoomFinder.Candidate(
                id: "busy", name: "Busy",
                occupancy: Occupancy(seats: 4, holds: [(Self.range(Self.tuesday, "10:15", 15), .seat)]),
                capacity: 12),
            RoomFinder.Candidate(id: "mina", name: "Mina", occupancy: Occupancy(seats: 6)),
            RoomFinder.Candidate(id: "small", name: "Small", occupancy: Occupancy(seats: 4), capacity: 5),
        ]
        let found = RoomFinder.find(rooms, range: asked, people: 6, clock: Self.melbourne)
        #expect(found.fitting.map(\.id) == ["mina", "mostafa"])
        #expect(found.fitting.map(\.hold) == [.seat, .room])
        #expect(found.others.map(\.id) == ["busy", "small"])
        #expect(found.others[0].nextFree == Self.melbourne.instant(Self.tuesday, LocalTime(hour: 10, minute: 30)))
        #expect(found.others[1].nextFree == nil)  // it never holds six
        // Three people take seats in Mostafa, not the whole room.
        #expect(
            RoomFinder.find(rooms, range: asked, people: 3, clock: Self.melbourne).fitting.first { $0.id == "mostafa" }?
                .hold == .seat)
    }

    // MARK: A room's day

    @Test func aRoomsDayListsItsOpenQuarterHoursWithWhatIsFree() throws {
        let policy = BookingPolicy(
            hours: try OpeningHours("Tue 09:00-10:00"), horizonDays: 56, maxMinutes: 240, checkInMinutes: nil)
        let occupancy = Occupancy(
            seats: 2,
            holds: [
                (Self.range(Self.tuesday, "09:15", 30), .seat), (Self.range(Self.tuesday, "09:30", 15), .seat),
            ])
        let day = RoomDay(
            date: Self.tuesday, policy: policy, occupancy: occupancy, clock: Self.melbourne, now: Self.now)
        #expect(day.periods.map(\.description) == ["09:00-10:00"])
        #expect(
            day.slots.map { Self.melbourne.time(of: $0.range.start).description } == [
                "09:00", "09:15", "09:30", "09:45",
            ])
        #expect(day.slots.map(\.freeSeats) == [2, 1, 0, 2])
        #expect(day.slots.map(\.empty) == [true, false, false, true])
        // At 09:07 the 09:00 quarter hour may still be booked; the full one may not.
        #expect(day.slots.map(\.bookable) == [true, true, false, true])
        let closed = RoomDay(
            date: Self.tuesday.adding(days: 1), policy: policy, occupancy: occupancy, clock: Self.melbourne,
            now: Self.now)
        #expect(closed.periods.isEmpty && closed.slots.isEmpty)
        // Melbourne springs forward on 4 October 2026: that day has 92 quarter hours, not 96.
        let always = BookingPolicy.default
        let spring = RoomDay(
            date: LocalDate("2026-10-04")!, policy: always, occupancy: Occupancy(seats: 1), clock: Self.melbourne,
            now: Self.melbourne.instant(LocalDate("2026-10-01")!, LocalTime(hour: 9)))
        #expect(spring.slots.count == 92)
        #expect(RoomDay.span(of: LocalDate("2026-10-04")!, clock: Self.melbourne).slots.count == 92)
    }

    // MARK: In a person's calendar

    @Test func aSeriesIsOneEventWithItsRuleTheDatesWithoutABookingAndAReminder() {
        // Mondays from 28 September 2026 (across Melbourne's change on 4 October) to 26 October, 10:00 for an
        // hour; the 12 October date was skipped and 19 October cancelled since.
        let rule = Recurrence(frequency: .weekly, until: LocalDate("2026-10-26")!)
        let booked: Set<LocalDate> = ["2026-09-28", "2026-10-05", "2026-10-26"].map { LocalDate($0)! }.reduce(
            into: []
        ) { $0.insert($1) }
        let series = CalendarBooking.series(
            uid: "series-1", summary: "Mina", location: "Mina, Library Wing", rule: rule,
            ruleFirst: LocalDate("2026-09-28")!, start: LocalTime(hour: 10), minutes: 60, booked: booked)!
        #expect(series.excluded.map(\.description) == ["2026-10-12", "2026-10-19"])
        let settings = CampusSettings(
            name: "Clayton", timeZone: Self.melbourne.timeZone, semesterStart: LocalDate("2026-07-27")!,
            teachingWeeks: 12, breaks: [])
        let text = ICalendar.write(
            settings: settings, classes: [], bookings: [series], calendarName: "Kier", stamp: Self.now)
        let lines = text.components(separatedBy: "\r\n")
        #expect(lines.contains("DTSTART;TZID=Australia/Melbourne:20260928T100000"))
        #expect(lines.contains("DURATION:PT60M"))
        #expect(lines.contains("RRULE:FREQ=WEEKLY;UNTIL=20261026T125959Z"))
        #expect(lines.contains("EXDATE;TZID=Australia/Melbourne:20261012T100000,20261019T100000"))
        #expect(lines.contains("TRIGGER:-PT15M"))
        #expect(lines.filter { $0 == "BEGIN:VEVENT" }.count == 1)
        // Nothing left booked: no event at all.
        #expect(
            CalendarBooking.series(
                uid: "series-1", summary: "Mina", location: "", rule: rule, ruleFirst: LocalDate("2026-09-28")!,
                start: LocalTime(hour: 10), minutes: 60, booked: []) == nil)
    }
}
