import Foundation
import QuadCore
import QuadKit

/// The timetable in a terminal: the greeting, the day's classes, the car parks and the next shuttles.
enum TimetableText {
    static let weekdays = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
    static let months = [
        "January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
        "November", "December",
    ]

    /// "Monday 23 November".
    static func day(_ date: LocalDate) -> String {
        "\(weekdays[(date.weekday - 1) % 7]) \(date.day) \(months[(date.month - 1) % 12])"
    }

    /// "Hey, Kier · Week 8" (or "· mid-semester break", "· before the semester", "· after the semester").
    static func greeting(name: String, week: Int, weekStatus: String) -> String {
        let first = name.split(separator: " ").first.map(String.init) ?? name
        let when =
            switch weekStatus {
            case "teaching" where week > 0: "Week \(week)"
            case "break": "break"
            case "before": "before the semester"
            default: "after the semester"
            }
        return "Hey, \(TerminalText.visible(first)) · \(when)"
    }

    /// What the day shown is: "Today, Monday 23 November", "Next teaching day: …", "After the break: …".
    static func heading(_ plan: DayPlan) -> String {
        guard let date = plan.date else { return "No more classes this semester." }
        switch plan.kind {
        case .today: return "Today, \(day(date))"
        case .nextTeachingDay: return "Next teaching day: \(day(date))"
        case .afterBreak:
            let name = plan.breakName.flatMap { $0.isEmpty ? nil : $0 } ?? "the break"
            return "After \(TerminalText.visible(name)): \(day(date))"
        case .none: return "No more classes this semester."
        }
    }

    /// The whole screen. `clock` gives the classes' wall-clock times; `now` marks the class in progress.
    static func render(
        name: String, week: Int, weekStatus: String, plan: DayPlan, parkings: [ScheduleResponse.Parking],
        countdowns: [TimetableStore.Countdown], clock: CampusClock, now: Date, style: TerminalStyle = .plain
    ) -> String {
        var out = style.paint(greeting(name: name, week: week, weekStatus: weekStatus), .bold) + "\n\n"
        out += heading(plan) + "\n"
        if !plan.meetings.isEmpty {
            var table = TextTable(columns: [.init("TIME"), .init("CLASS"), .init("ROOM"), .init("LECTURER")])
            for meeting in plan.meetings {
                let time = "\(clock.time(of: meeting.start))–\(clock.time(of: meeting.end))"
                var room = TextTable.Cell(meeting.class.room)
                if meeting.isInProgress(at: now) { room = .init(meeting.class.room + " · now", .green) }
                table.add([
                    .init(time), .init("\(meeting.class.course) \(meeting.class.name)"), room,
                    .init(meeting.class.lecturer),
                ])
            }
            out += table.render(style: style)
        }
        out += "\nCar parks\n"
        if parkings.isEmpty {
            out += "No car parks.\n"
        } else {
            var table = TextTable(columns: [
                .init("CAR PARK"), .init("FREE", .right), .init("OF", .right), .init("STATE"), .init("FEED"),
            ])
            for park in parkings {
                let colour: TerminalStyle.Colour =
                    switch park.state {
                    case .plenty: .green
                    case .filling: .yellow
                    case .almostFull, .full: .red
                    }
                table.add([
                    .init(park.name), .init(String(park.slot)), .init(String(park.capacity)),
                    .init(stateText(park.state), colour), park.live ? .init("live") : .init("not live", .dim),
                ])
            }
            out += table.render(style: style)
        }
        out += "\nNext shuttles\n"
        if countdowns.isEmpty {
            out += "No more shuttles today.\n"
        } else {
            var table = TextTable(columns: [
                .init("IN", .right), .init("FROM"), .init("TO"), .init("AT"), .init("FEED"),
            ])
            for countdown in countdowns {
                table.add([
                    .init(countdown.minutes == 0 ? "due" : "\(countdown.minutes) min"), .init(countdown.stop.departure),
                    .init(countdown.stop.arrival), .init(clock.time(of: countdown.expectedAt).description),
                    countdown.live ? .init("live", .green) : .init("scheduled", .dim),
                ])
            }
            out += table.render(style: style)
        }
        return out
    }

    static func stateText(_ state: CarParkState) -> String {
        switch state {
        case .plenty: "plenty"
        case .filling: "filling"
        case .almostFull: "almost full"
        case .full: "full"
        }
    }
}
