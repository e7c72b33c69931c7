import Foundation
import Testing

@testable import QuadCore

@Suite struct TimetableTests {
    static let melbourne = TimeZone(identifier: "Australia/Melbourne")!

    /// Monash semester 1, 2020: teaching from Monday 2 March, mid-semester break 13–19 April
    /// (Melbourne's clocks go back on Sunday 5 April, the last day of week 5).
    static let semester = CampusSettings(
        name: "Clayton", timeZone: melbourne, semesterStart: LocalDate("2020-03-02")!, teachingWeeks: 12,
        breaks: [
            TeachingBreak(name: "Mid-semester break", start: LocalDate("2020-04-13")!, end: LocalDate("2020-04-19")!)
        ])

    static let lecture = TimetableClass(
        id: "fit1031-lecture-01", course: "FIT1031", courseTitle: "Computers and networks", name: "Lecture 01",
        lecturer: "Arun", room: "S4", campus: "13 College Walk, Clayton", weekday: 5, start: LocalTime("10:00")!,
        end: LocalTime("12:00")!, weeks: Array(1...12))
    static let lab = TimetableClass(
        id: "fit1031-lab-01", course: "FIT1031", courseTitle: "Computers and networks", name: "Lab 01",
        lecturer: "Arun", room: "S4", campus: "13 College Walk, Clayton", weekday: 5, start: LocalTime("12:30")!,
        end: LocalTime("13:30")!, weeks: Array(2...12))
    static let monday = TimetableClass(
        id: "fit1032-lecture-01", course: "FIT1032", courseTitle: "Programming", name: "Lecture 01",
        lecturer: "David", room: "S2", campus: "13 College Walk, Clayton", weekday: 1, start: LocalTime("17:00")!,
        end: LocalTime("18:00")!, weeks: Array(1...12))

    static func at(_ text: String) -> Date { semester.clock.parseWallClock(text)! }

    @Test func localDatesParseAndCount() {
        #expect(LocalDate("2020-02-29")?.description == "2020-02-29")
        #expect(LocalDate("2019-02-29") == nil)
        #expect(LocalDate("2020-3-1") == nil)
        #expect(LocalDate("2020-03-13")!.weekday == 5)
        #expect(LocalDate("2020-03-13")!.monday.description == "2020-03-09")
        #expect(LocalDate(dayNumber: LocalDate("1969-12-31")!.dayNumber).description == "1969-12-31")
        #expect(LocalDate("2020-03-01")!.adding(days: -1).description == "2020-02-29")
    }

