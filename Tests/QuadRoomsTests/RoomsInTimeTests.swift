import Foundation
import Hummingbird
import HummingbirdTesting
import QuadCore
import QuadTestSupport
import Testing

@testable import QuadPlatform
@testable import QuadRooms
@testable import QuadServer

/// Rooms in time through the API, on the demo campus (Melbourne), at a Tuesday 09:50 chosen from the tests' date:
/// what a booking holds and when, the original apps' calls, series, check-in and the release of no-shows.
@Suite struct RoomsInTimeTests {
    static let campus = CampusClock(timeZone: TestTime.melbourne)
    /// A Tuesday, 09:50 on the campus.
    static let tuesday = TestTime.next(LocalTime(hour: 9, minute: 50), where: { $0.weekday == 2 })
    static var day: LocalDate { campus.date(of: tuesday) }

    /// The instant `time` on `date` (the test's Tuesday by default) on the campus clock.
    static func at(_ time: String, on date: LocalDate = day) -> Date { campus.instant(date, LocalTime(time)!) }

    /// North Hall (Ljerka, Mostafa with 4 seats, Yana) opens weekdays 08:00 to 20:00, with `checkIn` minutes to check in.
    static func run(
        _ engine: Database.Engine = .sqlite, checkIn: Int? = nil, services: Bool = true, live: Bool = false,
        _ body: @escaping @Sendable (TestApp, any TestClientProtocol) async throws -> Void
    ) async throws {
        try await TestApp.run(
            engine, at: tuesday, configure: { $0.loadDemoData = true }, live: live, services: services
        ) {
            app, client in
            try await app.features.rooms.setRules(
                BookingPolicy(hours: .weekdays, horizonDays: 56, maxMinutes: 240, checkInMinutes: checkIn),
                forBuilding: "North Hall")
            try await body(app, client)
        }
    }

    static func book(
        _ client: any TestClientProtocol, _ room: String, as headers: HTTPFields, _ json: String
    ) async throws -> TestResponse {
        try await client.execute(
            uri: "/api/rooms/\(room)/bookings", method: .post, headers: headers, body: ByteBuffer(string: json))
    }

    static func spots(_ client: any TestClientProtocol, _ room: String) async throws -> Int? {
        try await client.execute(uri: "/api/rooms", method: .get) { response in
            (response.json["rooms"] as? [[String: Any]])?.first { $0["id"] as? String == room }?["spots"] as? Int
        }
    }

    static func iso(_ date: Date) -> String { date.formatted(.iso8601) }

    /// A link's path and query, from `/api/` on.
    static func path(of url: String) -> String {
        url.range(of: "/api/").map { String(url[$0.lowerBound...]) } ?? url
    }

