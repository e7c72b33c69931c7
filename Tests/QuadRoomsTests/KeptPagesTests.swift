import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import QuadCore
import QuadTestSupport
import Testing

@testable import QuadAccounts
@testable import QuadPlatform
@testable import QuadRooms
@testable import QuadServer

/// A page asked for again, by the same person with the same cookies, is answered from the router's own answer,
/// kept (`PageCache`), over a real connection: until anything changes, and never across a sign-out.
@Suite struct KeptPagesTests {
    static let csrf = "abcdefghijklmnopqrstuvwxyz0123456789ABCD"

    /// A browser's cookies for the session of `bearer` (the same token).
    static func browser(_ bearer: HTTPFields) throws -> HTTPFields {
        let token = String(try #require(bearer[.authorization]).dropFirst("Bearer ".count))
        return [.cookie: "quad_csrf=\(csrf); quad_session=\(token); quad_lang=en"]
    }

    /// Kier signed in with a browser's cookies, his `/rooms` page kept: asked three times (the fast path learns his
    /// session, then the page is drawn and kept, then answered from it).
    static func withKeptRoomsPage(
        routes: (Routes) -> Void = { _ in },
        _ body: @escaping @Sendable (TestApp, any TestClientProtocol, HTTPFields, LogLines) async throws -> Void
    ) async throws {
        let logs = LogLines()
        try await TestApp.run(
            at: TestTime.weekdayMorning, configure: { $0.loadDemoData = true }, routes: routes, live: true,
            logger: logs.logger
        ) {
            app, client in
            let kier = try Self.browser(try await app.signedIn("kier"))
            for _ in 0..<3 { _ = try await client.execute(uri: "/rooms", method: .get, headers: kier) }
            #expect(Self.keptAnswers(logs) == 1)
            try await body(app, client, kier, logs)
        }
    }

    /// `uri` asked until the fast path has answered `answers` requests from kept pages in all, a few times at most: a
    /// page drawn as a change lands, or as the session's cookie is renewed, is not kept. The last page answered.
    @discardableResult
    static func askedUntilKept(
        _ answers: Int, _ uri: String, _ headers: HTTPFields, _ client: some TestClientProtocol, _ logs: LogLines
    ) async throws -> String {
        var page = ""
        for _ in 0..<4 where keptAnswers(logs) < answers {
            page = try await client.execute(uri: uri, method: .get, headers: headers).text
        }
        #expect(keptAnswers(logs) == answers)
        return page
    }

    /// How many answers the fast path gave from a kept page.
    static func keptAnswers(_ logs: LogLines) -> Int {
        logs.all.split(separator: "\n").filter { $0.contains(#""page": kept"#) }.count
    }

    @Test func aPageIsKeptUntilABookingChangesIt() async throws {
        let logs = LogLines()
        try await TestApp.run(
            at: TestTime.weekdayMorning, configure: { $0.loadDemoData = true }, live: true, logger: logs.logger
        ) { app, client in
            let bearer = try await app.signedIn("kier")
            let kier = try Self.browser(bearer)
            // The first request teaches the fast path the session; the second is rendered and kept.
            _ = try await client.execute(uri: "/rooms", method: .get, headers: kier)
            let rendered = try await client.execute(uri: "/rooms", method: .get, headers: kier)
            #expect(Self.keptAnswers(logs) == 0)
            // A second on: a page drawn again would say so (`data-updated-at`); the kept one is the same bytes.
            app.clock.advance(by: .seconds(1))
            let kept = try await client.execute(uri: "/rooms", method: .get, headers: kier)
            #expect(Self.keptAnswers(logs) == 1)
            #expect(rendered.status == .ok && kept.status == .ok)
            #expect(kept.body == rendered.body)
            let fields: [HTTPField.Name] = [
                .contentType, .contentLength, .cacheControl, .contentSecurityPolicy, .xContentTypeOptions,
            ]
            for field in fields { #expect(kept.headers[field] == rendered.headers[field], "\(field)") }
            #expect(kept.headers[values: .vary] == rendered.headers[values: .vary])
            #expect(kept.headers[.date] != nil)
            #expect(rendered.headers[PageCache.keepHeader] == nil && kept.headers[PageCache.keepHeader] == nil)
            #expect(!kept.text.contains("data-booking-id"))

            // Another way of asking (gzip) is another answer, never the plain one's bytes.
            var gzip = kier
            gzip[.acceptEncoding] = "gzip"
            let zipped = try await client.execute(uri: "/rooms", method: .get, headers: gzip)
            #expect(zipped.headers[.contentEncoding] == "gzip")
            #expect(try await client.execute(uri: "/rooms", method: .get, headers: kier).body == rendered.body)

            // A refused request changed nothing: the page stays kept (anyone can send one).
            #expect(try await client.book("no-such-room", as: bearer).status == .notFound)
            let before = Self.keptAnswers(logs)
            #expect(try await client.execute(uri: "/rooms", method: .get, headers: kier).body == rendered.body)
            #expect(Self.keptAnswers(logs) == before + 1)

            // Kier books through the API: his next page shows it.
            #expect(try await client.book("helmold", as: bearer).status == .created)
            let after = try await client.execute(uri: "/rooms", method: .get, headers: kier)
            #expect(after.text.contains("data-booking-id") && after.text.contains(#"data-room-id="helmold""#))
        }
    }

    /// A kept page is written as its head was kept, with this moment's `Date` and an id of its own (on its log line),
    /// every other field the router's: a page small enough to share its head's buffer, and one larger; with the rate
    /// limiter on (the default), where this client stands (`RateLimit`), one request less each time.
    @Test(arguments: ["/notifications", "/rooms"], [false, true])
    func aKeptPageHasTheRoutersHeadWithItsOwnDateAndId(uri: String, limited: Bool) async throws {
        let logs = LogLines()
        try await TestApp.run(
            at: TestTime.weekdayMorning,
            configure: {
                $0.loadDemoData = true
                if limited {
                    $0.rateLimit = 0.01
                    $0.rateBurst = 20
                }
            }, live: true, logger: logs.logger
        ) { app, client in
            let requestId = HTTPField.Name("X-Request-Id")!
            let kier = try Self.browser(try await app.signedIn("kier"))
            // The first request teaches the fast path the session; the second is rendered and kept.
            _ = try await client.execute(uri: uri, method: .get, headers: kier)
            let rendered = try await client.execute(uri: uri, method: .get, headers: kier)
            #expect((rendered.body.readableBytes > FastPath.inlineBody) == (uri == "/rooms"))
            app.clock.advance(by: .seconds(1))
            // The clock runs on meanwhile: on a busy machine a second can begin while the answer is given.
            let asked = HTTPDate.text(app.clock.now)
            let kept = try await client.execute(uri: uri, method: .get, headers: kier)
            let answered = HTTPDate.text(app.clock.now)
            #expect(Self.keptAnswers(logs) == 1)
            #expect(kept.status == .ok && kept.body == rendered.body)
            let own: Set<HTTPField.Name> = [.date, requestId, .rateLimit]
            let others = { (answer: TestResponse) in answer.headers.filter { !own.contains($0.name) } }
            #expect(others(kept) == others(rendered))
            // Requests left: 20, less the two before, less this one (a second refills a hundredth of one).
            let left = { (answer: TestResponse) in answer.headers[.rateLimit]?.split(separator: ";")[1] }
            #expect(left(rendered) == (limited ? "r=18" : nil) && left(kept) == (limited ? "r=17" : nil))
            #expect((kept.headers[.rateLimitPolicy] != nil) == limited)
            #expect(kept.headers[.date] == asked || kept.headers[.date] == answered, "this moment's")
            #expect(kept.headers[.date] != rendered.headers[.date])
            let id = try #require(kept.headers[requestId])
            #expect(id != rendered.headers[requestId])
            let line = logs.all.split(separator: "\n").first { $0.contains(id) }
            #expect(line?.contains(#""page": kept"#) == true, "its log line: \(line ?? "none")")
            // The connection goes on: the next answer is the same page, its id its own.
            let again = try await client.execute(uri: uri, method: .get, headers: kier)
            #expect(Self.keptAnswers(logs) == 2)
            #expect(again.body == rendered.body && again.headers[requestId].map { $0 != id } == true)
            #expect(left(again) == (limited ? "r=16" : nil))
        }
    }

    /// A kept page carries what needs the person (the badge, the offer held for them): it goes when the offer ends,
    /// though nothing is announced then, and the page drawn after says nothing is held.
    @Test func aKeptPageWithAnOfferHeldGoesWhenTheOfferEnds() async throws {
        let logs = LogLines()
        // A Tuesday, 09:50 on the demo campus: the seat waited for is at 12:45.
        let tuesday = TestTime.next(LocalTime(hour: 9, minute: 50), where: { $0.weekday == 2 })
        try await TestApp.run(at: tuesday, configure: { $0.loadDemoData = true }, live: true, logger: logs.logger) {
            app, client in
            let rooms = app.features.rooms
            _ = try await rooms.store.create(
                RoomRecord(id: "duo", name: "Duo", building: "North Hall", capacity: 1, seats: 1))
            await rooms.changed("duo", spots: 1, .created)  // as the API does: the rooms' rules are read again
            let lea = try Self.browser(try await app.signedIn("lea"))
            let kim = Person(username: "kim", displayName: "Kim", role: .member)
            let leaPerson = try #require(try await app.person("lea"))
            let campus = CampusClock(timeZone: TestTime.melbourne)
            let start = campus.instant(campus.date(of: tuesday), LocalTime(hour: 12, minute: 45))
            let booked = try await rooms.book(
                roomId: "duo", owner: kim, start: start, minutes: 30, hold: .seat, recurrence: nil)
            _ = try await rooms.wait(roomId: "duo", person: leaPerson, start: start, minutes: 30, hold: .seat)
            _ = try await rooms.cancel(booked.booking.id, roomId: "duo", by: kim, following: false)
            let until = try #require(try await app.features.lines.places(of: "lea").first?.place.offeredUntil)

            for _ in 0..<3 { _ = try await client.execute(uri: "/rooms", method: .get, headers: lea) }
            #expect(Self.keptAnswers(logs) == 1)
            let kept = try await client.execute(uri: "/rooms", method: .get, headers: lea)
            #expect(Self.keptAnswers(logs) == 2)
            #expect(kept.text.contains("Held for you: "))

            app.clock.advance(by: .seconds(until.timeIntervalSince(app.clock.now) + 1))
            let drawn = try await client.execute(uri: "/rooms", method: .get, headers: lea)
            #expect(Self.keptAnswers(logs) == 2)
            #expect(!drawn.text.contains("Held for you: "))
        }
    }

    /// A person's day (`/`) is kept too: until a change it shows (a booking of theirs), and never past the next minute
    /// ("in 25 minutes"). Without the demo's services, whose car-park readings would drop it every few seconds.
    @Test func aPersonsDayIsKeptUntilAChangeOrItsNextMinute() async throws {
        let logs = LogLines()
        try await TestApp.run(
            at: TestTime.weekdayMorning, configure: { $0.loadDemoData = true }, live: true, services: false,
            logger: logs.logger
        ) {
            app, client in
            let bearer = try await app.signedIn("kier")
            let kier = try Self.browser(bearer)
            var drawn = try await client.execute(uri: "/", method: .get, headers: kier)
            for _ in 0..<2 { drawn = try await client.execute(uri: "/", method: .get, headers: kier) }
            #expect(Self.keptAnswers(logs) == 1)
            #expect(drawn.text.contains("Today, Kier"))

            // A booking of his is on his day at once.
            #expect(try await client.book("helmold", as: bearer).status == .created)
            let booked = try await client.execute(uri: "/", method: .get, headers: kier)
            #expect(Self.keptAnswers(logs) == 1)
            #expect(booked.text.contains("Helmold"))
            // Then kept again.
            try await Self.askedUntilKept(2, "/", kier, client, logs)

            // The next minute, the day is drawn again, and kept again: the page whose time was up is replaced, with
            // nothing else changed.
            app.clock.advance(by: .seconds(60))
            _ = try await client.execute(uri: "/", method: .get, headers: kier)
            #expect(Self.keptAnswers(logs) == 2)
            _ = try await client.execute(uri: "/", method: .get, headers: kier)
            #expect(Self.keptAnswers(logs) == 3)
        }
    }

    /// The specials page is kept until a special changes, and until a special on it is over: the next page drawn
    /// then leaves it out, with nothing announced (no service runs here to announce it).
    @Test func theSpecialsPageIsKeptUntilASpecialIsOver() async throws {
        let logs = LogLines()
        try await TestApp.run(at: TestTime.weekdayMorning, live: true, services: false, logger: logs.logger) {
            app, client in
            let admin: HTTPFields = [.authorization: "Bearer \(TestApp.adminToken)", .contentType: "application/json"]
            let kier = try Self.browser(try await app.signedIn("kier"))
            let melon: [String: Any] = [
                "display_name": "Honeydew melon", "width": 8, "height": 8, "original_price": "4.00", "price": "3.00",
                "validUntil": app.clock.now.addingTimeInterval(3600).formatted(.iso8601),
            ]
            let created = try await client.execute(
                uri: "/api/specials", method: .post, headers: admin,
                body: ByteBuffer(data: try JSONSerialization.data(withJSONObject: melon)))
            #expect(created.status == .created)
            var page = try await client.execute(uri: "/specials", method: .get, headers: kier)
            for _ in 0..<2 { page = try await client.execute(uri: "/specials", method: .get, headers: kier) }
            #expect(Self.keptAnswers(logs) == 1)
            #expect(page.text.contains("Honeydew melon"))

            app.clock.advance(by: .seconds(3601))
            let over = try await client.execute(uri: "/specials", method: .get, headers: kier)
            #expect(Self.keptAnswers(logs) == 1)
            #expect(over.status == .ok && !over.text.contains("Honeydew melon"))
            // Then kept again.
            try await Self.askedUntilKept(2, "/specials", kier, client, logs)
        }
    }

    /// The library is kept until a loan falls due, and until the person chooses another order.
    @Test func theLibraryIsKeptUntilALoanFallsDueOrAnotherOrderIsChosen() async throws {
        let logs = LogLines()
        try await TestApp.run(
            at: TestTime.weekdayMorning, configure: { $0.loadDemoData = true }, live: true, services: false,
            logger: logs.logger
        ) {
            app, client in
            let kier = try Self.browser(try await app.signedIn("kier"))
            let kept = { (answers: Int) in try await Self.askedUntilKept(answers, "/library", kier, client, logs) }
            let overdue = { (page: String) in page.components(separatedBy: #"data-status="overdue""#).count - 1 }
            #expect(overdue(try await kept(1)) == 1)

            // Another order, chosen on the list with `?sort=`, is the list's from then on.
            let oldest = try await client.execute(uri: "/library?sort=oldest", method: .get, headers: kier)
            #expect(oldest.text.contains(#"value="oldest" selected"#))
            let after = try await client.execute(uri: "/library", method: .get, headers: kier)
            #expect(after.text.contains(#"value="oldest" selected"#))
            _ = try await kept(2)

            // "Running Lean" went out a day ago for 14 days (the others earlier): a minute before it is due, then a
            // minute after.
            app.clock.advance(by: .seconds(13 * 86400 - 60))
            #expect(overdue(try await kept(3)) == 3)
            app.clock.advance(by: .seconds(120))
            let due = try await client.execute(uri: "/library", method: .get, headers: kier)
            #expect(Self.keptAnswers(logs) == 3)
            #expect(overdue(due.text) == 4)
        }
    }

    /// A person's notifications are kept until their reminders are turned off or on (from any instance), and until a
    /// loan of theirs falls due.
    @Test func notificationsAreKeptUntilRemindersChangeOrALoanFallsDue() async throws {
        let logs = LogLines()
        try await TestApp.run(
            at: TestTime.weekdayMorning, configure: { $0.loadDemoData = true }, live: true, services: false,
            logger: logs.logger
        ) {
            app, client in
            let ada = try Self.browser(try await app.signedIn("ada"))
            let kept = { (answers: Int) in try await Self.askedUntilKept(answers, "/notifications", ada, client, logs) }
            let offersOn = #"name="offers" value="on" checked"#
            #expect(try await kept(1).contains(offersOn))

            // Turned off with no request to this instance (as another instance does it).
            try await app.features.waiting.lines.setRemindersOff([.offers], for: "ada")
            let off = try await client.execute(uri: "/notifications", method: .get, headers: ada)
            #expect(off.text.contains(#"name="offers" value="on">"#) && !off.text.contains(offersOn))

            // "Clean Code" went out three days ago for 14 days: a minute before it is due, then a minute after.
            app.clock.advance(by: .seconds(11 * 86400 - 60))
            #expect(try await kept(2).contains("loan-dueToday"))
            app.clock.advance(by: .seconds(120))
            let due = try await client.execute(uri: "/notifications", method: .get, headers: ada)
            #expect(Self.keptAnswers(logs) == 2)
            #expect(due.text.contains("loan-overdue") && !due.text.contains("loan-dueToday"))
        }
    }

    /// A change this instance did not make (another instance's, announced on the hub) drops the kept pages too.
    @Test func aChangeAnnouncedOnTheHubDropsTheKeptPages() async throws {
        try await Self.withKeptRoomsPage { app, client, kier, logs in
            // Stored without a word to anyone: the kept page does not know of it.
            let (booking, spots, _) = try await app.features.rooms.reservations.reserve(
                .fromNow(in: "helmold", for: "kier", clock: app.clock))
            #expect(!(try await client.execute(uri: "/rooms", method: .get, headers: kier).text.contains(booking.id)))
            #expect(Self.keptAnswers(logs) == 2)
            // A change the page does not show (a car park's reading) leaves it kept.
            await app.platform.events.publishForTesting("parking", ["id": "north"])
            #expect(!(try await client.execute(uri: "/rooms", method: .get, headers: kier).text.contains(booking.id)))
            #expect(Self.keptAnswers(logs) == 3)
            // Announced, as another instance announces its changes: the next page is drawn again and shows it.
            await app.features.rooms.changed("helmold", spots: spots, .spots)
            #expect(try await client.execute(uri: "/rooms", method: .get, headers: kier).text.contains(booking.id))
            #expect(Self.keptAnswers(logs) == 3)
        }
    }

    /// A change made by a request on this instance that tells nobody (no event, no notice) still drops the kept pages,
    /// before its answer is sent.
    @Test func aChangeThatTellsNobodyStillDropsTheKeptPages() async throws {
        let rooms = NIOLockedValueBox<Rooms?>(nil)
        let silent: (Routes) -> Void = { routes in
            routes.on(.post, "/api/test/silent-booking", .public) { _, _ -> Response in
                let rooms = try #require(rooms.withLockedValue { $0 })
                _ = try await rooms.reservations.reserve(
                    .fromNow(in: "helmold", for: "kier", clock: rooms.platform.clock))
                return Response(status: .noContent)
            }
        }
        try await Self.withKeptRoomsPage(routes: silent) { app, client, kier, logs in
            rooms.withLockedValue { $0 = app.features.rooms }
            let answer = try await client.execute(
                uri: "/api/test/silent-booking", method: .post, headers: [.contentType: "application/json"])
            #expect(answer.status == .noContent)
            #expect(
                try await client.execute(uri: "/rooms", method: .get, headers: kier).text.contains("data-booking-id"))
            #expect(Self.keptAnswers(logs) == 1)
        }
    }

    /// Many asking at once for a page being drawn wait for the one drawing it and are answered with it, rather than
    /// each drawing their own; a page that may not be kept (it sets a cookie) is then drawn for each of them, in turn.
    @Test(arguments: [true, false])
    func askedByManyAtOnceAPageIsDrawnOnce(keepable: Bool) async throws {
        let draws = NIOLockedValueBox(0)
        let gate = Gate()
        let slow = Self.countedPage(draws: draws, heldAt: 1, by: gate, types: [.event(.room)], setsCookie: !keepable)
        try await TestApp.run(at: TestTime.weekdayMorning, routes: slow, live: true) { app, client in
            let port = try #require(client.port)

            let ask =
                "GET /test/counted-page HTTP/1.1\r\nHost: quad.test\r\n\r\n"
                + "GET /health HTTP/1.1\r\nHost: quad.test\r\nConnection: close\r\n\r\n"
            let answers = try await withThrowingTaskGroup(of: [String].self) { group in
                group.addTask { try await FastPathTests.exchange(port: port, ask) }
                try await gate.open {
                    try await eventually("the first is drawing") { draws.withLockedValue { $0 } == 1 }
                    for _ in 0..<4 { group.addTask { try await FastPathTests.exchange(port: port, ask) } }
                    try await eventually("the others wait for it") { app.platform.pages.waiting == 4 }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(answers.count == 5)
            for answer in answers {
                #expect(
                    answer.count == 2 && answer[0].hasPrefix("200 ")
                        && answer[0].contains(keepable ? "drawing 1<" : "drawing "))
            }
            #expect(draws.withLockedValue { $0 } == (keepable ? 1 : 5))
        }
    }

    /// A route that keeps nothing (no `Quad-Keep`: `/health`, the contract, a 404) is answered for many asking at once
    /// side by side, once its first answer said so: none waits for another, as each would for a page being drawn.
    @Test func aRouteThatKeepsNothingIsAnsweredForManyAtOnce() async throws {
        let draws = NIOLockedValueBox(0)
        let gate = Gate()
        let unkept: (Routes) -> Void = { routes in
            routes.on(.get, "/test/unkept", .public) { _, _ -> Response in
                let draw = draws.withLockedValue {
                    $0 += 1
                    return $0
                }
                if draw > 1 { await gate.passed() }
                return Response(
                    status: .ok, headers: [.contentType: "text/plain; charset=utf-8"],
                    body: .init(byteBuffer: ByteBuffer(string: "answer \(draw)")))
            }
        }
        try await TestApp.run(at: TestTime.weekdayMorning, routes: unkept, live: true) { app, client in
            let port = try #require(client.port)
            let ask =
                "GET /test/unkept HTTP/1.1\r\nHost: quad.test\r\n\r\n"
                + "GET /health HTTP/1.1\r\nHost: quad.test\r\nConnection: close\r\n\r\n"
            // Its first answer says it keeps nothing.
            _ = try await FastPathTests.exchange(port: port, ask)
            let answers = try await withThrowingTaskGroup(of: [String].self) { group in
                for _ in 0..<5 { group.addTask { try await FastPathTests.exchange(port: port, ask) } }
                try await gate.open {
                    try await eventually("all five are with the router at once") { draws.withLockedValue { $0 } == 6 }
                    #expect(app.platform.pages.waiting == 0)
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(answers.count == 5)
            for answer in answers { #expect(answer.count == 2 && answer[0].hasPrefix("200 ")) }
        }
    }

    /// While a page is drawn again after a car park's reading, whoever else asks for it gets the page kept before the
    /// reading at once, rather than waiting: for a reading of the last 2 seconds only. After a booking, they wait for
    /// the page that shows it.
    @Test(arguments: [("parking", 0, true), ("parking", 3, false), ("room", 0, false)])
    func aPageBehindAReadingIsAnsweredWhileItIsDrawnAgain(
        change: String, secondsLater: Int, answered: Bool
    )
        async throws
    {
        let draws = NIOLockedValueBox(0)
        let gate = Gate()
        let counted = Self.countedPage(draws: draws, heldAt: 2, by: gate, types: [.event(.room), .event(.parking)])
        try await TestApp.run(at: TestTime.weekdayMorning, routes: counted, live: true) { app, client in
            let port = try #require(client.port)
            // Kept pages are answered on connections kept alive: the second request closes it.
            let ask =
                "GET /test/counted-page HTTP/1.1\r\nHost: quad.test\r\n\r\n"
                + "GET /health HTTP/1.1\r\nHost: quad.test\r\nConnection: close\r\n\r\n"
            // Drawn, then kept.
            for _ in 0..<2 { _ = try await FastPathTests.exchange(port: port, ask) }
            #expect(draws.withLockedValue { $0 } == 1)

            await app.platform.events.publishForTesting(change, ["id": "north"])
            app.clock.advance(by: .seconds(secondsLater))
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    let again = try await FastPathTests.exchange(port: port, ask)
                    #expect(again.first?.contains("drawing 2") == true)
                }
                try await gate.open {
                    try await eventually("it is drawn again") { draws.withLockedValue { $0 } == 2 }
                    if answered {
                        for _ in 0..<4 {
                            let before = try await FastPathTests.exchange(port: port, ask)
                            #expect(before.first?.contains("drawing 1") == true)
                        }
                    } else {
                        for _ in 0..<4 {
                            group.addTask {
                                let after = try await FastPathTests.exchange(port: port, ask)
                                #expect(after.first?.contains("drawing 2") == true)
                            }
                        }
                        try await eventually("the others wait for it") { app.platform.pages.waiting == 4 }
                    }
                }
                try await group.waitForAll()
            }
            #expect(draws.withLockedValue { $0 } == 2)
        }
    }

    /// Two instances on one PostgreSQL database: a role change or a sign-out on one drops the pages the other kept.
    @Test(.enabled(if: TestDatabase.postgresURL != nil), .timeLimit(.minutes(5)))
    func aChangeOnOneInstanceDropsThePagesTheOtherKept() async throws {
        try await TwoInstances.run(loadDemoData: true) { first, second in
            let pages = second.platform.pages
            let ada = try #require(try await first.accounts.people.find("ada"))
            let key = PageCache.Key(
                target: "/rooms", cookies: "quad_session=…", acceptLanguage: "", baseURL: "http://localhost",
                gzip: false)
            let keep = {
                pages.keep(
                    key, head: HTTPResponseHead(version: .http1_1, status: .ok), body: ByteBuffer(string: "Ada's page"),
                    person: ada, stamp: try #require(pages.stamp()),
                    keep: PageCache.keepValue(until: nil, person: ada, types: [.event(.room)]))
                #expect(pages.page(key, person: ada) != nil)
            }
            try keep()
            _ = try await first.accounts.people.update(
                "ada", displayName: nil, role: .admin, studentId: nil, password: nil, keys: first.accounts.keys)
            try await eventually("the role change reaches the other instance", timeout: .seconds(2)) {
                pages.page(key, person: ada) == nil
            }
            try keep()
            let (token, _) = try await first.accounts.sessions.start(for: "ada", kind: .web)
            try keep()
            try await first.accounts.sessions.end(token)
            try await eventually("the sign-out reaches the other instance", timeout: .seconds(2)) {
                pages.page(key, person: ada) == nil
            }
        }
    }

    /// After a sign-out, the same cookies get the page of someone signed out, never the kept page of the person.
    @Test func aSignOutIsNeverAnsweredWithTheKeptPage() async throws {
        try await Self.withKeptRoomsPage { _, client, kier, logs in
            var form = kier
            form[.contentType] = "application/x-www-form-urlencoded"
            let signedOut = try await client.execute(
                uri: "/signout", method: .post, headers: form, body: ByteBuffer(string: "csrf=\(Self.csrf)"))
            #expect(signedOut.status == .seeOther)
            let page = try await client.execute(uri: "/rooms", method: .get, headers: kier)
            #expect(page.status == .ok && !page.text.contains("my-bookings"))
            #expect(Self.keptAnswers(logs) == 1)
        }
    }
}

extension ReservationIntent {
    /// A seat for an hour from now, stored without a word to anyone.
    static func fromNow(in room: String, for owner: String, clock: any QuadClock) -> ReservationIntent {
        let now = SlotRange.slot(containing: clock.now)
        return ReservationIntent(
            roomId: room, range: SlotRange(lower: now, upper: now + 4)!, hold: .seat, owner: owner,
            person: owner.capitalized, checkInBy: nil)
    }
}

extension KeptPagesTests {
    /// A page at `/test/counted-page` that says which drawing it is ("drawing 2"), may be kept until a change of
    /// `types`, and whose drawing number `heldAt` waits at `gate`.
    static func countedPage(
        draws: NIOLockedValueBox<Int>, heldAt: Int, by gate: Gate, types: [HubChange], setsCookie: Bool = false
    ) -> (Routes) -> Void {
        { routes in
            routes.on(.get, "/test/counted-page", .public) { _, _ -> Response in
                let draw = draws.withLockedValue {
                    $0 += 1
                    return $0
                }
                if draw == heldAt { await gate.passed() }
                var response = Response(
                    status: .ok, headers: [.contentType: "text/html; charset=utf-8"],
                    body: .init(byteBuffer: ByteBuffer(string: "<p>drawing \(draw)</p>")))
                response.headers[PageCache.keepHeader] = PageCache.keepValue(until: nil, person: nil, types: types)
                if setsCookie { response.headers[.setCookie] = "seen=1; Path=/" }
                return response
            }
        }
    }
}

/// Holds whoever passes it until it is opened.
actor Gate {
    private var isOpen = false
    private var held: [CheckedContinuation<Void, Never>] = []

    func passed() async {
        if isOpen { return }
        await withCheckedContinuation { held.append($0) }
    }

    func open() {
        isOpen = true
        for continuation in held { continuation.resume() }
        held = []
    }

    /// Runs `body` while the gate holds whoever reaches it, then opens it, also when `body` throws (so that nothing
    /// it held is left waiting).
    nonisolated func open(after body: () async throws -> Void) async throws {
        do {
            try await body()
        } catch {
            await open()
            throw error
        }
        await open()
    }
}
