import ArgumentParser
import Foundation
import QuadCore
import QuadKit

/// When, for how long, on which day: the options of `quad rooms` and `quad book` that put a booking in time. Times
/// are on the campus's wall clock (its time zone comes from the server).
struct WhenOptions: ParsableArguments {
    @Option(help: "Start at this time on the campus clock (HH:MM, on the quarter hour).")
    var at: String?

    @Option(name: .customLong("for"), help: "How long: 30m, 1h, 1h30m, or minutes (90).")
    var length: String?

    @Option(help: "The day (YYYY-MM-DD, today or tomorrow; today when absent).")
    var on: String?

    func validate() throws {
        if let at, LocalTime(at) == nil { throw ValidationError("--at takes a time such as 10:00") }
        if let length, Self.minutes(length) == nil { throw ValidationError("--for takes 30m, 1h, 1h30m or 90") }
        if at == nil, length != nil || on != nil { throw ValidationError("--for and --on go with --at") }
        if let on, !["today", "tomorrow"].contains(on), LocalDate(on) == nil {
            throw ValidationError("--on takes a date such as 2026-12-01, today or tomorrow")
        }
    }

    /// `30m`, `1h`, `1h30m`, `90`: minutes.
    static func minutes(_ text: String) -> Int? {
        if let plain = Int(text) { return plain > 0 ? plain : nil }
        var total = 0
        var number = ""
        for character in text.lowercased() {
            if character.isNumber {
                number.append(character)
            } else if character == "h" || character == "m", let value = Int(number) {
                total += character == "h" ? value * 60 : value
                number = ""
            } else {
                return nil
            }
        }
        return number.isEmpty && total > 0 ? total : nil
    }

    /// The start and length asked, read on the campus clock; nil when no `--at` was given.
    func range(client: QuadClient, now: Date) async throws -> (start: Date, minutes: Int)? {
        guard let at, let time = LocalTime(at) else { return nil }
        let campus = CampusClock(timeZone: try await client.campusTimeZone())
        let today = campus.date(of: now)
        let day =
            switch on {
            case nil, "today": today
            case "tomorrow": today.adding(days: 1)
            default: LocalDate(on ?? "") ?? today
            }
        return (campus.instant(day, time), length.flatMap(Self.minutes) ?? 30)
    }
}

extension TerminalText {
    /// Rooms found for a time: those that fit, most room first, then the others with when they are next free.
    static func foundTable(_ found: FoundRooms, campus: CampusClock, style: TerminalStyle = .plain) -> String {
        guard !found.fitting.isEmpty || !found.others.isEmpty else { return "No rooms.\n" }
        var table = TextTable(columns: [.init("ID"), .init("ROOM"), .init("FREE", .right), .init("FITS")])
        for room in found.fitting {
            table.add([
                .init(room.id, .dim), .init(room.name), .init(String(room.freeSeats)),
                .init(room.hold == .room ? "whole room" : "yes", .green),
            ])
        }
        for room in found.others {
            let next = room.nextFree.map { "next free at \(campus.time(of: $0))" } ?? "not that day"
            table.add([.init(room.id, .dim), .init(room.name), .init(String(room.freeSeats)), .init(next, .yellow)])
        }
        return table.render(style: style)
    }

    /// The person's bookings: room, when (campus clock), what, and check-in.
    static func bookingsTable(
        _ bookings: [MyBooking], campus: CampusClock, now: Date, style: TerminalStyle = .plain
    )
        -> String
    {
        guard !bookings.isEmpty else { return "You have no bookings.\n" }
        var table = TextTable(columns: [.init("ROOM"), .init("WHEN"), .init("WHAT"), .init("CHECK-IN")])
        for booking in bookings {
            var when = "until cancelled"
            if let start = booking.start, let end = booking.end {
                when = "\(campus.date(of: start)) \(campus.time(of: start))–\(campus.time(of: end))"
            }
            let seats = booking.seats ?? 1
            let held = booking.hold == .room ? "whole room" : seats == 1 ? "a seat" : "\(seats) seats"
            let what = held + (booking.seriesId == nil ? "" : ", series")
            let checkIn: TextTable.Cell =
                booking.checkedIn == true
                ? .init("checked in", .green)
                : booking.checkInBy.map {
                    .init("by \(campus.time(of: $0))", booking.canCheckIn(at: now) ? .yellow : nil)
                }
                    ?? .init("—", .dim)
            table.add([.init(booking.roomName), .init(when), .init(what), checkIn])
        }
        return table.render(style: style)
    }
}

/// `quad bookings`: your bookings, soonest first.
struct BookingsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bookings", abstract: "List your room bookings, soonest first.")

    @OptionGroup var options: ClientOptions

    func run() async throws {
        try await runClient {
            let context = try ClientContext(options, signedIn: true)
            let mine = try await context.client.myBookings()
            if context.json { return try context.printJSON(mine) }
            let campus = CampusClock(timeZone: try await context.client.campusTimeZone())
            context.print(
                TerminalText.bookingsTable(mine, campus: campus, now: context.clock.now, style: context.style))
        }
    }
}

/// `quad checkin [ROOM]`: checks in the booking you hold now (in that room).
struct CheckinCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "checkin", abstract: "Check in the booking you hold now (from a quarter hour before it starts).")

    @OptionGroup var options: ClientOptions

    @Argument(help: "The room's id or name, when you hold bookings in several.")
    var room: String?

    func run() async throws {
        try await runClient {
            let context = try ClientContext(options, signedIn: true)
            let now = context.clock.now
            let booking: MyBooking
            do {
                let due = try await context.client.myBookings().filter { booking in
                    booking.canCheckIn(at: now)
                        && room.map {
                            booking.roomId == $0 || booking.roomName.caseInsensitiveCompare($0) == .orderedSame
                        }
                            ?? true
                }
                guard let first = due.first else {
                    throw CLIError.failed("you have no booking to check in now" + (room.map { " in \"\($0)\"" } ?? ""))
                }
                booking = first
                _ = try await context.client.checkIn(roomId: booking.roomId, bookingId: booking.id)
            } catch let error as CLIError {
                throw error
            } catch {
                throw context.writeError(error, doing: "check in")
            }
            if context.json { return try context.printJSON(booking) }
            context.print("Checked in to \(TerminalText.visible(booking.roomName)).\n")
        }
    }
}
