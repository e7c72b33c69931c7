import Foundation
import Testing

@testable import QuadCore

/// The week view's layout (which days, where classes sit, clashes) and the shuttles' countdown words.
@Suite struct WeekPlanTests {
    typealias T = TimetableTests

    static func weekdayClass(
        _ id: String, weekday: Int, _ start: String, _ end: String, weeks: [Int] = Array(1...12)
    )
        -> TimetableClass
    {
        TimetableClass(
            id: id, course: "FIT\(id.count)", courseTitle: "", name: id, lecturer: "", room: "", campus: "",
            weekday: weekday, start: LocalTime(start)!, end: LocalTime(end)!, weeks: weeks)
    }

    @Test func clashingClassesSitSideBySideAndSayWhatTheyClashWith() {
        // Friday of week 3: the lecture 10:00–12:00, a tutorial 11:00–12:30 over it, the lab 12:30–13:30 after the
        // tutorial (touching is no clash), and a seminar 11:30–12:00 inside both.
        let tutorial = Self.weekdayClass("tutorial", weekday: 5, "11:00", "12:30")
        let seminar = Self.weekdayClass("seminar", weekday: 5, "11:30", "12:00")
        let plan = T.semester.weekPlan(
            of: LocalDate("2020-03-18")!, classes: [T.lecture, T.lab, tutorial, seminar, T.monday])
        #expect(plan.monday == LocalDate("2020-03-16")!)
        #expect(plan.status == .teaching(week: 3))
        #expect(
            plan.days.map(\.date.description) == ["2020-03-16", "2020-03-17", "2020-03-18", "2020-03-19", "2020-03-20"])
        let friday = plan.days[4].classes
        #expect(friday.map(\.meeting.class.id) == ["fit1031-lecture-01", "tutorial", "seminar", "fit1031-lab-01"])
        #expect(friday.map(\.lane) == [0, 1, 2, 0])
        #expect(friday.map(\.lanes) == [3, 3, 3, 1])
        #expect(friday[0].clashesWith.map(\.class.id) == ["tutorial", "seminar"])
        #expect(friday[2].clashesWith.map(\.class.id) == ["fit1031-lecture-01", "tutorial"])
        #expect(!friday[3].clashes)
        #expect(plan.days[0].classes.map(\.meeting.class.id) == ["fit1032-lecture-01"])
        #expect((plan.firstHour, plan.lastHour) == (8, 18))
    }

    @Test func aLaneIsReusedOnceItsClassIsOver() {
        // 9–11 and 10–12 clash; 11–13 overlaps the second but not the first, so it takes the first's lane.
        let classes = [
            Self.weekdayClass("a", weekday: 2, "09:00", "11:00"), Self.weekdayClass("bb", weekday: 2, "10:00", "12:00"),
            Self.weekdayClass("ccc", weekday: 2, "11:00", "13:00"),
        ]
        let tuesday = T.semester.weekPlan(of: LocalDate("2020-03-17")!, classes: classes).days[1].classes
        #expect(tuesday.map(\.lane) == [0, 1, 0])
        #expect(tuesday.map(\.lanes) == [2, 2, 2])
        #expect(tuesday[0].clashesWith.map(\.class.id) == ["bb"])
    }

    @Test func theWeekendAndTheHoursShowOnlyWhenSomethingMeetsThen() {
        let early = Self.weekdayClass("saturday", weekday: 6, "07:30", "19:15")
        let plan = T.semester.weekPlan(of: LocalDate("2020-03-21")!, classes: [early])
        #expect(plan.days.map(\.date.weekday) == [1, 2, 3, 4, 5, 6])
        #expect((plan.firstHour, plan.lastHour) == (7, 20))
    }

    @Test func theBreakWeekNamesItsDaysAndHasNoClasses() {
        let plan = T.semester.weekPlan(of: LocalDate("2020-04-15")!, classes: [T.lecture, T.monday])
        #expect(plan.status == .inBreak(T.semester.breaks[0], resumesOn: LocalDate("2020-04-20")!))
        #expect(plan.days.count == 5)
        #expect(plan.days.allSatisfy { $0.classes.isEmpty && $0.dayOff?.name == "Mid-semester break" })
        // The week after: teaching again, week 7.
        let after = T.semester.weekPlan(of: LocalDate("2020-04-20")!, classes: [T.lecture, T.monday])
        #expect(after.status == .teaching(week: 7))
        #expect(after.days.allSatisfy { $0.dayOff == nil })
        #expect(after.days.flatMap(\.classes).count == 2)
    }

    @Test func aBusCountdownReadsLikeADurationNotATime() {
        let leaves = T.at("2020-03-13T13:05:00")
        func words(_ before: TimeInterval, _ language: Language = .english) -> String {
            Countdown(from: leaves.addingTimeInterval(-before), to: leaves).words(Localizer(language: language))
                .replacingOccurrences(of: "\u{a0}", with: " ")
        }
        #expect(words(30) == "now")
        #expect(words(4 * 60 + 59) == "in 4 min")
        #expect(words(59 * 60 + 59) == "in 59 min")
        #expect(words(80 * 60) == "in 1 h 20 min")
        #expect(words(120 * 60 + 30) == "in 2 h")
        #expect(words(378 * 60) == "in 6 h")
        #expect(words(80 * 60, .french) == "dans 1 h 20 min")
        #expect(words(378 * 60, .french) == "dans 6 h")
        #expect(words(-60) == "now")
    }

    @Test func theWordsChangeWhenAMinuteOrAnHourPasses() {
        let leaves = T.at("2020-03-13T13:05:00")
        func change(_ before: TimeInterval) -> TimeInterval? {
            Countdown.nextChange(from: leaves.addingTimeInterval(-before), to: leaves).map {
                leaves.timeIntervalSince($0).rounded()
            }
        }
        // Seconds left when the words change, by seconds left now.
        let now: [TimeInterval] = [270, 30, 22690, 11400, 0, 3180]
        let expected: [TimeInterval?] = [240, 0, 21600, 10800, nil, 3120]
        // "in 4 min" until 4 minutes are left; "now" until it leaves; "in 6 h" until 6 hours are left; "in 3 h";
        // gone; with exactly 53 minutes left, "in 52 min" comes at once.
        #expect(now.map(change) == expected)
        // Every change it names is one: the words hold from just after now until it, and differ just after it.
        for before in stride(from: 10.0, through: 8 * 3600, by: 317) {
            let now = leaves.addingTimeInterval(-before)
            let next = Countdown.nextChange(from: now, to: leaves)!
            #expect(next > now)
            #expect(
                Countdown(from: now.addingTimeInterval(0.002), to: leaves)
                    == Countdown(from: next.addingTimeInterval(-0.001), to: leaves))
            // (Under a minute, the change is the bus leaving: the list drops it.)
            if next < leaves {
                #expect(Countdown(from: now, to: leaves) != Countdown(from: next.addingTimeInterval(0.001), to: leaves))
            }
        }
    }
}
