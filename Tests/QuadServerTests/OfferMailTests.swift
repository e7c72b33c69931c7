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
@testable import QuadWaitingLines

/// A place held for someone first in line reaches them by mail (through a real SMTP server, aiosmtpd), in their
/// language, with what is held, until when and where to accept it; someone without an address gets nothing. An admin
/// gives an address through the API, in use at once.
@Suite(.enabled(if: SMTPSink.available, "python3 with aiosmtpd (pip install -r e2e/requirements.txt)"))
struct OfferMailTests {
    static let campus = CampusClock(timeZone: TestTime.melbourne)
    static let csrf = "abcdefghijklmnopqrstuvwxyz0123456789ABCD"
    static let admin: HTTPFields = [
        .authorization: "Bearer \(TestApp.adminToken)", .contentType: "application/json", .accept: "application/json",
    ]

    static func json(_ response: TestResponse) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any])
    }

    @Test(arguments: TestDatabase.engines)
    func anOfferIsMailedToItsOwnerInTheirLanguage(engine: Database.Engine) async throws {
        let sink = try SMTPSink()
        defer { sink.stop() }
        // A Tuesday, 09:50 on the demo campus (Melbourne): the slot waited for is at 12:45.
        let tuesday = TestTime.next(LocalTime(hour: 9, minute: 50), where: { $0.weekday == 2 })
        // The demo data sets the campus's time zone (Melbourne).
        try await TestApp.run(
            engine, at: tuesday,
            configure: {
                sink.quad(&$0); $0.loadDemoData = true
            }
        ) { app, client in
            let rooms = app.features.rooms
            try await rooms.northHall(["duo"], seats: 1)
            let lea = try await app.signedIn("lea")
            _ = try await app.signedIn("sam")
            let kim = Person(username: "kim", displayName: "Kim", role: .member)

            // An admin gives Lea's address, in French: in use at once, no link sent.
            let given = try await client.execute(
                uri: "/api/people/lea", method: .patch, headers: Self.admin,
                body: ByteBuffer(string: #"{"email": " Lea@Example.ORG ", "mailLanguage": "fr"}"#)
            ) { $0 }
            #expect(given.status == .ok)
            #expect(try Self.json(given)["email"] as? String == "Lea@example.org")
            #expect(try Self.json(given)["mailLanguage"] as? String == "fr")
            let me = try await client.execute(uri: "/api/me", method: .get, headers: lea) { $0 }
            #expect(try Self.json(me)["email"] as? String == "Lea@example.org")
            let wrong = try await client.execute(
                uri: "/api/people/sam", method: .patch, headers: Self.admin,
                body: ByteBuffer(string: #"{"email": "sam at example"}"#)
            ) { $0 }
            #expect(wrong.status == .unprocessableContent)
            #expect(wrong.text.contains("Give an email address such as ada@example.org."))
            #expect(try sink.messages().isEmpty)

            let start = Self.campus.instant(Self.campus.date(of: tuesday), LocalTime(hour: 12, minute: 45))
            let booked = try await rooms.book(
                roomId: "duo", owner: kim, start: start, minutes: 30, hold: .seat, recurrence: nil)
            let leaPlace = try await rooms.wait(
                roomId: "duo", person: try #require(try await app.person("lea")), start: start, minutes: 30,
                hold: .seat)
            _ = try await rooms.wait(
                roomId: "duo", person: try #require(try await app.person("sam")), start: start, minutes: 30,
                hold: .seat)
            #expect(try sink.messages().isEmpty)

            // Kim cancels: the seat is held for Lea, and she is told by mail, in French.
            _ = try await rooms.cancel(booked.booking.id, roomId: "duo", by: kim, following: false)
            let held = try #require(try await app.features.lines.places(of: "lea").first?.place.offeredUntil)
            try await eventually("the offer reached the relay") { try sink.messages().count == 1 }
            let message = try #require(sink.messages().first)
            let until = Self.campus.time(of: held).description
            #expect(message["rcpt_tos"] as? [String] == ["Lea@example.org"])
            #expect(message["subject"] as? String == "Réservé pour vous jusqu’à \(until) : \(leaPlace.place.label)")
            let parts = message["parts"] as? [[String: Any]] ?? []
            let text = try #require(parts.first { $0["type"] as? String == "text/plain" }?["body"] as? String)
            let html = try #require(parts.first { $0["type"] as? String == "text/html" }?["body"] as? String)
            #expect(text.contains("Bonjour Lea,"))
            #expect(text.contains("\(leaPlace.place.label) (Salle) vous est réservé"))
            #expect(text.contains("jusqu’à \(until)."))
            #expect(text.contains("https://quad.campus.example/notifications#offers"))
            #expect(html.contains("<html lang=\"fr\">"))
            #expect(html.contains("href=\"https://quad.campus.example/notifications#offers\""))
            #expect(try await app.platform.outbox.record(of: "lea").map(\.kind) == ["offer"])

            // Lea declines: the seat passes to Sam, who gave no address, so nothing more is written or sent.
            try await app.features.lines.leave(leaPlace.place.id, by: try #require(try await app.person("lea")))
            #expect(try await app.features.lines.places(of: "sam").first?.place.offeredUntil != nil)
            try await eventually("nothing waits in the outbox") { try await app.platform.outbox.depth() == 0 }
            #expect(try await app.platform.outbox.record(of: "sam").isEmpty)
            #expect(try sink.messages().count == 1)
        }
    }

    /// Every offer's message carries a one-click unsubscribe (RFC 8058): a mail client's POST, with no cookie, turns
    /// offers off, and the next offer is made but not mailed; the text's link asks first, on a page; the account
    /// page's box turns them back on.
    @Test func oneClickStopsOffersAndTheAccountPageTurnsThemBackOn() async throws {
        let sink = try SMTPSink()
        defer { sink.stop() }
        let tuesday = TestTime.next(LocalTime(hour: 9, minute: 50), where: { $0.weekday == 2 })
        try await TestApp.run(
            at: tuesday,
            configure: {
                sink.quad(&$0); $0.loadDemoData = true
            }
        ) { app, client in
            let rooms = app.features.rooms
            try await rooms.northHall(["duo", "solo"], seats: 1)
            let browser = try await app.browser("lea", csrf: Self.csrf)
            try await app.features.accounts.change(
                "lea", displayName: nil, role: nil, studentId: nil, password: nil, email: "lea@example.org")
            let lea = try #require(try await app.person("lea"))
            let kim = Person(username: "kim", displayName: "Kim", role: .member)
            let start = Self.campus.instant(Self.campus.date(of: tuesday), LocalTime(hour: 12, minute: 45))
            func offer(_ room: String) async throws {
                let booked = try await rooms.book(
                    roomId: room, owner: kim, start: start, minutes: 30, hold: .seat, recurrence: nil)
                _ = try await rooms.wait(roomId: room, person: lea, start: start, minutes: 30, hold: .seat)
                _ = try await rooms.cancel(booked.booking.id, roomId: room, by: kim, following: false)
                #expect(try await app.features.lines.places(of: "lea").contains { $0.place.thing == room })
            }

            try await offer("duo")
            try await eventually("the offer reached the relay") { try sink.messages().count == 1 }
            let message = try #require(sink.messages().first)
            let headers = message["headers"] as? [String: String] ?? [:]
            #expect(headers["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click")
            let oneClick = try #require(headers["List-Unsubscribe"])
            #expect(oneClick.hasPrefix("<https://quad.campus.example/api/mail/unsubscribe?token="))
            let parts = message["parts"] as? [[String: Any]] ?? []
            let text = try #require(parts.first { $0["type"] as? String == "text/plain" }?["body"] as? String)
            let stop = try #require(
                text.split(separator: "\n").first { $0.hasPrefix("To stop mail like this: ") }?
                    .dropFirst("To stop mail like this: ".count))
            #expect(stop.hasPrefix("https://quad.campus.example/mail/unsubscribe?token="))

            // The text's link asks first, on a page; opening it changes nothing.
            let page = try await client.execute(
                uri: String(stop.dropFirst("https://quad.campus.example".count)), method: .get,
                headers: [.accept: "text/html"]
            ) { $0 }
            #expect(page.headers[.cacheControl] == "no-store")
            #expect(page.text.contains("Stop mail about places held for you to lea@example.org?"))
            #expect(try await app.features.accounts.addresses.choicesOff(of: "lea").isEmpty)

            // The mail client's one click: no cookie, no CSRF token.
            let path = String(oneClick.dropFirst("<https://quad.campus.example".count).dropLast())
            let clicked = try await client.execute(
                uri: path, method: .post, headers: [.contentType: "application/x-www-form-urlencoded"],
                body: ByteBuffer(string: "List-Unsubscribe=One-Click")
            ) { $0 }
            #expect(clicked.status == .ok)
            #expect(clicked.text.contains(#""choice":"offers""#))
            #expect(try await app.features.accounts.addresses.choicesOff(of: "lea") == [.offers])
            let unknown = try await client.execute(
                uri: "/api/mail/unsubscribe?token=\(String(repeating: "x", count: 43))", method: .post,
                headers: [.contentType: "application/x-www-form-urlencoded"],
                body: ByteBuffer(string: "List-Unsubscribe=One-Click")
            ) { $0 }
            #expect(unknown.status == .notFound)

            // The next offer is made, and not mailed.
            try await offer("solo")
            try await eventually("nothing waits in the outbox") { try await app.platform.outbox.depth() == 0 }
            #expect(try await app.platform.outbox.record(of: "lea").map(\.kind) == ["offer"])

            // Her account page shows the box off; checking it turns offers back on.
            let account = try await client.execute(uri: "/account", method: .get, headers: browser) { $0.text }
            #expect(account.contains(#"name="mail-offers" value="on">"#))
            #expect(account.contains(#"name="mail-bookings" value="on" checked>"#))
            // What was mailed to her, on her page and on an admin's page of hers.
            let subject = try #require(message["subject"] as? String)
            #expect(account.contains(#"<h2 id="mail-record">Mail sent to you</h2>"#))
            #expect(account.contains("· \(subject) · <span class=\"mail-sent\">sent</span>"))
            let record = try await client.execute(
                uri: "/admin/people/lea/mail", method: .get,
                headers: [.authorization: "Bearer \(TestApp.adminToken)", .accept: "text/html"]
            ) { $0 }
            #expect(record.status == .ok)
            #expect(record.text.contains("Mail sent to Lea (lea)") && record.text.contains(subject))
            var form = URLComponents()
            // Every box ticked, as the page sends it.
            form.queryItems =
                ([("csrf", Self.csrf), ("email", "lea@example.org"), ("language", "en"), ("choices", "1")]
                + MailChoice.allCases.map { ("mail-\($0.rawValue)", "on") }).map {
                    URLQueryItem(name: $0.0, value: $0.1)
                }
            let saved = try await client.execute(
                uri: "/account/email", method: .post, headers: browser,
                body: ByteBuffer(string: form.percentEncodedQuery ?? "")
            ) { $0 }
            #expect(saved.headers[.location] == "/account?done=mailSaved#email")
            #expect(try await app.features.accounts.addresses.choicesOff(of: "lea").isEmpty)
        }
    }

    /// Without a relay, an offer is made as ever and nothing is queued.
    @Test func withoutMailAnOfferIsStillMade() async throws {
        let tuesday = TestTime.next(LocalTime(hour: 9, minute: 50), where: { $0.weekday == 2 })
        try await TestApp.run(at: tuesday, configure: { $0.loadDemoData = true }) { app, client in
            let rooms = app.features.rooms
            try await rooms.northHall(["duo"], seats: 1)
            _ = try await app.signedIn("lea")
            let given = try await client.execute(
                uri: "/api/people/lea", method: .patch, headers: Self.admin,
                body: ByteBuffer(string: #"{"email": "lea@example.org"}"#)
            ) { $0 }
            #expect(given.status == .ok)
            let kim = Person(username: "kim", displayName: "Kim", role: .member)
            let start = Self.campus.instant(Self.campus.date(of: tuesday), LocalTime(hour: 12, minute: 45))
            let booked = try await rooms.book(
                roomId: "duo", owner: kim, start: start, minutes: 30, hold: .seat, recurrence: nil)
            _ = try await rooms.wait(
                roomId: "duo", person: try #require(try await app.person("lea")), start: start, minutes: 30,
                hold: .seat)
            _ = try await rooms.cancel(booked.booking.id, roomId: "duo", by: kim, following: false)
            #expect(try await app.features.lines.places(of: "lea").first?.place.offeredUntil != nil)
            try await eventually("nothing waits in the outbox") { try await app.platform.outbox.depth() == 0 }
            #expect(try await app.platform.outbox.record(of: "lea").isEmpty)
        }
    }
}

extension Rooms {
    /// Rooms of `seats` in North Hall, open on weekdays, with a check-in ten minutes into each booking.
    func northHall(_ ids: [String], seats: Int) async throws {
        for id in ids {
            _ = try await store.create(
                RoomRecord(id: id, name: id.capitalized, building: "North Hall", capacity: seats, seats: seats))
        }
        try await setRules(
            BookingPolicy(hours: .weekdays, horizonDays: 56, maxMinutes: 240, checkInMinutes: 10),
            forBuilding: "North Hall")
    }
}
