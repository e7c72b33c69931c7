import Foundation
import Hummingbird
import HummingbirdTesting
import QuadCore
import QuadTestSupport
import Testing

@testable import QuadAccounts
@testable import QuadPlatform
@testable import QuadRooms
@testable import QuadServer
@testable import QuadTimetable

/// Today: a person's day on `/` and in `GET /api/me/today`, each section from the feature that owns it. What is held
/// for them comes first, with its deadline and its actions; a check-in counts once it opens; a student sees their
/// next class and the shuttles; a visitor gets the public home.
@Suite struct TodayTests {
    static let csrf = "abcdefghijklmnopqrstuvwxyz0123456789ABCD"
    static let campus = CampusClock(timeZone: TestTime.melbourne)

    /// The day as the API gives it to `headers`' person.
    static func today(_ client: any TestClientProtocol, _ headers: HTTPFields) async throws -> Today {
        try await client.execute(uri: "/api/me/today", method: .get, headers: headers) { response in
            #expect(response.status == .ok)
            return try decoder.decode(Today.self, from: Data(buffer: response.body))
        }
    }

    /// Reads dates as the contract writes them (RFC 3339).
    static let decoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }()

    /// The Timetable's demo (student Kier's classes, this week teaching week 8, the car parks and shuttles) as it
    /// stands: not moved by its simulator. Signs Kier in.
    static func student(_ app: TestApp) async throws -> HTTPFields {
        let timetable = app.features.timetable
        try await TimetableDemo.load(timetable.store, now: app.clock.now)
        try await timetable.store.setSimulated(false)
        await timetable.changed()
        _ = try await app.features.accounts.people.create(
            Person(username: "kier", displayName: "Kier", role: .member, studentId: "305491"), password: "password-kier"
        )
        return try await app.signedIn("kier")
    }

    static func section(_ day: Today, _ key: TodaySection.Key) throws -> TodaySection {
        try #require(day.sections.first { $0.key == key }, "no \(key) section")
    }

    /// What a page's badges say (a hidden badge says 0), in the order drawn.
    static func badges(_ html: String) -> [Int] {
        html.matches(of: #/data-badge( hidden)?><span aria-hidden="true">(\d+)</span>/#).map {
            $0.output.1 == nil ? Int($0.output.2)! : 0
        }
    }

    /// The page `uri` as `headers`' browser gets it.
    static func page(_ client: any TestClientProtocol, _ uri: String, _ headers: HTTPFields) async throws -> String {
        try await client.execute(uri: uri, method: .get, headers: headers) { response in
            #expect(response.status == .ok, "\(uri)")
            return response.text
        }
    }

    @Test(arguments: TestDatabase.engines)
    func anOfferHeldForSomeoneLeadsTheirDayAndIsAcceptedFromItsForm(engine: Database.Engine) async throws {
        // A Tuesday, 09:50 on the demo campus (Melbourne): the slot waited for is at 12:45.
        let tuesday = TestTime.next(LocalTime(hour: 9, minute: 50), where: { $0.weekday == 2 })
        try await TestApp.run(engine, at: tuesday, configure: { $0.loadDemoData = true }) { app, client in
            let rooms = app.features.rooms
            _ = try await rooms.store.create(
                RoomRecord(id: "duo", name: "Duo", building: "North Hall", capacity: 1, seats: 1))
            try await rooms.setRules(
                BookingPolicy(hours: .weekdays, horizonDays: 56, maxMinutes: 240, checkInMinutes: 10),
                forBuilding: "North Hall")
            let lea = try await app.signedIn("lea")
            let kim = Person(username: "kim", displayName: "Kim", role: .member)
            let leaPerson = try #require(try await app.person("lea"))
            let start = Self.campus.instant(Self.campus.date(of: tuesday), LocalTime(hour: 12, minute: 45))
            let booked = try await rooms.book(
                roomId: "duo", owner: kim, start: start, minutes: 30, hold: .seat, recurrence: nil)
            let place = try await rooms.wait(roomId: "duo", person: leaPerson, start: start, minutes: 30, hold: .seat)

            // Waiting: her place in line, nothing held, nothing needs her: every page's badges say 0 (hidden).
            let browser = try await app.browser("lea", csrf: Self.csrf)
            #expect(Self.badges(try await Self.page(client, "/library", browser)) == [0, 0])
            var day = try await Self.today(client, lea)
            #expect(day.needsYou == 0)
            #expect(try Self.section(day, .offers).items.isEmpty)
            #expect(try Self.section(day, .waiting).items.map(\.id) == [place.place.id])
            #expect(try Self.section(day, .waiting).items.first?.detail?.contains("1st") == true)

            // Kim cancels: the seat is held for Lea, first on her day, with its end and both actions.
            _ = try await rooms.cancel(booked.booking.id, roomId: "duo", by: kim, following: false)
            day = try await Self.today(client, lea)
            #expect(day.needsYou == 1)
            #expect(day.sections.first?.key == .offers)
            let offer = try #require(try Self.section(day, .offers).items.first)
            #expect(offer.id == place.place.id)
            #expect(offer.needsYou)
            let held = try await app.features.lines.places(of: "lea").first?.place.offeredUntil
            #expect(offer.endsAt.map { Int($0.timeIntervalSince1970) } == held.map { Int($0.timeIntervalSince1970) })
            #expect(offer.actions.map(\.kind) == [.accept, .decline])
            #expect(offer.actions.map(\.api) == ["/api/offers/\(offer.id)/accept", "/api/me/waiting/\(offer.id)"])
            #expect(try Self.section(day, .waiting).items.isEmpty)

            // Any page she opens now shows it, drawn by the server: the badges (Today's tab, Notifications) and the
            // offer with its minutes left; the badge alone says when it changes by itself (the offer's end).
            let library = try await Self.page(client, "/library", browser)
            #expect(Self.badges(library) == [1, 1])
            #expect(library.contains("1 thing needs you now"))
            #expect(library.contains("Held for you: \(offer.title)"))
            #expect(library.contains("data-until=\"\(held!.milliseconds)\""))
            let attention = try await Self.page(client, WebShell.attentionPath, browser)
            #expect(Self.badges(attention) == [1])
            #expect(attention.contains("data-attention-at=\"\(held!.milliseconds)\""))

            // Her home page, opened now (no live event needed), shows it with the forms that act on it.
            let page = try await client.execute(uri: "/", method: .get, headers: browser) { $0.text }
            #expect(page.contains("1 thing needs you now"))
            #expect(page.contains(#"action="/notifications/\#(offer.id)/accept""#))
            #expect(page.contains(#"data-countdown-until=""#))
            #expect(page.range(of: "Held for you")!.lowerBound < page.range(of: "Your bookings today")!.lowerBound)

            // Accept, as a form without JavaScript: the seat is hers, on her day, and nothing needs her yet.
            let accepted = try await client.execute(
                uri: "/notifications/\(offer.id)/accept", method: .post, headers: browser,
                body: ByteBuffer(string: "csrf=\(Self.csrf)")
            ) { $0 }
            #expect(accepted.status == .seeOther)
            day = try await Self.today(client, lea)
            #expect(day.needsYou == 0)
            #expect(try Self.section(day, .offers).items.isEmpty)
            let after = try await Self.page(client, "/library", browser)
            #expect(Self.badges(after) == [0, 0])
            #expect(!after.contains("Held for you"))
            let booking = try #require(try Self.section(day, .bookings).items.first)
            #expect(booking.title == "Duo")
            #expect(booking.detail == "Today, 12:45–13:15 · Check-in opens at 12:30")
            #expect(booking.actions.isEmpty)

            // 12:35: check-in is open; it needs her until 12:55, and the form checks her in.
            app.clock.advance(by: .seconds(start.addingTimeInterval(-10 * 60).timeIntervalSince(app.clock.now)))
            day = try await Self.today(client, lea)
            #expect(day.needsYou == 1)
            let open = try #require(try Self.section(day, .bookings).items.first)
            #expect(open.detail == "Today, 12:45–13:15 · Check in by 12:55")
            #expect(open.endsAt == start.addingTimeInterval(10 * 60))
            let checkIn = try #require(open.actions.first)
            #expect(checkIn.kind == .checkIn)
            let checkInOpen = try await Self.page(client, WebShell.attentionPath, browser)
            #expect(Self.badges(checkInOpen) == [1])
            #expect(checkInOpen.contains("data-attention-at=\"\(start.addingTimeInterval(10 * 60).milliseconds)\""))
            let checked = try await client.execute(
                uri: checkIn.form, method: .post, headers: browser, body: ByteBuffer(string: "csrf=\(Self.csrf)")
            ) { $0 }
            #expect(checked.status == .seeOther)
            day = try await Self.today(client, lea)
            #expect(day.needsYou == 0)
            #expect(try Self.section(day, .bookings).items.first?.detail == "Today, 12:45–13:15 · Checked in")
            #expect(Self.badges(try await Self.page(client, "/rooms", browser)) == [0, 0])
        }
    }

    @Test(arguments: TestDatabase.engines)
    func aStudentsDayHasTheNextClassTheShuttlesAndTheCarParks(engine: Database.Engine) async throws {
        // A teaching Tuesday (week 8 of the demo's semester), 07:54:45 once set up: the lab at 12:30 is next.
        let tuesday = TestTime.next(LocalTime(hour: 7, minute: 30), where: { $0.weekday == 2 })
        try await TestApp.run(engine, at: tuesday) { app, client in
            let kier = try await Self.student(app)
            let then = Self.campus.instant(Self.campus.date(of: tuesday), LocalTime(hour: 7, minute: 55))
                .addingTimeInterval(-15)
            app.clock.advance(by: .seconds(then.timeIntervalSince(app.clock.now)))
            let day = try await Self.today(client, kier)
            let next = try #require(try Self.section(day, .classes).items.first)
            #expect(next.title == "FIT1031 Lab 01")
            #expect(next.detail == "Today · 12:30–13:30 · S4")
            // Shuttles every 20 minutes from 06:00 to Caulfield, every 30 from 06:15 to the CBD.
            let shuttles = try Self.section(day, .shuttles).items
            #expect(shuttles.map(\.title) == ["Clayton → Caulfield", "Clayton → CBD", "Clayton → Caulfield"])
            // In whole minutes left: 5 (of 5:15, less the moment the request took).
            #expect(shuttles.first?.startsAt == Self.campus.instant(Self.campus.date(of: tuesday), LocalTime(hour: 8)))
            #expect(shuttles.first?.detail == "08:00 · in 5\u{a0}min · Scheduled")
            #expect(shuttles[1].detail == "08:15 · in 20\u{a0}min · Scheduled")
            let parks = try Self.section(day, .parkings).items
            #expect(parks.map(\.title).sorted() == ["Caulfield", "Clayton"])
            #expect(parks.first { $0.title == "Clayton" }?.detail?.hasPrefix("645 free places of 800") == true)
            // Someone who is not a student has no timetable sections.
            let ada = try await Self.today(client, try await app.signedIn("ada"))
            #expect(!ada.sections.contains { $0.key == .classes || $0.key == .shuttles })
        }
    }

    @Test func onASaturdayNightTheNextClassIsMondays() async throws {
        let saturday = TestTime.next(LocalTime(hour: 3, minute: 0), where: { $0.weekday == 6 })
        try await TestApp.run(.sqlite, at: saturday) { app, client in
            let kier = try await Self.student(app)
            let day = try await Self.today(client, kier)
            let next = try #require(try Self.section(day, .classes).items.first)
            let monday = Self.campus.date(of: saturday).adding(days: 2)
            #expect(monday.weekday == 1)
            #expect(next.title == "FIT1031 Lecture 01")
            #expect(next.startsAt == Self.campus.instant(monday, LocalTime(hour: 10, minute: 0)))
            #expect(next.detail?.hasPrefix("Monday") == true)
            #expect(next.detail?.contains(" \(monday.day) ") == true)
            #expect(next.detail?.hasSuffix("· 10:00–12:00 · S4") == true)
            // In French, the same day in French words.
            var inFrench = kier
            inFrench[.acceptLanguage] = "fr-FR,fr;q=0.9"
            let french = try await Self.today(client, inFrench)
            #expect(try Self.section(french, .classes).items.first?.detail?.hasPrefix("lundi") == true)
            #expect(try Self.section(french, .classes).title == "Votre prochain cours")
        }
    }

    @Test func aVisitorsHomeIsWhatIsFreeNowTheSpecialsAndSigningIn() async throws {
        try await TestApp.run(at: TestTime.weekdayMorning, configure: { $0.loadDemoData = true }) { app, client in
            try await client.execute(uri: "/", method: .get, headers: [.acceptLanguage: "en"]) { response in
                #expect(response.status == .ok)
                let html = response.text
                #expect(html.contains(#"href="/signin?next=/""#))
                #expect(html.contains("Free now"))
                #expect(html.contains(#"id="today-freeRooms""#))
                #expect(html.contains(#"id="today-specials""#))
                // Nothing personal, and the services still listed.
                #expect(!html.contains(#"id="today-offers""#))
                #expect(!html.contains(#"id="today-bookings""#))
                #expect(html.contains(#"href="/rooms""#))
            }
            // The API is for people signed in.
            try await client.execute(uri: "/api/me/today", method: .get) { #expect($0.status == .unauthorized) }
        }
    }
}
