import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import QuadCore
import QuadTestSupport
import Testing

@testable import QuadAccounts
@testable import QuadPlatform
@testable import QuadRooms
@testable import QuadServer

/// A booking reaches its owner's mail with a calendar invitation (iMIP) that a calendar reads as the person's calendar
/// feed does (the same UID): made, cancelled (the whole, or one date of a series), released for a no-show, its room
/// renamed; each later message a higher SEQUENCE. Through a real SMTP server (aiosmtpd), the invitations read by
/// `icalendar`.
@Suite(.enabled(if: SMTPSink.available, "python3 with aiosmtpd (pip install -r e2e/requirements.txt)"))
struct BookingMailTests {
    static let campus = CampusClock(timeZone: TestTime.melbourne)
    static let english = Localizer(language: .english)
    static let admin: HTTPFields = [
        .authorization: "Bearer \(TestApp.adminToken)", .contentType: "application/json", .accept: "application/json",
    ]

    /// The messages to `address` so far, oldest first.
    static func mail(_ sink: SMTPSink, count: Int) async throws -> [[String: Any]] {
        try await eventually("\(count) messages reached the relay") { try sink.messages().count >= count }
        return try sink.messages()
    }

    static func invitation(_ message: [String: Any]) throws -> (method: String, event: [String: Any]) {
        let parts = message["parts"] as? [[String: Any]] ?? []
        let part = try #require(parts.first { $0["type"] as? String == "text/calendar" })
        let calendar = try #require(part["calendar"] as? [String: Any])
        #expect((part["params"] as? [String: String])?["method"] == calendar["method"] as? String)
        let events = calendar["events"] as? [[String: Any]] ?? []
        #expect(events.count == 1)
        return (try #require(calendar["method"] as? String), try #require(events.first))
    }

    static func text(_ message: [String: Any]) -> String {
        let parts = message["parts"] as? [[String: Any]] ?? []
        return parts.first { $0["type"] as? String == "text/plain" }?["body"] as? String ?? ""
    }

    @Test(arguments: TestDatabase.engines)
    func aBookingsInvitationFollowsItInItsOwnersCalendar(engine: Database.Engine) async throws {
        let sink = try SMTPSink()
        defer { sink.stop() }
        // A Tuesday, 09:50 on the demo campus (Melbourne, whose time zone the demo data sets).
        let tuesday = TestTime.next(LocalTime(hour: 9, minute: 50), where: { $0.weekday == 2 })
        try await TestApp.run(
            engine, at: tuesday,
            configure: {
                sink.quad(&$0); $0.loadDemoData = true
            }
        ) {
            app, client in
            let rooms = app.features.rooms
            try await rooms.northHall(["duo"], seats: 2)
            _ = try await app.signedIn("lea")
            _ = try await app.signedIn("sam")
            try await app.features.accounts.change(
                "lea", displayName: nil, role: nil, studentId: nil, password: nil, email: "lea@example.org")
            let lea = try #require(try await app.person("lea"))
            let sam = try #require(try await app.person("sam"))
            let today = Self.campus.date(of: tuesday)
            func at(_ hour: Int, _ minute: Int = 0, in weeks: Int = 0) -> Date {
                Self.campus.instant(today.adding(days: 7 * weeks), LocalTime(hour: hour, minute: minute))
            }

            // One booking: an invitation to add it, with the UID her calendar feed gives it.
            let once = try await rooms.book(
                roomId: "duo", owner: lea, start: at(12, 45), minutes: 30, hold: .seat, recurrence: nil)
            var messages = try await Self.mail(sink, count: 1)
            let day = Self.english.longDate(today)
            #expect(messages[0]["subject"] as? String == "Booked: Duo, \(day), 12:45–13:15")
            #expect(Self.text(messages[0]).contains("Duo is booked for you: \(day), 12:45–13:15."))
            var (method, event) = try Self.invitation(messages[0])
            #expect(method == "REQUEST")
            #expect(event["uid"] as? String == "\(once.booking.id)@timetable.quad")
            let feed = try await rooms.reservations.calendar(owner: "lea", campus: Self.campus)
            #expect(feed.map(\.uid) == [once.booking.id])
            #expect(event["sequence"] as? Int == 0)
            #expect(event["status"] as? String == "CONFIRMED")
            #expect(event["tzid"] as? String == "Australia/Melbourne")
            #expect(event["duration_minutes"] as? Int == 30)
            #expect(event["summary"] as? String == "Duo")
            #expect(event["organizer"] as? String == "mailto:quad@campus.example")
            let attendee = (event["attendees"] as? [[String: Any]])?.first
            #expect(attendee?["address"] as? String == "mailto:lea@example.org")
            #expect((attendee?["params"] as? [String: String])?["RSVP"] == "FALSE")
            #expect((attendee?["params"] as? [String: String])?["CN"] == "Lea")

            // Cancelled: the same UID, cancelled, one revision on.
            #expect(try await rooms.cancel(once.booking.id, roomId: "duo", by: lea, following: false))
            messages = try await Self.mail(sink, count: 2)
            #expect(messages[1]["subject"] as? String == "Cancelled: Duo, \(day), 12:45–13:15")
            (method, event) = try Self.invitation(messages[1])
            #expect(method == "CANCEL")
            #expect(event["uid"] as? String == "\(once.booking.id)@timetable.quad")
            #expect(event["sequence"] as? Int == 1)
            #expect(event["status"] as? String == "CANCELLED")

            // A series of three Tuesdays: one invitation with its rule.
            let series = try await rooms.book(
                roomId: "duo", owner: lea, start: at(14), minutes: 30, hold: .seat,
                recurrence: Recurrence(frequency: .weekly, until: today.adding(days: 14)))
            let seriesId = try #require(series.series?.id)
            messages = try await Self.mail(sink, count: 3)
            #expect(
                messages[2]["subject"] as? String
                    == "Booked: Duo, \(day), 14:00–14:30, then every week until "
                    + Self.english.longDate(today.adding(days: 14)))
            (method, event) = try Self.invitation(messages[2])
            #expect(method == "REQUEST")
            #expect(event["uid"] as? String == "\(seriesId)@timetable.quad")
            #expect((event["rrule"] as? String)?.hasPrefix("FREQ=WEEKLY;UNTIL=") == true)
            #expect((event["exdates"] as? [String])?.isEmpty == true)

            // Its second date cancelled: the series again, that date left out, one revision on.
            let second = try #require(
                try await rooms.reservations.upcoming(owner: "lea").map(\.reservation).first {
                    $0.seriesId == seriesId && $0.range.start == at(14, in: 1)
                })
            #expect(try await rooms.cancel(second.id, roomId: "duo", by: lea, following: false))
            messages = try await Self.mail(sink, count: 4)
            let secondDay = Self.english.longDate(today.adding(days: 7))
            #expect(messages[3]["subject"] as? String == "Cancelled: Duo, \(secondDay), 14:00–14:30")
            #expect(Self.text(messages[3]).contains("The series' other dates stand."))
            (method, event) = try Self.invitation(messages[3])
            #expect(method == "REQUEST")
            #expect(event["uid"] as? String == "\(seriesId)@timetable.quad")
            #expect(event["sequence"] as? Int == 1)
            let exdates = (event["exdates"] as? [String]) ?? []
            #expect(
                exdates.count == 1 && exdates.first?.hasPrefix(today.adding(days: 7).description + "T14:00") == true)