    @Test func weekNumbersSkipTheBreak() {
        let s = Self.semester
        #expect(s.week(of: LocalDate("2020-03-02")!) == 1)
        #expect(s.week(of: LocalDate("2020-03-08")!) == 1)  // Sunday still week 1
        #expect(s.week(of: LocalDate("2020-04-10")!) == 6)
        #expect(s.week(of: LocalDate("2020-04-15")!) == nil)
        #expect(s.week(of: LocalDate("2020-04-20")!) == 7)  // after the break, the count goes on
        #expect(s.week(of: LocalDate("2020-05-01")!) == 8)
        #expect(s.week(of: LocalDate("2020-05-25")!) == 12)
        #expect(s.status(of: LocalDate("2020-06-01")!) == .afterSemester)
        #expect(s.status(of: LocalDate("2020-02-28")!) == .beforeSemester(startsOn: LocalDate("2020-03-02")!))
        #expect(
            s.status(of: LocalDate("2020-04-15")!) == .inBreak(s.breaks[0], resumesOn: LocalDate("2020-04-20")!))
    }

    @Test func weekNumberAcrossTheDaylightSavingChange() {
        let s = Self.semester
        // Clocks go back at 03:00 on Sunday 5 April 2020: 02:30 happens twice.
        let justBefore = Date(timeIntervalSince1970: 1_586_016_000 - 60)  // 2020-04-04T15:59Z = 02:59 AEDT
        let justAfter = Date(timeIntervalSince1970: 1_586_016_000 + 60)  // 02:01 AEST
        #expect(s.clock.date(of: justBefore).description == "2020-04-05")
        #expect(s.clock.date(of: justAfter).description == "2020-04-05")
        #expect(s.week(of: s.clock.date(of: justAfter)) == 5)
        // Late Sunday evening in UTC is already Monday of week 6 in Melbourne.
        let mondayMorning = Date(timeIntervalSince1970: 1_586_095_200)  // 2020-04-05T14:00Z
        #expect(s.week(of: s.clock.date(of: mondayMorning)) == 6)
        // A 10:00 class is at 10:00 on the wall clock either side of the change.
        let before = s.meetings(on: LocalDate("2020-04-03")!, of: [Self.lecture])[0]
        let after = s.meetings(on: LocalDate("2020-04-10")!, of: [Self.lecture])[0]
        #expect(s.clock.wallClock(before.start) == "2020-04-03T10:00:00")
        #expect(s.clock.wallClock(after.start) == "2020-04-10T10:00:00")
        #expect(after.start.timeIntervalSince(before.start) == 7 * 24 * 3600 + 3600)
    }

    @Test func todaysClassesThenTheNextTeachingDay() {
        let s = Self.semester
        let classes = [Self.lecture, Self.lab, Self.monday]
        // Friday 13 March, 11:00: the lecture is in progress.
        let morning = s.plan(now: Self.at("2020-03-13T11:00:00"), classes: classes)
        #expect(morning.kind == .today)
        #expect(morning.meetings.map(\.class.name) == ["Lecture 01", "Lab 01"])
        #expect(morning.meetings[0].isInProgress(at: Self.at("2020-03-13T11:00:00")))
        #expect(!morning.meetings[1].isInProgress(at: Self.at("2020-03-13T11:00:00")))
        // After the last class: Monday's.
        let evening = s.plan(now: Self.at("2020-03-13T13:30:00"), classes: classes)
        #expect(evening.kind == .nextTeachingDay)
        #expect(evening.date?.description == "2020-03-16")
        #expect(evening.meetings.map(\.class.course) == ["FIT1032"])
        // The lab does not run in week 1.
        #expect(s.meetings(on: LocalDate("2020-03-06")!, of: classes).map(\.class.name) == ["Lecture 01"])
    }

    @Test func inTheBreakTeachingResumes() {
        let s = Self.semester
        let plan = s.plan(now: Self.at("2020-04-14T09:00:00"), classes: [Self.lecture, Self.monday])
        #expect(plan.kind == .afterBreak)
        #expect(plan.resumesOn?.description == "2020-04-20")
        #expect(plan.date?.description == "2020-04-20")
        #expect(plan.breakName == "Mid-semester break")
        let over = s.plan(now: Self.at("2020-05-29T19:00:00"), classes: [Self.lecture, Self.monday])
        #expect(over.kind == .none)
    }

    @Test func carParkStates() {
        #expect(CarParkState(free: 0, capacity: 800) == .full)
        #expect(CarParkState(free: 10, capacity: 800) == .almostFull)
        #expect(CarParkState(free: 80, capacity: 800) == .almostFull)
        #expect(CarParkState(free: 81, capacity: 800) == .filling)
        #expect(CarParkState(free: 320, capacity: 800) == .filling)
        #expect(CarParkState(free: 645, capacity: 800) == .plenty)
        #expect(throws: ValidationFailure.self) { try CarPark.validateFree(801, capacity: 800) }
        #expect(throws: ValidationFailure.self) { try CarPark.validateFree(-1, capacity: 800) }
        #expect((try? CarPark.validateFree(800, capacity: 800)) == 800)
    }

    @Test func staleReadingsAndPredictions() {
        let now = Self.at("2020-03-13T06:00:00")
        let park = CarPark(id: "c", name: "Clayton", capacity: 800, free: 645, updatedAt: now.addingTimeInterval(-600))
        #expect(park.isLive(now: now))
        #expect(!park.isLive(now: now.addingTimeInterval(1)))
        #expect(!CarPark(id: "c", name: "C", capacity: 1, free: 1, updatedAt: nil).isLive(now: now))

        let scheduled = Self.at("2020-03-13T06:04:00")
        let predicted = Self.at("2020-03-13T06:04:05")
        let bus = Departure(
            id: "d", routeId: "r", from: "Clayton", to: "Caulfield", scheduled: scheduled, predicted: predicted,
            predictedAt: now.addingTimeInterval(-90))
        #expect(bus.expected(now: now) == (predicted, true))
        #expect(bus.expected(now: now.addingTimeInterval(1)) == (scheduled, false))
        #expect(
            Departure(id: "d", routeId: "r", from: "a", to: "b", scheduled: scheduled).expected(now: now).live == false)
    }

    @Test func theOriginalAppsModelDecodesTheResponse() throws {
        let now = Self.at("2020-03-13T06:00:00")
        let response = ScheduleResponse(
            settings: Self.semester, date: LocalDate("2020-03-13")!, now: now,
            student: .init(id: "305491", name: "Kier"), classes: [Self.lecture, Self.lab],
            carParks: [CarPark(id: "clayton", name: "Clayton live feed", capacity: 800, free: 645, updatedAt: now)],
            departures: [
                Departure(
                    id: "d1", routeId: "r", from: "Clayton", to: "Caulfield", scheduled: Self.at("2020-03-13T06:04:00"),
                    predicted: Self.at("2020-03-13T06:04:05"), predictedAt: now),
                Departure(
                    id: "gone", routeId: "r", from: "Clayton", to: "CBD", scheduled: Self.at("2020-03-13T05:00:00")),
            ])
        let data = try JSONEncoder().encode(response)
        let original = try JSONDecoder().decode(OriginalTimetable.self, from: data)
        #expect(original.week == 2)
        #expect(original.student.id == "305491")
        #expect(original.schedules.map(\.startTime) == ["2020-03-13T10:00:00", "2020-03-13T12:30:00"])
        #expect(original.schedules[0].scheduleClass == "Lecture 01")
        #expect(original.parkings.map(\.slot) == [645])
        #expect(original.stops.map(\.predictedArrivalDate) == ["2020-03-13T06:04:05"])
        // New fields only: the original model ignores them; a week without a day off lists none.
        #expect(response.daysOff == [])
        // And the reference payload decodes with Quad's own model.
        let reference = Data(Self.referencePayload.utf8)
        #expect(try JSONDecoder().decode(OriginalTimetable.self, from: reference).week == 8)
    }

    @Test func iCalendarHasOneWeeklyEventPerClassWithBreaksExcluded() {
        let text = ICalendar.write(
            settings: Self.semester, classes: [Self.lab, Self.lecture], calendarName: "Kier, timetable",
            stamp: Self.at("2020-03-01T09:00:00"))
        #expect(text.hasPrefix("BEGIN:VCALENDAR\r\n"))
        #expect(text.hasSuffix("END:VCALENDAR\r\n"))
        #expect(text.contains("BEGIN:VTIMEZONE\r\nTZID:Australia/Melbourne"))
        #expect(text.contains("TZOFFSETFROM:+1100\r\nTZOFFSETTO:+1000"))
        #expect(text.components(separatedBy: "BEGIN:VEVENT").count == 3)
        #expect(text.contains("UID:fit1031-lecture-01@quad"))
        #expect(text.contains("DTSTART;TZID=Australia/Melbourne:20200306T100000"))
        #expect(text.contains("DTSTART;TZID=Australia/Melbourne:20200313T123000"))  // the lab starts in week 2
        #expect(text.contains("EXDATE;TZID=Australia/Melbourne:20200417T100000"))
        #expect(text.contains("LOCATION:S4\\, 13 College Walk\\, Clayton"))
        #expect(text.contains("X-WR-CALNAME:Kier\\, timetable"))
        // UNTIL is the end of the last meeting (29 May, 12:00 AEST = 02:00Z).
        #expect(text.contains("RRULE:FREQ=WEEKLY;UNTIL=20200529T020000Z"))
        for line in text.components(separatedBy: "\r\n") { #expect(line.utf8.count <= 75) }
        // The same data gives the same calendar.
        #expect(
            text
                == ICalendar.write(
                    settings: Self.semester, classes: [Self.lecture, Self.lab], calendarName: "Kier, timetable",
                    stamp: Self.at("2020-03-01T09:00:00")))
    }

    /// 2025: Good Friday (18 April) alone, study days Wednesday to Friday of week 3, and a whole break week.
    static let semester2025 = CampusSettings(
        name: "Clayton", timeZone: melbourne, semesterStart: LocalDate("2025-03-03")!, teachingWeeks: 12,
        breaks: [
            TeachingBreak(name: "Good Friday", start: LocalDate("2025-04-18")!, end: LocalDate("2025-04-18")!),
            TeachingBreak(name: "Study days", start: LocalDate("2025-03-19")!, end: LocalDate("2025-03-21")!),
            TeachingBreak(name: "Mid-semester break", start: LocalDate("2025-04-21")!, end: LocalDate("2025-04-27")!),
        ])

    static func at2025(_ text: String) -> Date { semester2025.clock.parseWallClock(text)! }

    @Test func noClassesOnADayOffInsideATeachingWeek() {
        let s = Self.semester2025
        let classes = [Self.lecture, Self.monday]
        // The week keeps its number; only the break's own days lose their classes.
        #expect(s.week(of: LocalDate("2025-03-20")!) == 3)
        #expect(s.week(of: LocalDate("2025-03-24")!) == 4)
        #expect(s.week(of: LocalDate("2025-04-18")!) == 7)
        #expect(s.meetings(on: LocalDate("2025-03-17")!, of: classes).map(\.class.course) == ["FIT1032"])
        #expect(s.meetings(on: LocalDate("2025-03-21")!, of: classes).isEmpty)
        #expect(s.meetings(on: LocalDate("2025-04-18")!, of: classes).isEmpty)
        #expect(s.meetings(on: LocalDate("2025-04-11")!, of: classes).map(\.class.name) == ["Lecture 01"])
        #expect(s.meetings(inWeekOf: LocalDate("2025-04-14")!, of: classes).map(\.date.description) == ["2025-04-14"])
        // Tuesday of week 3 after class: the next teaching day skips the study days.
        let tuesday = s.plan(now: Self.at2025("2025-03-18T19:00:00"), classes: classes)
        #expect(tuesday.kind == .nextTeachingDay)
        #expect(tuesday.date?.description == "2025-03-24")
        // Thursday before Easter: not Good Friday, not the break week, but Monday 28 April.
        let thursday = s.plan(now: Self.at2025("2025-04-17T19:00:00"), classes: classes)
        #expect(thursday.kind == .nextTeachingDay)
        #expect(thursday.date?.description == "2025-04-28")
        // On Good Friday itself: the holiday is named and teaching resumes on the day shown.
        let holiday = s.plan(now: Self.at2025("2025-04-18T09:00:00"), classes: classes)
        #expect(holiday.kind == .afterBreak)
        #expect(holiday.breakName == "Good Friday")
        #expect(holiday.date?.description == "2025-04-28")
        #expect(holiday.resumesOn?.description == "2025-04-28")
        #expect(holiday.meetings.map(\.class.course) == ["FIT1032"])
        // The week's payload names the day off (and the original model still decodes it).
        let week = ScheduleResponse(
            settings: s, date: LocalDate("2025-04-16")!, now: Self.at2025("2025-04-16T09:00:00"),
            student: .init(id: "305491", name: "Kier"), classes: classes, carParks: [], departures: [])
        #expect(week.week == 7 && week.weekStatus == "teaching")
        #expect(week.daysOff == [.init(date: "2025-04-18", name: "Good Friday")])
        #expect(week.schedules.map(\.startTime) == ["2025-04-14T17:00:00"])
        #expect(throws: Never.self) {
            try JSONDecoder().decode(OriginalTimetable.self, from: JSONEncoder().encode(week))
        }
    }

    /// Labour Day (Monday 10 March 2025, in week 2) and Easter Monday (21 April, the first day of a Tuesday-to-
    /// Friday mid-semester break): a Monday holiday alone leaves its week teaching, with its number and its
    /// other days' classes; a holiday and a break that together take every weekday make a break week.
    @Test func aMondayHolidayKeepsTheRestOfItsWeek() {
        let s = CampusSettings(
            name: "Clayton", timeZone: Self.melbourne, semesterStart: LocalDate("2025-03-03")!, teachingWeeks: 12,
            breaks: [
                TeachingBreak(name: "Labour Day", start: LocalDate("2025-03-10")!, end: LocalDate("2025-03-10")!),
                TeachingBreak(name: "Easter Monday", start: LocalDate("2025-04-21")!, end: LocalDate("2025-04-21")!),
                TeachingBreak(
                    name: "Mid-semester break", start: LocalDate("2025-04-22")!, end: LocalDate("2025-04-25")!),
            ])
        let tuesday = TimetableClass(
            id: "fit1031-lab-01", course: "FIT1031", courseTitle: "Computers and networks", name: "Lab 01",
            lecturer: "Arun", room: "S4", campus: "Clayton", weekday: 2, start: LocalTime("12:30")!,
            end: LocalTime("13:30")!, weeks: Array(1...12))
        let classes = [Self.monday, tuesday, Self.lecture]
        #expect(s.week(of: LocalDate("2025-03-10")!) == 2)
        #expect(s.week(of: LocalDate("2025-03-11")!) == 2)
        #expect(s.week(of: LocalDate("2025-03-17")!) == 3)
        #expect(s.meetings(on: LocalDate("2025-03-10")!, of: classes).isEmpty)
        #expect(s.meetings(on: LocalDate("2025-03-11")!, of: classes).map(\.class.name) == ["Lab 01"])
        #expect(
            s.meetings(inWeekOf: LocalDate("2025-03-10")!, of: classes).map(\.date.description) == [
                "2025-03-11", "2025-03-14",
            ])
        // On Labour Day: named, and the next classes are Tuesday's.
        let holiday = s.plan(now: s.clock.parseWallClock("2025-03-10T09:00:00")!, classes: classes)
        #expect(holiday.kind == .afterBreak && holiday.breakName == "Labour Day")
        #expect(holiday.date?.description == "2025-03-11")
        // Easter Monday and the break after it take the whole week: not counted, named after the longer break.
        #expect(s.week(of: LocalDate("2025-04-17")!) == 7)
        #expect(s.week(of: LocalDate("2025-04-23")!) == nil)
        #expect(s.week(of: LocalDate("2025-04-28")!) == 8)
        guard case .inBreak(let interruption, let resumes) = s.status(of: LocalDate("2025-04-23")!) else {
            Issue.record("expected a break week")
            return
        }
        #expect(interruption.name == "Mid-semester break")
        #expect(resumes?.description == "2025-04-28")
        #expect(s.teachingMondays.count == 12)
        // The calendar skips Labour Day only: the Monday lecture's first exclusion is 10 March.
        let text = ICalendar.write(
            settings: s, classes: [Self.monday, tuesday], calendarName: "Kier",
            stamp: Self.at2025("2025-03-01T09:00:00"))
        let unfolded = text.replacingOccurrences(of: "\r\n ", with: "")
        #expect(unfolded.contains("EXDATE;TZID=Australia/Melbourne:20250310T170000,20250421T170000\r\n"))
        #expect(unfolded.contains("EXDATE;TZID=Australia/Melbourne:20250422T123000\r\n"))
    }

    @Test func iCalendarExcludesDaysOffInsideATeachingWeek() {
        let goodFridayOnly = TimetableClass(
            id: "fit1031-review", course: "FIT1031", courseTitle: "Computers and networks", name: "Review",
            lecturer: "Arun", room: "S4", campus: "Clayton", weekday: 5, start: LocalTime("14:00")!,
            end: LocalTime("15:00")!, weeks: [7])
        let text = ICalendar.write(
            settings: Self.semester2025, classes: [Self.lecture, Self.monday, goodFridayOnly], calendarName: "Kier",
            stamp: Self.at2025("2025-03-01T09:00:00"))
        let unfolded = text.replacingOccurrences(of: "\r\n ", with: "")
        // Study-days Friday, Good Friday and the break week's Friday are excluded; Mondays are untouched.
        #expect(
            unfolded.contains(
                "EXDATE;TZID=Australia/Melbourne:20250321T100000,20250418T100000,20250425T100000\r\n"))
        #expect(unfolded.components(separatedBy: "EXDATE").count == 3)
        #expect(unfolded.contains("EXDATE;TZID=Australia/Melbourne:20250421T170000\r\n"))
        // A class whose only meeting falls on Good Friday has no event at all.
        #expect(!text.contains("UID:fit1031-review@quad"))
        #expect(text.components(separatedBy: "BEGIN:VEVENT").count == 3)
    }

    @Test func aBreakThatSwallowsTheSemesterDoesNotCrash() {
        // Stored before validation refused it: a break covering every teaching week.
        let s = CampusSettings(
            name: "Clayton", timeZone: Self.melbourne, semesterStart: LocalDate("2025-03-03")!, teachingWeeks: 12,
            breaks: [TeachingBreak(name: "Closed", start: LocalDate("2025-01-01")!, end: LocalDate("2029-12-31")!)])
        #expect(s.teachingMondays.isEmpty)
        #expect(s.date(week: 1, weekday: 1) == nil)
        #expect(Self.semester.date(week: 0, weekday: 1) == nil)
        #expect(Self.semester.date(week: 13, weekday: 1) == nil)
        #expect(Self.semester.date(week: 7, weekday: 1)?.description == "2020-04-20")
        let text = ICalendar.write(
            settings: s, classes: [Self.lecture, Self.monday], calendarName: "Kier",
            stamp: Self.at2025("2025-03-01T09:00:00"))
        #expect(text.hasSuffix("END:VCALENDAR\r\n"))
        #expect(!text.contains("BEGIN:VEVENT"))
        #expect(s.plan(now: Self.at2025("2025-03-05T09:00:00"), classes: [Self.lecture]).kind == .none)
        #expect(s.week(of: LocalDate("2025-03-05")!) == nil)
    }

    @Test func campusBreaksMustLeaveEveryTeachingWeek() throws {
        let failure = #expect(throws: ValidationFailure.self) {
            try TimetableInput.campus(
                name: "Clayton", timeZone: "Australia/Melbourne", semesterStart: "2025-03-03", teachingWeeks: "12",
                breaks: "Closed; 2025-01-01; 2029-12-31")
        }
        #expect(failure?.errors.map(\.field) == ["breaks"])
        #expect(failure?.errors.first?.message.contains("0 of the 12") == true)
        // A week-long break and Good Friday still leave twelve teaching weeks.
        let fine = try TimetableInput.campus(
            name: "Clayton", timeZone: "Australia/Melbourne", semesterStart: "2025-03-03", teachingWeeks: "12",
            breaks: "Mid-semester break; 2025-04-21; 2025-04-27\nGood Friday; 2025-04-18; 2025-04-18")
        #expect(fine.teachingMondays.count == 12)
        #expect(fine.breaks.map(\.name) == ["Good Friday", "Mid-semester break"])
    }

    @Test func longLinesAreFoldedWithoutSplittingCharacters() {
        let line = "DESCRIPTION:" + String(repeating: "é", count: 60)
        let folded = ICalendar.fold(line)
        let parts = folded.components(separatedBy: "\r\n ")
        #expect(parts.count == 2)
        #expect(parts.allSatisfy { $0.utf8.count <= 75 })
        #expect(parts.joined() == line)
    }

    @Test func stringsInBothLanguages() {
        #expect(Localizer(language: .english)("timetable.greeting", ["name": "Kier"]) == "Hey, Kier")
        #expect(Localizer(language: .english)("timetable.week", ["week": "8"]) == "Week 8")
        #expect(Localizer(language: .french)("timetable.week", ["week": "8"]) == "Semaine 8")
        #expect(Localizer(language: .french)("timetable.minutes", count: 1) == "dans 1 minute")
        #expect(Localizer(language: .french)("timetable.minutes", count: 0) == "maintenant")
    }

    /// A week's payload stays the same (but for when it was made) until `validUntil`, and changes there: a
    /// prediction or a reading grows too old, a bus leaves, or the day ends.
    @Test func aSchedulePayloadHoldsUntilItsNextChange() {
        let now = Self.at("2020-03-13T10:15:00")
        let park = CarPark(id: "clayton", name: "Clayton", capacity: 900, free: 645, updatedAt: now - 60)
        let predicted = Departure(
            id: "a", routeId: "r", from: "Clayton", to: "Caulfield", scheduled: now + 1800, predicted: now + 1900,
            predictedAt: now - 30)
        let scheduled = Departure(id: "b", routeId: "r", from: "Clayton", to: "Caulfield", scheduled: now + 300)
        func payload(_ at: Date, _ parks: [CarPark], _ buses: [Departure]) -> ScheduleResponse {
            var payload = ScheduleResponse(
                settings: Self.semester, date: LocalDate("2020-03-13")!, now: at, student: .init(id: "1", name: "K"),
                classes: [Self.lecture], carParks: parks, departures: buses)
            payload.generatedAt = ""
            return payload
        }
        let midnight = Self.at("2020-03-14T00:00:00")
        let cases: [([CarPark], [Departure], Date)] = [
            ([], [], midnight),
            ([park], [], now - 60 + Freshness.readingLimit + 0.001),
            ([park], [scheduled], now + 300),
            ([park], [scheduled, predicted], now - 30 + Freshness.predictionLimit + 0.001),
        ]
        for (parks, buses, expected) in cases {
            let until = ScheduleResponse.validUntil(
                settings: Self.semester, now: now, carParks: parks, departures: buses)
            #expect(abs(until.timeIntervalSince(expected)) < 0.0001)
            #expect(payload(until - 0.01, parks, buses) == payload(now, parks, buses))
            if !parks.isEmpty || !buses.isEmpty {
                #expect(payload(until, parks, buses) != payload(now, parks, buses), "it changes at \(until)")
            }
        }
    }

    static let referencePayload = """
        {"week": 8, "student": {"id": "305491", "name": "Kier"},
         "schedules": [{"start_time": "2020-03-13T10:00:00", "end_time": "2020-03-13T12:00:00", "course": "FIT1031",
           "class": "Lecture 01", "lecturer": "Arun", "room": "S4", "campus": "13 College Walk, Clayton"}],
         "parkings": [{"name": "Clayton live feed", "slot": 645}],
         "stops": [{"departure": "Clayton", "arrival": "Caufield", "predicted_arrival_date": "2020-03-13T06:04:05"}]}
        """
}

/// The original iOS app's model, exactly as the seed shows it.
struct OriginalTimetable: Decodable {
    let week: Int
    let student: Student
    let schedules: [Schedule]
    let parkings: [Parking]
    let stops: [Stop]

    struct Student: Codable {
        let id, name: String
    }

    struct Schedule: Decodable {
        let startTime, endTime, course, scheduleClass: String
        let lecturer, room, campus: String

        enum CodingKeys: String, CodingKey {
            case startTime = "start_time"
            case endTime = "end_time"
            case course
            case scheduleClass = "class"
            case lecturer, room, campus
        }
    }

    struct Parking: Decodable {
        let name: String
        let slot: Int
    }

    struct Stop: Decodable {
        let departure, arrival: String
        let predictedArrivalDate: String

        enum CodingKeys: String, CodingKey {
            case departure, arrival
            case predictedArrivalDate = "predicted_arrival_date"
        }
    }
}
