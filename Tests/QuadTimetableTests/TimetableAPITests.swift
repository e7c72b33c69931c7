import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import QuadCore
import QuadTestSupport
import Testing

@testable import QuadAccounts
@testable import QuadPlatform
@testable import QuadServer
@testable import QuadTimetable

@Suite struct TimetableAPITests {
    /// Loads the demo timetable and signs in `kier` (student 305491), a second student and a feed.
    static func setUp(_ app: TestApp) async throws -> (kier: HTTPFields, other: HTTPFields, feed: HTTPFields) {
        try await TimetableDemo.load(TimetableStore(database: app.platform.database), now: app.clock.now)
        let accounts = app.features.accounts
        _ = try await accounts.people.create(
            Person(username: "kier", displayName: "Kier", role: .member, studentId: "305491"), password: "password-kier"
        )
        _ = try await accounts.people.create(
            Person(username: "sam", displayName: "Sam", role: .member, studentId: "400001"), password: "password-sam")
        try await TimetableStore(database: app.platform.database).saveStudent(id: "400001", name: "Sam")
        return (
            try await app.signedIn("kier"), try await app.signedIn("sam"),
            try await app.signedIn("feed", role: .feed)
        )
    }

    @Test(arguments: TestDatabase.engines)
    func theOriginalAppDecodesKiersWeek(engine: Database.Engine) async throws {
        try await TestApp.run(engine) { app, client in
            let (kier, _, _) = try await Self.setUp(app)
            try await client.execute(uri: "/api/schedules", method: .get, headers: kier) { response in
                #expect(response.status == .ok)
                let original = try JSONDecoder().decode(OriginalTimetable.self, from: Data(buffer: response.body))
                #expect(original.week == 8)
                #expect(original.student.id == "305491")
                #expect(original.student.name == "Kier")
                #expect(
                    original.schedules.map { "\($0.course) \($0.scheduleClass)" } == [
                        "FIT1031 Lecture 01", "FIT1031 Lab 01", "FIT1031 Workshop 01", "FIT1032 Lecture 01",
                    ])
                #expect(original.schedules[0].startTime.hasSuffix("T10:00:00"))
                #expect(original.schedules[0].campus == "13 College Walk, Clayton")
                #expect(Set(original.parkings.map(\.name)) == ["Clayton", "Caulfield"])
                #expect(original.parkings.first { $0.name == "Clayton" }?.slot == 645)
                #expect(!original.stops.isEmpty)
                let json = response.json
                let parkings = json["parkings"] as? [[String: Any]] ?? []
                #expect(parkings.allSatisfy { $0["live"] as? Bool == true && $0["capacity"] != nil })
            }
            // In the break two weeks ago: week 0, teaching resumes the Monday after.
            let zone = TimeZone(identifier: "Australia/Melbourne")!
            let breakDay = CampusClock(timeZone: zone).date(of: app.clock.now).monday.adding(days: -12)
            try await client.execute(uri: "/api/schedules?date=\(breakDay)", method: .get, headers: kier) { response in
                #expect(response.json["week"] as? Int == 0)
                #expect(response.json["weekStatus"] as? String == "break")
                #expect((response.json["schedules"] as? [Any])?.isEmpty == true)
                #expect(response.json["resumesOn"] as? String == breakDay.monday.adding(days: 7).description)
            }
            try await client.execute(uri: "/api/schedules?date=2020-13-01", method: .get, headers: kier) { response in
                #expect(response.status == .badRequest)
            }
        }
    }

    @Test(arguments: TestDatabase.engines)
    func privacyRules(engine: Database.Engine) async throws {
        try await TestApp.run(engine) { app, client in
            let (kier, sam, _) = try await Self.setUp(app)
            try await client.execute(uri: "/api/schedules", method: .get) { #expect($0.status == .unauthorized) }
            try await client.execute(uri: "/api/schedules?student=305491", method: .get, headers: sam) {
                #expect($0.status == .forbidden)
            }
            try await client.execute(uri: "/api/schedules", method: .get, headers: sam) { response in
                #expect(response.json["student"] as? [String: String] == ["id": "400001", "name": "Sam"])
                #expect((response.json["schedules"] as? [Any])?.isEmpty == true)
            }
            let admin: HTTPFields = [.authorization: "Bearer \(TestApp.adminToken)"]
            try await client.execute(uri: "/api/schedules?student=305491", method: .get, headers: admin) { response in
                #expect(response.status == .ok)
                #expect((response.json["student"] as? [String: String])?["name"] == "Kier")
            }
            // An account not linked to a student.
            let ada = try await app.signedIn("ada")
            try await client.execute(uri: "/api/schedules", method: .get, headers: ada) {
                #expect($0.status == .notFound)
            }
            // Car parks and departures are public.
            try await client.execute(uri: "/api/parkings", method: .get) { response in
                #expect(response.status == .ok)
                #expect((response.json["parkings"] as? [Any])?.count == 2)
            }
            try await client.execute(uri: "/api/departures", method: .get) { response in
                #expect(response.status == .ok)
                let departures = response.json["departures"] as? [[String: Any]] ?? []
                #expect(!departures.isEmpty)
                #expect(departures.allSatisfy { $0["id"] is String && $0["live"] as? Bool == false })
            }
            _ = kier
        }
    }

    @Test(arguments: TestDatabase.engines)
    func feedsUpdateCarParksAndPredictions(engine: Database.Engine) async throws {
        try await TestApp.run(engine) { app, client in
            let (kier, _, feed) = try await Self.setUp(app)
            let subscription = app.platform.events.subscribe(after: nil, types: [.parking, .departure])
            defer { subscription.cancel() }
            try await client.execute(
                uri: "/api/parkings/caulfield", method: .put, headers: feed, body: ByteBuffer(string: #"{"free": 0}"#)
            ) { response in
                #expect(response.status == .ok)
                #expect(response.json["state"] as? String == "full")
            }
            for (free, field) in [("301", "free"), ("-1", "free")] {
                try await client.execute(
                    uri: "/api/parkings/caulfield", method: .put, headers: feed,
                    body: ByteBuffer(string: #"{"free": \#(free)}"#)
                ) { response in
                    #expect(response.status == .unprocessableContent)
                    #expect((response.json["errors"] as? [[String: String]])?.first?["field"] == field)
                }
            }
            try await client.execute(
                uri: "/api/parkings/caulfield", method: .put, headers: kier, body: ByteBuffer(string: #"{"free": 5}"#)
            ) { #expect($0.status == .forbidden) }
            try await client.execute(
                uri: "/api/parkings/caulfield", method: .put, headers: [.contentType: "application/json"],
                body: ByteBuffer(string: #"{"free": 5}"#)
            ) { #expect($0.status == .unauthorized) }
            try await client.execute(
                uri: "/api/parkings/nowhere", method: .put, headers: feed, body: ByteBuffer(string: #"{"free": 5}"#)
            ) { #expect($0.status == .notFound) }
            try await client.execute(uri: "/api/parkings", method: .get) { response in
                let parks = response.json["parkings"] as? [[String: Any]] ?? []
                #expect(parks.first { $0["id"] as? String == "caulfield" }?["slot"] as? Int == 0)
            }

            // A prediction for the next departure makes it live, at the predicted time.
            let next = try await TimetableAPI(timetable: app.features.timetable).departureList().departures[
                0]
            let scheduled = Timestamp.date(next.expectedAt)!
            let predicted = scheduled.addingTimeInterval(120).formatted(.iso8601)
            try await client.execute(
                uri: "/api/departures/\(next.id)", method: .put, headers: feed,
                body: ByteBuffer(string: #"{"predicted": "\#(predicted)"}"#)
            ) { response in
                #expect(response.status == .ok)
                #expect(response.json["live"] as? Bool == true)
                #expect(response.json["expectedAt"] as? String == predicted)
            }
            try await client.execute(uri: "/api/departures", method: .get) { response in
                let departures = response.json["departures"] as? [[String: Any]] ?? []
                let updated = departures.first { $0["id"] as? String == next.id }
                #expect(updated?["live"] as? Bool == true)
            }
            let far = scheduled.addingTimeInterval(86400).formatted(.iso8601)
            try await client.execute(
                uri: "/api/departures/\(next.id)", method: .put, headers: feed,
                body: ByteBuffer(string: #"{"predicted": "\#(far)"}"#)
            ) { #expect($0.status == .unprocessableContent) }
            try await client.execute(
                uri: "/api/departures/clayton-caulfield-20200313-0603", method: .put, headers: feed,
                body: ByteBuffer(string: #"{"predicted": "\#(predicted)"}"#)
            ) { #expect($0.status == .notFound) }

            // The hub delivered a `parking` and a `departure` event. (On PostgreSQL events travel by NOTIFY
            // through the hub's listener, a service the router-only test app does not run.)
            guard engine == .sqlite else { return }
            let events = await collect(subscription.events) { Set($0.map(\.type)).count == 2 }
            #expect(Set(events.map(\.type)) == ["parking", "departure"])
            // The departure event carries the predicted time on the campus clock, for the page to show.
            let change = events.first { $0.type == "departure" }.flatMap {
                try? JSONSerialization.jsonObject(with: Data($0.data.utf8)) as? [String: Any]
            }
            let settings = try await app.features.timetable.settings()
            #expect(change?["expectedAt"] as? String == predicted)
            #expect(
                change?["predicted_arrival_date"] as? String
                    == settings.clock.wallClock(scheduled.addingTimeInterval(120)))
        }
    }

    /// Kier's week is kept between changes: the same answer, and a 304, until a reading is stored or the clock
    /// makes it say something else.
    @Test(arguments: TestDatabase.engines)
    func kiersWeekIsKeptUntilItChanges(engine: Database.Engine) async throws {
        // At the top of a minute: the departures' words change on the minute, and the second the test moves on
        // must not cross one (it did, run at 21:14:59).
        let topOfMinute = Date(timeIntervalSince1970: (TestTime.start.timeIntervalSince1970 / 60).rounded(.down) * 60)
        try await TestApp.run(engine, at: topOfMinute) { app, client in
            let (kier, _, feed) = try await Self.setUp(app)
            func week() async throws -> (etag: String?, json: [String: Any]) {
                try await client.execute(uri: "/api/schedules", method: .get, headers: kier) { response in
                    #expect(response.status == .ok)
                    return (response.headers[.eTag], response.json)
                }
            }
            func caulfield(_ json: [String: Any]) -> [String: Any]? {
                (json["parkings"] as? [[String: Any]])?.first { $0["id"] as? String == "caulfield" }
            }
            let first = try await week()
            if engine == .sqlite {
                // (The router-only test app's hub does not listen on PostgreSQL, so it keeps nothing there; the
                // two-instance test below covers PostgreSQL.)
                app.clock.advance(by: .seconds(1))
                let again = try await week()
                #expect(again.etag == first.etag, "nothing changed: the same answer")
                #expect(again.json["generatedAt"] as? String == first.json["generatedAt"] as? String)
                var conditional = kier
                conditional[.ifNoneMatch] = try #require(first.etag)
                try await client.execute(uri: "/api/schedules", method: .get, headers: conditional) {
                    #expect($0.status == .notModified)
                }
            }

            try await client.execute(
                uri: "/api/parkings/caulfield", method: .put, headers: feed, body: ByteBuffer(string: #"{"free": 3}"#)
            ) { #expect($0.status == .ok) }
            let read = try await week()
            #expect(caulfield(read.json)?["slot"] as? Int == 3, "a reading shows at once")
            #expect(read.etag != first.etag)
            #expect(caulfield(read.json)?["live"] as? Bool == true)

            app.clock.advance(by: .seconds(Int(Freshness.readingLimit) + 1))
            #expect(caulfield(try await week().json)?["live"] as? Bool == false, "ten minutes on, it is not live")
        }
    }

    /// Two instances on one PostgreSQL database: a reading stored on one drops the week the other kept.
    // (A guard against a hang, not a speed test: on 2 busy cores the whole suite's minute passes while it waits.)
    @Test(.enabled(if: TestDatabase.postgresURL != nil), .timeLimit(.minutes(5)))
    func aChangeOnOneInstanceReachesTheWeekTheOtherKept() async throws {
        // Only the timetable's demo: the accounts' demo people would cost bcrypt hashes, slow on a busy machine.
        try await TwoInstances.run { firstQuad, secondQuad in
            let first = firstQuad.timetable
            let second = secondQuad.timetable
            try await TimetableDemo.load(first.store, now: first.now)
            func slot(_ answer: EncodedAnswer?) throws -> Int? {
                let json = try JSONSerialization.jsonObject(with: Data(buffer: try #require(answer).body))
                let parks = (json as? [String: Any])?["parkings"] as? [[String: Any]]
                return parks?.first { $0["id"] as? String == "caulfield" }?["slot"] as? Int
            }
            _ = try await second.weeks.answer("305491")
            #expect(second.weeks.cached("305491") != nil, "the other instance keeps Kier's week")
            _ = try await first.recordReading("caulfield", free: 7)
            try await eventually("the reading reaches the other instance", timeout: .seconds(2)) {
                second.weeks.cached("305491") == nil
            }
            #expect(try slot(try await second.weeks.answer("305491")) == 7)
        }
    }

    @Test(arguments: TestDatabase.engines)
    func staleReadingsAndPredictionsWithAControlledClock(engine: Database.Engine) async throws {
        try await TestDatabase.withDatabase(engine, Self.staleReadings)
    }

    /// The demo timetable on `database`, on a clock of its own at the tests' instant (to the second: readings and
    /// predictions are stored to the second).
    static func demoTimetable(_ database: Database) async throws -> (Timetable, ManualClock, Date) {
        let start = Date(timeIntervalSince1970: TestTime.start.timeIntervalSince1970.rounded(.down))
        let clock = ManualClock(now: start)
        let timetable = try await Features.start(
            TestApp.configuration(clock: clock), database: database, logger: TestDatabase.logger
        ) { _ in }.timetable
        try await TimetableDemo.load(timetable.store, now: start)
        return (timetable, clock, start)
    }

    /// (Its own function: the compiler's region checker crashes on it as a closure.)
    static func staleReadings(_ database: Database) async throws {
        let (timetable, clock, start) = try await demoTimetable(database)
        _ = try await timetable.recordReading("clayton", free: 500)
        let api = TimetableAPI(timetable: timetable)
        // A departure well after the clock's moves, so it is still to come when they are done.
        let next = try await api.departureList().departures.first {
            Timestamp.date($0.expectedAt)! > start.addingTimeInterval(900)
        }!
        _ = try await timetable.recordPrediction(
            next.id, predicted: Timestamp.date(next.expectedAt)!.addingTimeInterval(60))
        clock.advance(by: .seconds(90))
        #expect(try await api.departureList().departures.first { $0.id == next.id }?.live == true)
        #expect(try await api.parkingList().parkings.allSatisfy(\.live))
        clock.advance(by: .seconds(1))
        let fallen = try await api.departureList().departures.first { $0.id == next.id }
        #expect(fallen?.live == false)
        #expect(fallen?.predictedArrivalDate == fallen?.scheduledDate)
        clock.advance(by: .seconds(510))
        #expect(try await api.parkingList().parkings.allSatisfy { !$0.live })
    }

    /// The car parks and departures are kept as sent (`Timetable.parkings`, `Timetable.departures`), and always read as built afresh: a
    /// reading shows at once, and a reading or a prediction growing too old, or a bus leaving, shows by itself.
    @Test func keptListsReadAsBuiltAfresh() async throws {
        try await TestDatabase.withDatabase(.sqlite, Self.keptLists)
    }

    /// (Its own function, as `staleReadings`.)
    static func keptLists(_ database: Database) async throws {
        let (timetable, clock, _) = try await demoTimetable(database)
        let api = TimetableAPI(timetable: timetable)
        enum List { case parkings, departures }
        func kept(_ list: List) async throws -> String {
            let answer = list == .parkings ? timetable.parkings : timetable.departures
            return String(buffer: try #require(try await answer.answer(baseURL: "http://quad.test", person: nil)).body)
        }
        func fresh(_ list: List) async throws -> String {
            switch list {
            case .parkings: String(buffer: try EncodedAnswer.json(try await api.parkingList()).body)
            case .departures: String(buffer: try EncodedAnswer.json(try await api.departureList()).body)
            }
        }
        func check(_ moment: String) async throws {
            for list in [List.parkings, .departures] {
                #expect(try await kept(list) == fresh(list), "\(list) \(moment)")
            }
        }
        try await check("at first")
        #expect(
            timetable.parkings.cached(baseURL: "http://quad.test", person: nil) != nil
                && timetable.departures.cached(baseURL: "http://quad.test", person: nil) != nil)
        _ = try await timetable.recordReading("clayton", free: 17)
        try await check("after a reading")
        #expect(try await kept(.parkings).contains(#""slot":17"#))
        let next = try #require(try await api.departureList().departures.first)
        _ = try await timetable.recordPrediction(
            next.id, predicted: try #require(Timestamp.date(next.expectedAt)).addingTimeInterval(60))
        try await check("after a prediction")
        // The reading and the prediction grow old; the first bus leaves.
        for seconds in [91, 510, 600, 3600] {
            clock.advance(by: .seconds(seconds))
            try await check("\(seconds) s on")
        }
    }

    @Test func theSimulatorMovesOnlyTheDemoCampus() async throws {
        try await TestDatabase.withDatabase(.sqlite) { database in
            // Midday in Melbourne, when shuttles run.
            let zone = TestTime.melbourne
            let noon = TestTime.next(LocalTime(hour: 12, minute: 0))
            let timetable = try await Features.start(
                TestApp.configuration(clock: ManualClock(now: noon)), database: database, logger: TestDatabase.logger
            ) { _ in }.timetable
            try await TimetableDemo.load(timetable.store, now: noon)
            let simulator = TimetableSimulator(timetable: timetable)
            let api = TimetableAPI(timetable: timetable)
            var generator = SystemRandomNumberGenerator()

            try await timetable.store.setSimulated(false)
            try await simulator.step(using: &generator)
            #expect(try await api.departureList().departures.allSatisfy { !$0.live })

            try await timetable.store.setSimulated(true)
            try await simulator.step(using: &generator)
            let departures = try await api.departureList().departures
            #expect(departures.contains { $0.live })
            // Predictions stay near the schedule and in the future.
            for departure in departures where departure.live {
                let expected = Timestamp.date(departure.expectedAt)!
                let scheduled = CampusClock(timeZone: zone).parseWallClock(departure.scheduledDate)!
                #expect(expected > noon)
                #expect(abs(expected.timeIntervalSince(scheduled)) <= 600)
            }
        }
    }

    @Test(arguments: TestDatabase.engines)
    func theCalendarSubscriptionNeedsItsKeyAndCanBeReplaced(engine: Database.Engine) async throws {
        try await TestApp.run(engine) { app, client in
            let (kier, _, _) = try await Self.setUp(app)
            try await client.execute(uri: "/api/me/calendar", method: .get) { #expect($0.status == .unauthorized) }
            let url = try await client.execute(uri: "/api/me/calendar", method: .get, headers: kier) { response in
                #expect(response.status == .ok)
                #expect((response.json["webcal"] as? String)?.hasPrefix("webcal://") == true)
                return response.json["url"] as? String ?? ""
            }
            let path = String(url[url.range(of: "/api/")!.lowerBound...])
            try await client.execute(uri: path, method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType]?.hasPrefix("text/calendar") == true)
                #expect(response.text.contains("SUMMARY:FIT1031 Lecture 01"))
                #expect(response.text.components(separatedBy: "BEGIN:VEVENT").count == 5)
                #expect(response.text.contains("EXDATE;TZID=Australia/Melbourne:"))
            }
            try await client.execute(uri: "/api/students/305491/timetable.ics?key=wrong", method: .get) {
                #expect($0.status == .notFound)
            }
            // Without a key the request does not match the contract (the key is required): 400, no calendar.
            try await client.execute(uri: "/api/students/305491/timetable.ics", method: .get) {
                #expect($0.status == .badRequest && !$0.text.contains("BEGIN:VCALENDAR"))
            }
            // Replacing the key: the old address stops working, the new one works.
            let newURL = try await client.execute(uri: "/api/me/calendar", method: .post, headers: kier) {
                $0.json["url"] as? String ?? ""
            }
            #expect(newURL != url)
            try await client.execute(uri: path, method: .get) { #expect($0.status == .notFound) }
            let newPath = String(newURL[newURL.range(of: "/api/")!.lowerBound...])
            try await client.execute(uri: newPath, method: .get) { #expect($0.status == .ok) }
        }
    }
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