            // Sam has no address: his booking is made, and its message is dropped when the courier comes to write it.
            _ = try await rooms.book(
                roomId: "duo", owner: sam, start: at(10), minutes: 30, hold: .seat, recurrence: nil)
            try await eventually("the outbox is empty") { try await app.platform.outbox.depth() == 0 }
            #expect(try await app.platform.outbox.record(of: "sam").isEmpty)

            // Lea's booking at 10:00 not checked in by 10:10: released, and she is told.
            let early = try await rooms.book(
                roomId: "duo", owner: lea, start: at(10), minutes: 30, hold: .seat, recurrence: nil)
            messages = try await Self.mail(sink, count: 5)
            app.clock.advance(by: .seconds(at(10, 11).timeIntervalSince(app.clock.now)))
            messages = try await Self.mail(sink, count: 6)
            #expect(messages[5]["subject"] as? String == "Released: Duo, \(day), 10:00–10:30")
            #expect(Self.text(messages[5]).contains("Nobody checked in"))
            (method, event) = try Self.invitation(messages[5])
            #expect(method == "CANCEL")
            #expect(event["uid"] as? String == "\(early.booking.id)@timetable.quad")
            #expect(event["sequence"] as? Int == 1)
            try await eventually("the outbox is empty") { try await app.platform.outbox.depth() == 0 }
            #expect(try await app.platform.outbox.record(of: "sam").isEmpty)

            // An admin renames the room: her series' invitation, one revision on, carries the new name.
            let renamed = try await client.execute(
                uri: "/api/rooms/duo", method: .patch,
                headers: Self.admin, body: ByteBuffer(string: #"{"name": "Duo Two"}"#)
            ) { $0 }
            #expect(renamed.status == .ok)
            messages = try await Self.mail(sink, count: 7)
            #expect(
                messages[6]["subject"] as? String
                    == "Changed: Duo Two, \(day), 14:00–14:30, then every week until "
                    + Self.english.longDate(today.adding(days: 14)))
            #expect(Self.text(messages[6]).contains("The room of your booking was renamed: it is now Duo Two"))
            (method, event) = try Self.invitation(messages[6])
            #expect(method == "REQUEST")
            #expect(event["uid"] as? String == "\(seriesId)@timetable.quad")
            #expect(event["sequence"] as? Int == 2)
            #expect(event["summary"] as? String == "Duo Two")
            // Another change leaves the name as it is: nobody is mailed.
            let seats = try await client.execute(
                uri: "/api/rooms/duo", method: .patch,
                headers: Self.admin, body: ByteBuffer(string: #"{"building": "South Hall"}"#)
            ) { $0 }
            #expect(seats.status == .ok)

            // An admin removes the room: the rest of her series ends, and its invitation takes it out.
            #expect(try await rooms.remove("duo"))
            messages = try await Self.mail(sink, count: 8)
            #expect(
                Self.text(messages[7]).contains(
                    "Your booking of Duo Two, \(day), 14:00–14:30, then every week until "
                        + "\(Self.english.longDate(today.adding(days: 14))), has ended: the room was removed."))
            (method, event) = try Self.invitation(messages[7])
            #expect(method == "CANCEL")
            #expect(event["uid"] as? String == "\(seriesId)@timetable.quad")
            #expect(event["sequence"] as? Int == 3)
            try await eventually("the outbox is empty") { try await app.platform.outbox.depth() == 0 }
            #expect(try sink.messages().count == 8)
            #expect(try await app.platform.outbox.record(of: "sam").isEmpty)
            #expect(
                try await app.platform.outbox.record(of: "lea").map(\.kind).sorted() == [
                    "booked", "booked", "booked", "cancelled", "cancelled", "cancelled", "changed", "released",
                ])
        }
    }
}
