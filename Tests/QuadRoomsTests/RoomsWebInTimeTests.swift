import Foundation
import Hummingbird
import HummingbirdTesting
import QuadCore
import QuadTestSupport
import Testing

@testable import QuadPlatform
@testable import QuadRooms
@testable import QuadServer

/// Rooms in time through the pages' forms alone (no JavaScript), as a browser without scripts uses them: booking
/// from a time, a series, check-in, cancelling the rest; and the admin's form for the buildings' rules.
@Suite struct RoomsWebInTimeTests {
    static let csrf = "abcdefghijklmnopqrstuvwxyz0123456789ABCD"

    static func browser(_ app: TestApp, _ username: String, role: Role = .member) async throws -> HTTPFields {
        try await app.browser(username, role: role, csrf: csrf)
    }

    static func post(
        _ client: any TestClientProtocol, _ uri: String, _ form: String, headers: HTTPFields
    ) async throws -> TestResponse {
        try await client.execute(
            uri: uri, method: .post, headers: headers, body: ByteBuffer(string: "csrf=\(csrf)&" + form)
        ) { $0 }
    }

    @Test func aBrowserWithoutScriptsBooksATimeASeriesChecksInAndCancelsTheRest() async throws {
        try await RoomsInTimeTests.run(checkIn: 10) { app, client in
            let kier = try await Self.browser(app, "kier")
            let day = RoomsInTimeTests.day
            let booked = try await Self.post(
                client, "/rooms/mostafa/bookings", "date=\(day)&start=10:00&minutes=30", headers: kier)
            #expect(booked.status == .seeOther)
            let location = try #require(booked.headers[.location])
            #expect(location.hasPrefix("/rooms/mostafa?date=\(day)&booked="))
            let page = try await client.execute(uri: location, method: .get, headers: kier) { $0.text }
            #expect(
                page.contains("Booked a seat in Mostafa: \(Localizer(language: .english).longDate(day)), 10:00–10:30."))
            #expect(page.contains("Check in by 10:10"))

            let series = try await Self.post(
                client, "/rooms/yana/bookings",
                "date=\(day)&start=14:00&minutes=60&repeat=weekly&until=\(day.adding(days: 14))", headers: kier)
            #expect(series.headers[.location]?.hasSuffix("&dates=3&of=3") == true)
            let bad = try await Self.post(
                client, "/rooms/yana/bookings", "date=\(day)&start=14:00&minutes=20", headers: kier)
            #expect(bad.status == .unprocessableContent)
            #expect(bad.text.contains("A booking lasts a whole number of quarter hours."))

            // 09:50: the 10:00 booking can be checked in from 09:45.
            let mine = try await app.features.rooms.bookings(
                of: try #require(app.person("kier")))
            let ten = try #require(mine.first { $0.booking.roomId == "mostafa" }).booking
            // /rooms offers it too, and the series can go at once there.
            let rooms = try await client.execute(uri: "/rooms", method: .get, headers: kier) { $0.text }
            #expect(rooms.contains(#"action="/rooms/mostafa/bookings/\#(ten.id)/check-in""#))
            #expect(rooms.contains(#"class="cancel-rest-form""#))
            let checkIn = try await Self.post(
                client, "/rooms/mostafa/bookings/\(ten.id)/check-in", "", headers: kier)
            #expect(checkIn.headers[.location] == "/rooms/mostafa?date=\(day)&checkedin=1")
            #expect(try await app.features.rooms.reservations.find(ten.id, roomId: "mostafa")?.checkedIn == true)

            // The second and third weeks of the series go with "cancel this and later dates".
            let yana = mine.filter { $0.booking.roomId == "yana" }.map(\.booking)
            #expect(yana.count == 3)
            let cancelled = try await Self.post(
                client, "/rooms/yana/bookings/\(yana[1].id)/cancel", "following=1", headers: kier)
            #expect(cancelled.status == .seeOther)
            let left = try await app.features.rooms.bookings(
                of: try #require(app.person("kier")))
            #expect(left.map(\.booking.id) == [ten.id, yana[0].id])
        }
    }

    @Test func theFinderAnswersADayATimeALengthAndAGroupAndBooksTheirSeatsInOneForm() async throws {
        try await RoomsInTimeTests.run { app, client in
            let kier = try await Self.browser(app, "kier")
            let day = RoomsInTimeTests.day.adding(days: 1)
            // Without asking, the form says today from the next quarter hour, for 30 minutes, for one.
            let blank = try await client.execute(uri: "/rooms", method: .get, headers: kier) { $0.text }
            #expect(blank.contains(#"id="find-date" name="date" value="\#(RoomsInTimeTests.day)""#))
            #expect(blank.contains(#"<option value="10:00" selected>10:00</option>"#))
            #expect(blank.contains(#"<option value="30" selected>30 minutes</option>"#))
            #expect(blank.contains(#"<option value="90">1 h 30 min</option>"#))
            #expect(!blank.contains(#"id="found-heading""#))

            let asked = "/rooms?date=\(day)&start=10:00&minutes=30&people=6"
            let page = try await client.execute(uri: asked, method: .get, headers: kier) { $0.text }
            #expect(page.contains("Rooms for 6 people, \(Localizer(language: .english).longDate(day)), 10:00–10:30"))
            #expect(page.contains("86 of 86 seats free"))
            #expect(page.contains("Book 6 seats"))
            // Mostafa offers four seats but holds twelve: empty, it is offered whole.
            #expect(page.contains("The whole room, for up to 12 people"))
            // The fragment the script swaps in is the same answer.
            let fragment = try await client.execute(uri: asked + "&fragment=found", method: .get, headers: kier) {
                $0.text
            }
            #expect(fragment.contains("Book 6 seats") && !fragment.contains("<html"))

            let booked = try await Self.post(
                client, "/rooms/helmold/bookings", "date=\(day)&start=10:00&minutes=30&hold=seat&seats=6",
                headers: kier)
            let location = try #require(booked.headers[.location])
            let after = try await client.execute(uri: location, method: .get, headers: kier) { $0.text }
            #expect(
                after.contains(
                    "Booked 6 seats in Helmold: \(Localizer(language: .english).longDate(day)), 10:00–10:30."))
            let mostafa = try await Self.post(
                client, "/rooms/mostafa/bookings", "date=\(day)&start=11:00&minutes=30&hold=room&seats=6",
                headers: try await Self.browser(app, "team"))
            let whole = try await client.execute(
                uri: try #require(mostafa.headers[.location]), method: .get,
                headers: try await Self.browser(app, "team")
            ) { $0.text }
            #expect(whole.contains("Booked the whole of Mostafa: "))

            // What cannot be read is said, and nothing is looked for.
            for bad in [
                "people=0", "people=lots", "start=10:07", "minutes=20", "date=\(RoomsInTimeTests.day.adding(days: -1))",
            ] {
                let answer = try await client.execute(uri: "/rooms?\(bad)", method: .get, headers: kier) { $0.text }
                #expect(answer.contains(#"id="finder-error""#), "\(bad)")
                #expect(!answer.contains(#"id="found-heading""#), "\(bad)")
            }
        }
    }