    @Test(arguments: TestDatabase.engines)
    func theOriginalBookingHoldsASeatUntilTheBuildingCloses(engine: Database.Engine) async throws {
        try await Self.run(engine) { app, client in
            let kier = try await app.signedIn("kier")
            let original = try await client.execute(
                uri: "/api/book", method: .post, headers: kier, body: ByteBuffer(string: #"{"name": "Mostafa"}"#))
            #expect(original.status == .ok)
            let answer = try JSONDecoder().decode(
                RoomsAPITests.BookRoomResponse.self, from: Data(buffer: original.body))
            #expect(answer.success)
            #expect(try await Self.spots(client, "mostafa") == 3)
            let mine = try await client.execute(uri: "/api/me/bookings", method: .get, headers: kier) {
                ($0.json["bookings"] as? [[String: Any]]) ?? []
            }
            #expect(mine.count == 1)
            #expect(mine.first?["start"] as? String == Self.iso(Self.at("09:45")))
            #expect(mine.first?["end"] as? String == Self.iso(Self.at("20:00")))

            // At 20:00 the building closes: nothing is free, and nothing can be booked.
            app.clock.advance(by: .seconds(Self.at("20:00").timeIntervalSince(app.clock.now)))
            #expect(try await Self.spots(client, "mostafa") == 0)
            try await client.execute(
                uri: "/api/book", method: .post, headers: kier, body: ByteBuffer(string: #"{"name": "Yana"}"#)
            ) { response in
                #expect(response.status == .conflict)
                #expect(response.json["success"] as? Bool == false)
            }
            let closed = try await Self.book(client, "yana", as: kier, "{}")
            #expect(closed.status == .conflict)
            #expect((closed.json["type"] as? String)?.hasSuffix("room-closed") == true)
            // The next morning the booking is over and every seat is free again.
            app.clock.advance(
                by: .seconds(Self.at("08:00", on: Self.day.adding(days: 1)).timeIntervalSince(app.clock.now)))
            #expect(try await Self.spots(client, "mostafa") == 4)
            #expect(
                try await client.execute(uri: "/api/me/bookings", method: .get, headers: kier) {
                    ($0.json["bookings"] as? [[String: Any]])?.isEmpty
                } == true)
        }
    }

    @Test func aBookingAtATimeHoldsItsSeatOnlyThen() async throws {
        try await Self.run { app, client in
            let kier = try await app.signedIn("kier")
            let booked = try await Self.book(
                client, "mostafa", as: kier, #"{"start": "\#(Self.iso(Self.at("10:00")))", "minutes": 30}"#)
            #expect(booked.status == .created)
            #expect(booked.json["spots"] as? Int == 4)  // free now: the booking starts at 10:00
            let etag = try await client.execute(uri: "/api/rooms", method: .get) { $0.headers[.eTag] }
            app.clock.advance(by: .seconds(Self.at("10:00").timeIntervalSince(app.clock.now)))
            try await client.execute(uri: "/api/rooms", method: .get, headers: [.ifNoneMatch: etag ?? ""]) {
                #expect($0.status == .ok)  // the kept answer expired at the quarter hour
            }
            #expect(try await Self.spots(client, "mostafa") == 3)
            app.clock.advance(by: .seconds(30 * 60))
            #expect(try await Self.spots(client, "mostafa") == 4)
        }
    }

    @Test(arguments: TestDatabase.engines)
    func aWholeRoomAndSeatsShareNoTime(engine: Database.Engine) async throws {
        try await Self.run(engine) { app, client in
            let (ada, team, grace) = (
                try await app.signedIn("ada"), try await app.signedIn("team"), try await app.signedIn("grace")
            )
            func at(_ time: String, _ minutes: Int, hold: String = "seat") -> String {
                #"{"start": "\#(Self.iso(Self.at(time)))", "minutes": \#(minutes), "hold": "\#(hold)"}"#
            }
            #expect(try await Self.book(client, "mostafa", as: ada, at("10:00", 60)).status == .created)
            let clash = try await Self.book(client, "mostafa", as: team, at("10:45", 45, hold: "room"))
            #expect(clash.status == .conflict)
            #expect((clash.json["type"] as? String)?.hasSuffix("slot-taken") == true)
            #expect(try await Self.book(client, "mostafa", as: team, at("11:00", 60, hold: "room")).status == .created)
            let full = try await Self.book(client, "mostafa", as: grace, at("11:45", 15))
            #expect((full.json["type"] as? String)?.hasSuffix("room-full") == true)
            // While the whole room is held, no seat is free.
            app.clock.advance(by: .seconds(Self.at("11:00").timeIntervalSince(app.clock.now)))
            #expect(try await Self.spots(client, "mostafa") == 0)
        }
    }

    @Test(arguments: [
        ("10:10", 30, "start"), ("10:00", 20, "minutes"), ("10:00", 300, "minutes"), ("19:45", 30, "start"),
        ("09:00", 30, "start"),
    ])
    func aBookingOutsideTheRulesNamesTheField(time: String, minutes: Int, field: String) async throws {
        try await Self.run { app, client in
            let kier = try await app.signedIn("kier")
            let refused = try await Self.book(
                client, "mostafa", as: kier, #"{"start": "\#(Self.iso(Self.at(time)))", "minutes": \#(minutes)}"#)
            #expect(refused.status == .unprocessableContent)
            #expect((refused.json["errors"] as? [[String: String]])?.first?["field"] == field)
        }
    }

    @Test(arguments: TestDatabase.engines)
    func aSeriesBooksTheFreeDatesAndCancelsOneOrTheRest(engine: Database.Engine) async throws {
        try await Self.run(engine) { app, client in
            let (kier, grace) = (try await app.signedIn("kier"), try await app.signedIn("grace"))
            let weeks = (0...4).map { Self.day.adding(days: 7 * ($0 + 1)) }
            let taken = #"{"start": "\#(Self.iso(Self.at("10:00", on: weeks[2])))", "minutes": 60, "hold": "room"}"#
            #expect(try await Self.book(client, "mostafa", as: grace, taken).status == .created)
            let series = try await Self.book(
                client, "mostafa", as: kier,
                #"""
                {"start": "\#(Self.iso(Self.at("10:00", on: weeks[0])))", "minutes": 60,
                 "repeat": {"every": "week", "until": "\#(weeks[4])", "skip": ["\#(weeks[1])"]}}
                """#)
            #expect(series.status == .created)
            let outcomes = try #require((series.json["series"] as? [String: Any])?["outcomes"] as? [[String: Any]])
            #expect(
                outcomes.map { $0["date"] as? String } == [weeks[0], weeks[2], weeks[3], weeks[4]].map(\.description))
            #expect(outcomes.map { $0["result"] as? String } == ["booked", "taken", "booked", "booked"])

            func mine() async throws -> [[String: Any]] {
                try await client.execute(uri: "/api/me/bookings", method: .get, headers: kier) {
                    ($0.json["bookings"] as? [[String: Any]]) ?? []
                }
            }
            let booked = try await mine()
            #expect(
                booked.map { $0["start"] as? String } == [0, 3, 4].map { Self.iso(Self.at("10:00", on: weeks[$0])) })
            let ids = booked.compactMap { $0["id"] as? String }
            // Someone else may not cancel it; its owner cancels the fourth week and the rest.
            try await client.execute(
                uri: "/api/rooms/mostafa/bookings/\(ids[1])?following=true", method: .delete, headers: grace
            ) { #expect($0.status == .forbidden) }
            try await client.execute(
                uri: "/api/rooms/mostafa/bookings/\(ids[1])?following=true", method: .delete, headers: kier
            ) { #expect($0.status == .noContent) }
            #expect(try await mine().compactMap { $0["id"] as? String } == [ids[0]])
            try await client.execute(uri: "/api/rooms/mostafa/bookings/\(ids[0])", method: .delete, headers: kier) {
                #expect($0.status == .noContent)
            }
            #expect(try await mine().isEmpty)
        }
    }

    /// Someone's own bookings, which their apps poll, are kept for them and answered before the router (over a real
    /// connection); each change shows in the next poll: a booking, a check-in, the booking's end, a cancellation.
    /// Made a feed account, they are refused, as the router refuses them.
    @Test func myBookingsShowEachChangeInTheNextPoll() async throws {
        try await Self.run(checkIn: 10, live: true) { app, client in
            let kier = try await app.signedIn("kier")
            func mine() async throws -> (etag: String?, bookings: [[String: Any]]) {
                try await client.execute(uri: "/api/me/bookings", method: .get, headers: kier) { response in
                    #expect(response.status == .ok && response.headers[.cacheControl] == "private, no-cache")
                    return (response.headers[.eTag], (response.json["bookings"] as? [[String: Any]]) ?? [])
                }
            }
            func book(_ start: String) async throws -> String {
                let booked = try await Self.book(
                    client, "mostafa", as: kier, #"{"start": "\#(Self.iso(Self.at(start)))", "minutes": 60}"#)
                return try #require((booked.json["booking"] as? [String: Any])?["id"] as? String)
            }
            let none = try await mine()
            #expect(none.bookings.isEmpty)
            #expect(try await mine().etag == none.etag)

            let id = try await book("10:30")
            let booked = try await mine()
            #expect(booked.bookings.map { $0["id"] as? String } == [id])
            #expect(booked.etag != none.etag)
            #expect(try await mine().etag == booked.etag)

            // Check-in opens at 10:15; read (and kept) at 10:20, then checked in within the same quarter hour.
            app.clock.advance(by: .seconds(Self.at("10:20").timeIntervalSince(app.clock.now)))
            #expect(try await mine().bookings.first?["checkedIn"] as? Bool != true)
            try await client.execute(
                uri: "/api/rooms/mostafa/bookings/\(id)/check-in", method: .post, headers: kier
            ) { #expect($0.status == .ok) }
            #expect(try await mine().bookings.first?["checkedIn"] as? Bool == true, "checked in")

            // Over at 11:30: gone from the list by itself.
            app.clock.advance(by: .seconds(Self.at("11:30").timeIntervalSince(app.clock.now)))
            #expect(try await mine().bookings.isEmpty, "over")

            let later = try await book("13:00")
            #expect(try await mine().bookings.map { $0["id"] as? String } == [later])
            try await client.execute(uri: "/api/rooms/mostafa/bookings/\(later)", method: .delete, headers: kier) {
                #expect($0.status == .noContent)
            }
            #expect(try await mine().bookings.isEmpty, "cancelled")

            // Kier's (empty) list is kept; made a feed account, Kier may not read it, poll after poll.
            try await client.execute(
                uri: "/api/people/kier", method: .patch, headers: try await app.signedIn("an-admin", role: .admin),
                body: ByteBuffer(string: #"{"role": "feed"}"#)
            ) { #expect($0.status == .ok) }
            for _ in 1...2 {
                try await client.execute(uri: "/api/me/bookings", method: .get, headers: kier) {
                    #expect($0.status == .forbidden)
                }
            }
        }
    }

    @Test func checkingInOpensAQuarterHourBeforeAndIsTheOwnersAlone() async throws {
        try await Self.run(checkIn: 10) { app, client in
            let (kier, grace) = (try await app.signedIn("kier"), try await app.signedIn("grace"))
            let booked = try await Self.book(
                client, "mostafa", as: kier, #"{"start": "\#(Self.iso(Self.at("10:30")))", "minutes": 60}"#)
            let booking = try #require(booked.json["booking"] as? [String: Any])
            #expect(booking["checkInBy"] as? String == Self.iso(Self.at("10:40")))
            let id = try #require(booking["id"] as? String)
            let checkIn = "/api/rooms/mostafa/bookings/\(id)/check-in"
            try await client.execute(uri: checkIn, method: .post, headers: kier) { response in
                #expect(response.status == .conflict)
                #expect((response.json["type"] as? String)?.hasSuffix("too-early") == true)
            }
            app.clock.advance(by: .seconds(Self.at("10:20").timeIntervalSince(app.clock.now)))
            try await client.execute(uri: checkIn, method: .post, headers: grace) { #expect($0.status == .notFound) }
            try await client.execute(uri: checkIn, method: .post, headers: kier) { response in
                #expect(response.status == .ok)
                #expect(response.json["checkedIn"] as? Bool == true)
                #expect(response.json["checkInBy"] == nil)
            }
        }
    }

    /// The release runs inside the server (`RoomTimeKeeper`), on the server's clock: at the deadline the booking
    /// nobody checked in is gone and its seat announced; the one checked in stays.
    @Test(arguments: TestDatabase.engines)
    func aBookingNotCheckedInIsReleasedAtItsDeadlineAndAnnounced(engine: Database.Engine) async throws {
        // The keeper runs here alone (its sleep is the clock's only one), moved on by the test.
        try await Self.run(engine, checkIn: 10, services: false) { app, client in
            let (kier, ada) = (try await app.signedIn("kier"), try await app.signedIn("ada"))
            let ten = #"{"start": "\#(Self.iso(Self.at("10:00")))", "minutes": 60}"#
            let kiers = try #require(
                (try await Self.book(client, "mostafa", as: kier, ten).json["booking"] as? [String: Any])?["id"]
                    as? String)
            let adas = try #require(
                (try await Self.book(client, "mostafa", as: ada, ten).json["booking"] as? [String: Any])?["id"]
                    as? String)
            let rooms = app.features.rooms
            try await ServiceRunner(app.platform.events, RoomTimeKeeper(rooms: rooms)).run {
                let watcher = app.platform.events.subscribe(after: nil, types: [.room])
                try await eventually("LISTEN is up") { app.platform.events.isListening }
                try await eventually("the keeper waits for the next mark") { app.clock.sleeperCount > 0 }
                app.clock.advance(by: .seconds(Self.at("10:00").timeIntervalSince(app.clock.now)))
                try await client.execute(
                    uri: "/api/rooms/mostafa/bookings/\(adas)/check-in", method: .post, headers: ada
                ) { #expect($0.status == .ok) }
                // Nine minutes on, nothing is released yet.
                app.clock.advance(by: .seconds(9 * 60))
                try await eventually("the keeper looked at 10:05") { app.clock.sleeperCount > 0 }
                #expect(try await rooms.reservations.find(kiers, roomId: "mostafa") != nil)
                app.clock.advance(by: .seconds(60))
                let released = await first(watcher.events) { event in
                    guard let change = try? JSONDecoder().decode(Rooms.Change.self, from: Data(event.data.utf8))
                    else { return false }
                    return change.id == "mostafa" && change.spots == 3
                }
                #expect(released != nil, "the release is announced: Ada's seat is held, Kier's free again")
                #expect(try await rooms.reservations.find(kiers, roomId: "mostafa") == nil)
                #expect(try await rooms.reservations.find(adas, roomId: "mostafa") != nil)
                watcher.cancel()
            }
        }
    }

    @Test(arguments: TestDatabase.engines)
    func aRoomsDayShowsWhatIsFreeEachQuarterHourAndNobodysName(engine: Database.Engine) async throws {
        try await Self.run(engine) { app, client in
            let ada = try await app.signedIn("ada")
            _ = try await Self.book(
                client, "mostafa", as: ada, #"{"start": "\#(Self.iso(Self.at("10:00")))", "minutes": 30}"#)
            let day = try await client.execute(uri: "/api/rooms/mostafa/day?date=\(Self.day)", method: .get) {
                #expect($0.status == .ok)
                #expect(!$0.text.contains("Ada"))
                return $0.json
            }
            #expect(day["hours"] as? [String] == ["08:00-20:00"])
            let slots = try #require(day["slots"] as? [[String: Any]])
            #expect(slots.count == 48)
            let at = { (time: String) in slots.first { $0["start"] as? String == Self.iso(Self.at(time)) } }
            #expect(at("10:00")?["freeSeats"] as? Int == 3 && at("10:00")?["empty"] as? Bool == false)
            #expect(at("10:30")?["freeSeats"] as? Int == 4 && at("10:30")?["empty"] as? Bool == true)
            #expect(at("09:45")?["bookable"] as? Bool == true)  // now is 09:50
            #expect(at("09:30")?["bookable"] as? Bool == false)
            let saturday = Self.day.adding(days: 4)
            try await client.execute(uri: "/api/rooms/mostafa/day?date=\(saturday)", method: .get) {
                #expect($0.json["hours"] as? [String] == [])
                #expect($0.json["slots"] as? [[String: Any]] == nil || ($0.json["slots"] as? [Any])?.isEmpty == true)
            }
            try await client.execute(uri: "/api/rooms/mostafa/day?date=tuesday", method: .get) {
                #expect($0.status == .badRequest || $0.status == .unprocessableContent)
            }
            try await client.execute(uri: "/api/rooms/nowhere/day", method: .get) { #expect($0.status == .notFound) }
        }
    }

    @Test func findingARoomForSixGivesMostRoomFirstAndWhenTheOthersAreNextFree() async throws {
        try await Self.run { app, client in
            let team = try await app.signedIn("team")
            _ = try await Self.book(
                client, "ljerka", as: team,
                #"{"start": "\#(Self.iso(Self.at("10:00")))", "minutes": 60, "hold": "room"}"#)
            let start = Self.iso(Self.at("10:00")).replacingOccurrences(of: ":", with: "%3A")
            let found = try await client.execute(
                uri: "/api/free-rooms?start=\(start)&minutes=30&people=6", method: .get
            ) { response in
                #expect(response.status == .ok)
                return response.json
            }
            let fitting = try #require(found["fitting"] as? [[String: Any]])
            let others = try #require(found["others"] as? [[String: Any]])
            // Mostafa (4 seats, holds 12) and Alexis fit six only as whole rooms: after the rooms with seats.
            #expect(
                fitting.compactMap { $0["id"] as? String } == [
                    "helmold", "septima", "mina", "yana", "painter", "mostafa", "alexis",
                ])
            #expect(
                fitting.compactMap { $0["hold"] as? String } == [
                    "seat", "seat", "seat", "seat", "seat", "room", "room",
                ])
            #expect(others.compactMap { $0["id"] as? String } == ["ljerka"])
            #expect(others.first?["nextFree"] as? String == Self.iso(Self.at("11:00")))
            try await client.execute(uri: "/api/free-rooms?start=\(start)&minutes=20", method: .get) {
                #expect($0.status == .unprocessableContent)
            }
        }
    }

    @Test(arguments: TestDatabase.engines)
    func aGroupBooksAsManySeatsAsItHasPeopleAndNoMoreThanAreFree(engine: Database.Engine) async throws {
        try await Self.run(engine) { app, client in
            let (team, kier) = (try await app.signedIn("team"), try await app.signedIn("kier"))
            let ten = Self.iso(Self.at("10:00"))
            // Mostafa offers 4 seats: a group of three takes three of them.
            let group = try await Self.book(
                client, "mostafa", as: team, #"{"start": "\#(ten)", "minutes": 30, "seats": 3}"#)
            #expect(group.status == .created)
            #expect((group.json["booking"] as? [String: Any])?["seats"] as? Int == 3)
            let two = try await Self.book(
                client, "mostafa", as: kier, #"{"start": "\#(ten)", "minutes": 30, "seats": 2}"#)
            #expect(two.status == .conflict)
            // More than the room offers is a mistake in the asking, said as such.
            let five = try await Self.book(
                client, "mostafa", as: kier, #"{"start": "\#(ten)", "minutes": 30, "seats": 5}"#)
            #expect(five.status == .unprocessableContent)
            #expect(five.text.contains("4 seats"))
            let roomAndSeats = try await Self.book(
                client, "yana", as: kier, #"{"start": "\#(ten)", "minutes": 30, "hold": "room", "seats": 3}"#)
            #expect(roomAndSeats.status == .unprocessableContent)
            let none = try await Self.book(
                client, "yana", as: kier, #"{"start": "\#(ten)", "minutes": 30, "seats": 0}"#)
            #expect(none.status == .unprocessableContent || none.status == .badRequest)
            let one = try await Self.book(client, "mostafa", as: kier, #"{"start": "\#(ten)", "minutes": 30}"#)
            #expect(one.status == .created)
            #expect((one.json["booking"] as? [String: Any])?["seats"] as? Int == 1)
            let day = try await client.execute(uri: "/api/rooms/mostafa/day", method: .get) {
                ($0.json["slots"] as? [[String: Any]]) ?? []
            }
            let at = { (time: String) in day.first { $0["start"] as? String == Self.iso(Self.at(time)) } }
            #expect(at("10:00")?["freeSeats"] as? Int == 0 && at("10:30")?["freeSeats"] as? Int == 4)
            let mine = try await client.execute(uri: "/api/me/bookings", method: .get, headers: team) {
                ($0.json["bookings"] as? [[String: Any]]) ?? []
            }
            #expect(mine.compactMap { $0["seats"] as? Int } == [3])
            // The seats are held from 10:00: at 10:05 Mostafa has none free now.
            app.clock.advance(by: .seconds(Self.at("10:05").timeIntervalSince(app.clock.now)))
            #expect(try await Self.spots(client, "mostafa") == 0)
        }
    }

    @Test(arguments: TestDatabase.engines)
    func anAdminSetsABuildingsRulesAndARoomsOwnHours(engine: Database.Engine) async throws {
        try await Self.run(engine) { app, client in
            let kier = try await app.signedIn("kier")
            let buildings = try await client.execute(uri: "/api/buildings", method: .get) {
                ($0.json["buildings"] as? [[String: Any]]) ?? []
            }
            #expect(buildings.compactMap { $0["name"] as? String } == ["Engineering", "Library Wing", "North Hall"])
            #expect(buildings.first?["hours"] as? String == "Mon-Fri 07:00-21:00; Sat 09:00-17:00")  // the demo's
            let rules = ByteBuffer(
                string: #"{"hours": "Mon-Fri 07:00-22:00", "horizonDays": 14, "maxMinutes": 120, "checkInMinutes": 15}"#
            )
            try await client.execute(
                uri: "/api/buildings/library%20wing", method: .put, headers: kier, body: rules
            ) { #expect($0.status == .forbidden) }
            let bad = ByteBuffer(string: #"{"hours": "weekdays", "horizonDays": 0, "maxMinutes": 120}"#)
            try await client.execute(
                uri: "/api/buildings/library%20wing", method: .put, headers: RoomsAPITests.admin, body: bad
            ) { response in
                #expect(response.status == .unprocessableContent)
                let fields = (response.json["errors"] as? [[String: String]])?.compactMap { $0["field"] }
                #expect(fields == ["hours", "horizonDays"])
            }
            try await client.execute(
                uri: "/api/buildings/library%20wing", method: .put, headers: RoomsAPITests.admin, body: rules
            ) { response in
                #expect(response.status == .ok)
                #expect(response.json["name"] as? String == "Library Wing")
                #expect(response.json["rooms"] as? [String] == ["alexis", "mina", "painter"])
            }
            try await client.execute(
                uri: "/api/buildings/nowhere", method: .put, headers: RoomsAPITests.admin, body: rules
            ) { #expect($0.status == .notFound) }
            // Mina's building now asks for a check-in and a booking no longer than two hours.
            let long = try await Self.book(
                client, "mina", as: kier, #"{"start": "\#(Self.iso(Self.at("10:00")))", "minutes": 180}"#)
            #expect(long.status == .unprocessableContent)
            let booked = try await Self.book(
                client, "mina", as: kier, #"{"start": "\#(Self.iso(Self.at("10:00")))", "minutes": 60}"#)
            #expect((booked.json["booking"] as? [String: Any])?["checkInBy"] as? String == Self.iso(Self.at("10:15")))
            // Mina opens on Saturdays only: closed this Tuesday, so nothing in it is free now.
            let own = ByteBuffer(string: #"{"hours": "Sat 09:00-13:00"}"#)
            try await client.execute(uri: "/api/rooms/mina", method: .patch, headers: RoomsAPITests.admin, body: own) {
                #expect($0.status == .ok)
                #expect($0.json["spots"] as? Int == 0)
            }
            let badHours = ByteBuffer(string: #"{"hours": "Sat 9-13"}"#)
            try await client.execute(
                uri: "/api/rooms/mina", method: .patch, headers: RoomsAPITests.admin, body: badHours
            ) { #expect($0.status == .unprocessableContent) }
            let building = ByteBuffer(string: #"{"hours": ""}"#)
            try await client.execute(
                uri: "/api/rooms/mina", method: .patch, headers: RoomsAPITests.admin, body: building
            ) { #expect($0.json["spots"] as? Int == 39) }
        }
    }

    @Test func someoneWhoIsNoStudentHasAFeedOfTheirBookings() async throws {
        try await Self.run { app, client in
            let ada = try await app.signedIn("ada")
            _ = try await Self.book(
                client, "mostafa", as: ada, #"{"start": "\#(Self.iso(Self.at("10:00")))", "minutes": 30}"#)
            let link = try await client.execute(uri: "/api/me/calendar", method: .get, headers: ada) { $0.json }
            let url = try #require(link["url"] as? String)
            let path = Self.path(of: url)
            #expect(path.hasPrefix("/api/people/ada/calendar.ics?key="))
            let feed = try await client.execute(uri: path, method: .get) { $0 }
            #expect(feed.status == .ok && feed.headers[.contentType]?.hasPrefix("text/calendar") == true)
            #expect(feed.text.contains("SUMMARY:Mostafa") && feed.text.contains("TRIGGER:-PT15M"))
            #expect(try await client.execute(uri: path + "x", method: .get) { $0.status } == .notFound)
            // Asking again gives the same address; a new one retires it.
            #expect(
                try await client.execute(uri: "/api/me/calendar", method: .get, headers: ada) {
                    $0.json["url"] as? String
                } == url)
            _ = try await client.execute(uri: "/api/me/calendar", method: .post, headers: ada) { $0.status }
            #expect(try await client.execute(uri: path, method: .get) { $0.status } == .notFound)
            // Removed, the person's feed goes too.
            let renewed = try await client.execute(uri: "/api/me/calendar", method: .get, headers: ada) {
                $0.json["url"] as? String
            }
            let newPath = Self.path(of: try #require(renewed))
            #expect(try await client.execute(uri: newPath, method: .get) { $0.status } == .ok)
            try await client.execute(uri: "/api/people/ada", method: .delete, headers: RoomsAPITests.admin) {
                #expect($0.status == .noContent)
            }
            #expect(try await client.execute(uri: newPath, method: .get) { $0.status } == .notFound)
        }
    }
}