    @Test func anAdminSetsABuildingsRulesOnItsFormAndAFaultIsShownBesideItsField() async throws {
        try await RoomsInTimeTests.run { app, client in
            let boss = try await Self.browser(app, "boss", role: .admin)
            let page = try await client.execute(uri: "/admin/rooms", method: .get, headers: boss) { $0 }
            #expect(page.status == .ok)
            // The week as rows of times: Monday 08:00 to 20:00, Saturday closed.
            #expect(page.text.contains("North Hall") && page.text.contains("Monday"))
            #expect(
                page.text.contains(#"name="open0" value="08:00""#)
                    && page.text.contains(#"name="close4" value="20:00""#))
            #expect(page.text.contains(#"name="open5" value="""#))
            let member = try await Self.browser(app, "kier")
            #expect(
                try await client.execute(uri: "/admin/rooms", method: .get, headers: member) { $0.status } == .forbidden
            )

            let bad = try await Self.post(
                client, "/admin/rooms/buildings",
                "building=North+Hall&hours=weekdays&horizonDays=14&maxMinutes=120&checkInMinutes=", headers: boss)
            #expect(bad.status == .unprocessableContent)
            #expect(bad.text.contains(#"value="weekdays""#) && bad.text.contains(#"aria-invalid="true""#))
            let good = try await Self.post(
                client, "/admin/rooms/buildings",
                "building=North+Hall&hours=Mon-Sat+07%3A00-22%3A00&horizonDays=14&maxMinutes=120&checkInMinutes=15",
                headers: boss)
            #expect(good.headers[.location] == "/admin/rooms?saved=North%20Hall")
            let policy = try await app.features.rooms.policy("yana")
            #expect(policy.hours.description == "Mon-Sat 07:00-22:00" && policy.checkInMinutes == 15)
            let saved = try await client.execute(uri: "/admin/rooms?saved=North%20Hall", method: .get, headers: boss) {
                $0.text
            }
            #expect(saved.contains("North Hall&#39;s rules are saved."))  // the apostrophe, HTML-escaped

            // Set with the rows: weekdays, a Saturday morning, Sunday closed; a close of 00:00 is midnight.
            let rows = { (sundayOpens: String) in
                (0..<7).map { day -> String in
                    let (open, close) =
                        day < 5 ? ("08%3A00", "20%3A00") : day == 5 ? ("09%3A00", "00%3A00") : (sundayOpens, "")
                    return "open\(day)=\(open)&close\(day)=\(close)"
                }.joined(separator: "&")
            }
            let week = try await Self.post(
                client, "/admin/rooms/buildings",
                "building=North+Hall&\(rows(""))&horizonDays=14&maxMinutes=120&checkInMinutes=", headers: boss)
            #expect(week.status == .seeOther)
            #expect(
                try await app.features.rooms.policy("yana").hours.description == "Mon-Fri 08:00-20:00; Sat 09:00-24:00")
            let half = try await Self.post(
                client, "/admin/rooms/buildings",
                "building=North+Hall&\(rows("10%3A00"))&horizonDays=14&maxMinutes=120&checkInMinutes=",
                headers: boss)
            #expect(half.status == .unprocessableContent && half.text.contains("Sun: give both times"))
            #expect(half.text.contains(#"name="open6" value="10:00""#))
        }
    }

    @Test func theTimelineShowsEveryRoomsQuarterHoursWithAFreeOneLinkingToItsBookingPanel() async throws {
        try await RoomsInTimeTests.run { app, client in
            let team = try await app.signedIn("team")
            _ = try await RoomsInTimeTests.book(
                client, "mostafa", as: team,
                #"{"start": "\#(RoomsInTimeTests.iso(RoomsInTimeTests.at("10:00")))", "minutes": 30, "hold": "room"}"#)
            let page = try await client.execute(uri: "/rooms-timeline", method: .get, headers: [.accept: "text/html"]) {
                $0
            }
            #expect(page.status == .ok)
            let day = RoomsInTimeTests.day
            // North Hall opens at 08:00 here, Engineering at 07:00, the Library Wing closes at 22:00: the table spans
            // the hours any of them is open, and no more.
            #expect(page.text.contains(#"<th scope="col" colspan="4">07:00</th>"#))
            #expect(page.text.contains(#"<th scope="col" colspan="4">21:00</th>"#))
            #expect(!page.text.contains(#">06:00</th>"#) && !page.text.contains(#">22:00</th>"#))
            // Mostafa is held whole from 10:00 to 10:30, closed before 08:00, free at 10:30.
            #expect(page.text.contains("10:00, Taken"))
            #expect(page.text.contains(#"href="/rooms/mostafa?date=\#(day)&amp;start=10:30#book""#))
            #expect(!page.text.contains(#"href="/rooms/mostafa?date=\#(day)&amp;start=10:00#book""#))
            #expect(page.text.contains("07:45, closed"))
            #expect(page.text.components(separatedBy: "<tr data-room-id=").count - 1 == 8)
        }
    }
}
