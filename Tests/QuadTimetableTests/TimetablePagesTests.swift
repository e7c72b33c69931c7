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

@Suite struct TimetablePagesTests {
    static let csrf = "abcdefghijklmnopqrstuvwxyz0123456789ABCD"

    static func form(_ headers: HTTPFields, _ body: String, token: String? = csrf) -> (HTTPFields, ByteBuffer) {
        var headers = headers
        headers[.contentType] = "application/x-www-form-urlencoded"
        headers[.cookie] = [headers[.cookie], "quad_csrf=\(csrf)"].compactMap { $0 }.joined(separator: "; ")
        let field = token.map { "csrf=\($0)&" } ?? ""
        return (headers, ByteBuffer(string: field + body))
    }

    @Test(arguments: TestDatabase.engines)
    func kiersPageVisitorsAndAccountsWithoutAStudent(engine: Database.Engine) async throws {
        try await TestApp.run(engine) { app, client in
            let (kier, _, _) = try await TimetableAPITests.setUp(app)
            try await client.execute(uri: "/timetable", method: .get, headers: kier) { response in
                #expect(response.status == .ok)
                let html = response.text
                #expect(html.contains("Hey, Kier"))
                #expect(html.contains(">Week 8<"))
                #expect(html.contains("data-parking-id=\"clayton\""))
                #expect(html.contains("href=\"webcal://"))
                #expect(html.contains("class=\"class-card"))
                #expect(html.contains("/assets/timetable."))
            }
            // A visitor: a sign-in prompt for the personal timetable, and the public car parks and shuttles,
            // which the page keeps live from the public API.
            try await client.execute(uri: "/timetable", method: .get) { response in
                let html = response.text
                #expect(response.status == .ok)
                #expect(html.contains(#"href="/signin?next=/timetable">Sign in to see your timetable.</a>"#))
                #expect(!html.contains("Hey,"))
                #expect(html.contains(#"data-source="public""#))
                #expect(html.contains(#"data-parking-id="clayton""#))
                #expect(html.contains(#"data-parking-id="caulfield""#))
                #expect(html.contains("645 free places"))
                #expect(html.contains(#"class="stop" data-stop-id="clayton-"#))
                #expect(html.contains("Intercampus shuttle"))
                // Nothing personal.
                #expect(!html.contains("class-card"))
                #expect(!html.contains("timetable.ics"))
                #expect(!html.contains("305491"))
                #expect(!html.contains("FIT1031"))
            }
            try await client.execute(uri: "/timetable", method: .get, headers: try await app.signedIn("ada")) {
                #expect($0.text.contains("not linked to a student"))
                #expect($0.text.contains(#"data-parking-id="clayton""#))
                #expect(!$0.text.contains("class-card"))
            }
            // The navigation offers the timetable.
            try await client.execute(uri: "/", method: .get) { #expect($0.text.contains("href=\"/timetable\"")) }
        }
    }

    /// The week view: Kier's week with its four classes in place, a class added over his Monday lecture flagged as a
    /// clash on both, the weeks either side a link away, and the break week said as such.
    @Test(arguments: TestDatabase.engines)
    func theWeekViewPlacesClassesFlagsClashesAndNamesTheBreak(engine: Database.Engine) async throws {
        try await TestApp.run(engine) { app, client in
            let (kier, other, _) = try await TimetableAPITests.setUp(app)
            let store = TimetableStore(database: app.platform.database)
            let clash = try TimetableInput.timetableClass(
                id: nil, course: "FIT1032", name: "Tutorial 02", lecturer: "David", room: "S2", campus: "Clayton",
                weekday: "1", start: "11:00", end: "12:30", weeks: "1-12")
            try await store.saveClass(clash)
            try await store.enrol(student: "305491", classId: clash.id)
            let zone = TimeZone(identifier: "Australia/Melbourne")!
            let monday = CampusClock(timeZone: zone).date(of: app.clock.now).monday
            try await client.execute(uri: "/timetable/week", method: .get, headers: kier) { response in
                #expect(response.status == .ok)
                let html = response.text
                #expect(html.contains(#"<h1 id="week-title">Week 8</h1>"#))
                #expect(html.contains("href=\"/timetable/week?date=\(monday.adding(days: -7))\""))
                #expect(html.contains("href=\"/timetable/week?date=\(monday.adding(days: 7))\""))
                // The lecture 10:00–12:00 two hours below the grid's 08:00, beside the tutorial over its second hour.
                #expect(
                    html.contains(
                        #"data-class-id="fit1031-lecture-01" style="--from: 2.0; --length: 2.0; --lane: 0; --lanes: 2""#
                    ))
                #expect(
                    html.contains(
                        #"data-class-id="\#(clash.id)" style="--from: 3.0; --length: 1.5; --lane: 1; --lanes: 2""#))
                #expect(html.contains("Clashes with FIT1032 Tutorial 02"))
                #expect(html.contains("Clashes with FIT1031 Lecture 01"))
                #expect(html.contains("2 classes clash with another this week."))
                #expect(html.contains(#"<a href="/timetable">Day</a>"#))
            }
            // Two weeks back: the mid-semester break, each day named, no classes.
            try await client.execute(
                uri: "/timetable/week?date=\(monday.adding(days: -12))", method: .get, headers: kier
            ) { response in
                let html = response.text
                #expect(html.contains("Mid-semester break: teaching resumes on "))
                #expect(html.components(separatedBy: "Mid-semester break: no classes").count - 1 == 5)
                #expect(!html.contains("data-class-id="))
                #expect(html.contains("No classes this week."))
            }
            // Sam has no classes; a visitor is asked to sign in; a date that does not parse shows the current week.
            try await client.execute(uri: "/timetable/week?date=2020-02-31", method: .get, headers: other) {
                #expect($0.status == .ok)
                #expect($0.text.contains("No classes this week."))
                #expect($0.text.contains(#"<h1 id="week-title">Week 8</h1>"#))
            }
            try await client.execute(uri: "/timetable/week", method: .get) {
                #expect($0.text.contains(#"href="/signin?next=/timetable/week""#))
                #expect(!$0.text.contains("FIT1031"))
            }
        }
    }

    @Test(arguments: TestDatabase.engines)
    func adminFormsCheckTheTokenAndEveryField(engine: Database.Engine) async throws {
        try await TestApp.run(engine) { app, client in
            let (kier, _, _) = try await TimetableAPITests.setUp(app)
            // The admin in a browser: the session cookie signs the forms, so they must carry the CSRF token.
            let (session, _) = try await app.features.accounts.sessions.start(for: "admin", kind: .web)
            let admin: HTTPFields = [.cookie: "quad_session=\(session)"]
            try await client.execute(uri: "/admin/timetable", method: .get, headers: admin) { response in
                #expect(response.status == .ok)
                #expect(response.text.contains("Australia/Melbourne"))
                #expect(response.text.contains("FIT1031"))
            }
            try await client.execute(uri: "/timetable", method: .get, headers: admin) {
                #expect($0.text.contains("href=\"/admin/timetable\""))
            }
            try await client.execute(uri: "/timetable", method: .get, headers: kier) {
                #expect(!$0.text.contains("href=\"/admin/timetable\""))
            }
            try await client.execute(uri: "/admin/timetable", method: .get, headers: kier) {
                #expect($0.status == .forbidden)
            }
            let (noToken, noTokenBody) = Self.form(admin, "name=Peninsula&capacity=200", token: nil)
            try await client.execute(
                uri: "/admin/timetable/carparks", method: .post, headers: noToken, body: noTokenBody
            ) { #expect($0.status == .forbidden) }
            let (headers, bad) = Self.form(admin, "name=&capacity=lots")
            try await client.execute(uri: "/admin/timetable/carparks", method: .post, headers: headers, body: bad) {
                response in
                #expect(response.status == .unprocessableContent)
                #expect(response.text.contains("data-field=\"name\""))
                #expect(response.text.contains("data-field=\"capacity\""))
            }
            let (_, good) = Self.form(admin, "name=Peninsula&capacity=200")
            try await client.execute(uri: "/admin/timetable/carparks", method: .post, headers: headers, body: good) {
                #expect($0.status == .seeOther)
            }
            try await client.execute(uri: "/api/parkings", method: .get) { response in
                let ids = (response.json["parkings"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
                #expect(Set(ids) == ["clayton", "caulfield", "peninsula"])
            }
            // A class ending before it starts, and a campus in no time zone: 422, nothing written.
            let (_, backwards) = Self.form(
                admin,
                "course=FIT1031&name=Tutorial+02&lecturer=Arun&room=S4&campus=Clayton&weekday=2&start=14:00&end=13:00&weeks=1-12"
            )
            try await client.execute(uri: "/admin/timetable/classes", method: .post, headers: headers, body: backwards)
            {
                #expect($0.status == .unprocessableContent)
                #expect($0.text.contains("data-field=\"end\""))
            }
            let (_, zone) = Self.form(
                admin, "name=Clayton&timeZone=Mars/Olympus&semesterStart=2020-03-02&teachingWeeks=12&breaks=")
            try await client.execute(uri: "/admin/timetable/campus", method: .post, headers: headers, body: zone) {
                #expect($0.status == .unprocessableContent)
                #expect($0.text.contains("data-field=\"timeZone\""))
            }
            try await client.execute(uri: "/api/schedules", method: .get, headers: kier) { response in
                #expect(response.json["timeZone"] as? String == "Australia/Melbourne")
                #expect((response.json["schedules"] as? [Any])?.count == 4)
            }
            // A new class and Kier's enrolment in it reach his week.
            let (_, tutorial) = Self.form(
                admin,
                "course=FIT1031&name=Tutorial+02&lecturer=Arun&room=S4&campus=Clayton&weekday=5&start=09:00&end=10:00&weeks=1-12"
            )
            try await client.execute(uri: "/admin/timetable/classes", method: .post, headers: headers, body: tutorial) {
                #expect($0.status == .seeOther)
            }
            let (_, enrol) = Self.form(admin, "student=305491&class=fit1031-tutorial-02")
            try await client.execute(uri: "/admin/timetable/enrolments", method: .post, headers: headers, body: enrol) {
                #expect($0.status == .seeOther)
            }
            try await client.execute(uri: "/api/schedules", method: .get, headers: kier) { response in
                let classes = (response.json["schedules"] as? [[String: Any]] ?? []).compactMap {
                    $0["class"] as? String
                }
                #expect(classes.contains("Tutorial 02"))
            }
            // The admin page lists the enrolment by name, with a form to remove it.
            try await client.execute(uri: "/admin/timetable", method: .get, headers: admin) { response in
                #expect(response.text.contains("Kier (305491) → FIT1031 Tutorial 02"))
                #expect(
                    response.text.contains(
                        #"<input type="hidden" name="student" value="305491"><input type="hidden" name="class" value="fit1031-tutorial-02">"#
                    ))
            }
            // Removing it: not without the form's token; with it, the class leaves Kier's week and nothing else does.
            let (_, forged) = Self.form(admin, "student=305491&class=fit1031-tutorial-02", token: nil)
            try await client.execute(
                uri: "/admin/timetable/enrolments/delete", method: .post, headers: noToken, body: forged
            ) { #expect($0.status == .forbidden) }
            try await client.execute(
                uri: "/admin/timetable/enrolments/delete", method: .post, headers: headers, body: enrol
            ) { response in
                #expect(response.status == .seeOther)
                #expect(response.headers[.location] == "/admin/timetable?saved=1#enrolments")
            }
            try await client.execute(uri: "/api/schedules", method: .get, headers: kier) { response in
                let classes = (response.json["schedules"] as? [[String: Any]] ?? []).compactMap {
                    "\($0["course"] as? String ?? "") \($0["class"] as? String ?? "")"
                }
                #expect(
                    classes == ["FIT1031 Lecture 01", "FIT1031 Lab 01", "FIT1031 Workshop 01", "FIT1032 Lecture 01"])
            }
            try await client.execute(uri: "/admin/timetable", method: .get, headers: admin) {
                #expect(!$0.text.contains("→ FIT1031 Tutorial 02"))
                #expect($0.text.contains("Kier (305491) → FIT1031 Lecture 01"))
            }
        }
    }

    /// A form at fault comes back with what was typed in its fields and each message beside its field.
    @Test(arguments: TestDatabase.engines)
    func aFormAtFaultKeepsWhatWasTyped(engine: Database.Engine) async throws {
        try await TestApp.run(engine) { app, client in
            _ = try await TimetableAPITests.setUp(app)
            let admin: HTTPFields = [.authorization: "Bearer \(TestApp.adminToken)"]
            let (headers, backwards) = Self.form(
                admin,
                "course=FIT1031&name=Tutorial+07&lecturer=Dr+Okafor&room=S4&campus=Caulfield&weekday=2&start=14:00&end=13:00&weeks=2,4,6"
            )
            try await client.execute(uri: "/admin/timetable/classes", method: .post, headers: headers, body: backwards)
            { response in
                #expect(response.status == .unprocessableContent)
                let html = response.text
                #expect(html.contains(#"id="cl-name" name="name" value="Tutorial 07""#))
                #expect(html.contains(#"id="cl-lecturer" name="lecturer" value="Dr Okafor""#))
                #expect(html.contains(#"id="cl-weeks" name="weeks" value="2,4,6""#))
                #expect(html.contains(#"id="cl-start" name="start" value="14:00""#))
                #expect(html.contains(#"aria-invalid="true" aria-describedby="cl-end-error""#))
                #expect(html.contains(#"<p class="field-error" id="cl-end-error">"#))
                #expect(!html.contains(#"id="cl-name-error""#))
                // The other forms are not filled with it.
                #expect(!html.contains(#"id="cp-name" name="name" value="Tutorial 07""#))
            }
            let (_, zone) = Self.form(
                admin, "name=Clayton+East&timeZone=Mars%2FOlympus&semesterStart=2020-03-02&teachingWeeks=13&breaks=")
            try await client.execute(uri: "/admin/timetable/campus", method: .post, headers: headers, body: zone) {
                response in
                #expect(response.status == .unprocessableContent)
                #expect(response.text.contains(#"id="c-name" name="name" value="Clayton East""#))
                #expect(response.text.contains(#"id="c-weeks" name="teachingWeeks" value="13""#))
                #expect(response.text.contains(#"id="c-zone-error""#))
            }
            // An enrolment in a class that does not exist keeps the student chosen.
            let (_, enrol) = Self.form(admin, "student=400001&class=no-such-class")
            try await client.execute(uri: "/admin/timetable/enrolments", method: .post, headers: headers, body: enrol) {
                response in
                #expect(response.status == .unprocessableContent)
                #expect(response.text.contains(#"<option value="400001" selected>"#))
                #expect(!response.text.contains(#"<option value="305491" selected>"#))
                #expect(response.text.contains(#"id="en-class-error""#))
            }
            // A course that still has classes cannot go: the page says why, and the course stays.
            let (_, deleteCourse) = Self.form(admin, "code=FIT1031")
            try await client.execute(
                uri: "/admin/timetable/courses/delete", method: .post, headers: headers, body: deleteCourse
            ) { response in
                #expect(response.status == .unprocessableContent)
                #expect(response.text.contains(#"<li data-field="code">code: FIT1031 still has classes"#))
            }
            try await client.execute(uri: "/api/schedules?student=305491", method: .get, headers: admin) {
                #expect(($0.json["schedules"] as? [Any])?.count == 4)
            }
            // Nothing was written: the campus is as it was.
            try await client.execute(uri: "/admin/timetable", method: .get, headers: admin) {
                #expect($0.text.contains(#"id="c-name" name="name" value="Clayton""#))
                #expect(!$0.text.contains("Tutorial 07"))
            }
        }
    }

    /// A car park's name is text on the page, in the page as drawn and in its live part: one named to end an
    /// element or open a comment reads back as that name and changes nothing else.
    /// The stops a student uses, ticked on their page: their week's shuttles (the API's and the page's) list those
    /// stops' buses first. A stop the feed does not have, or someone who is no student, changes nothing.
    @Test(arguments: TestDatabase.engines)
    func aStudentsStopsComeFirst(engine: Database.Engine) async throws {
        try await TestApp.run(engine) { app, client in
            let (kier, _, _) = try await TimetableAPITests.setUp(app)
            func leavingFrom() async throws -> [String] {
                let week = try await client.execute(uri: "/api/schedules", method: .get, headers: kier)
                return try JSONDecoder().decode(ScheduleResponse.self, from: Data(buffer: week.body)).stops.map(
                    \.departure)
            }
            // The demo's Kier takes the bus from Clayton's bus loop.
            #expect(try await leavingFrom() == Array(repeating: "Clayton", count: 6))
            let (headers, body) = Self.form(kier, "stop%5B%5D=caulfield&stop%5B%5D=clayton-halls")
            let saved = try await client.execute(uri: "/timetable/stops", method: .post, headers: headers, body: body)
            #expect(saved.status == .seeOther && saved.headers[.location] == "/timetable?stops=saved#stops")
            let first = try await leavingFrom()
            #expect(first.count == 6 && first.allSatisfy { ["Caulfield", "Clayton – Halls"].contains($0) })
            try await client.execute(uri: "/timetable?stops=saved", method: .get, headers: kier) { response in
                let html = response.text
                #expect(html.contains(#"name="stop[]" value="caulfield" checked>"#))
                #expect(html.contains(#"name="stop[]" value="clayton-halls" checked>"#))
                #expect(html.contains(#"name="stop[]" value="clayton">"#))
                #expect(html.contains("Your stops are saved: their shuttles come first."))
            }

            let (_, unknown) = Self.form(kier, "stop%5B%5D=caulfield&stop%5B%5D=nowhere")
            let refused = try await client.execute(
                uri: "/timetable/stops", method: .post, headers: headers, body: unknown)
            #expect(refused.status == .unprocessableContent && refused.text.contains("There is no stop nowhere."))
            let (ada, none) = Self.form(try await app.signedIn("ada"), "stop%5B%5D=caulfield")
            #expect(
                try await client.execute(uri: "/timetable/stops", method: .post, headers: ada, body: none).status
                    == .notFound)
            #expect(try await leavingFrom() == first)
            // None ticked: none chosen, the buses in the order they come.
            let (_, nothing) = Self.form(kier, "")
            #expect(
                try await client.execute(uri: "/timetable/stops", method: .post, headers: headers, body: nothing).status
                    == .seeOther)
            #expect(try await leavingFrom() != first)
        }
    }

    @Test func aCarParksNameIsTextOnThePage() async throws {
        try await TestApp.run { app, client in
            let (kier, _, _) = try await TimetableAPITests.setUp(app)
            try await TimetableStore(database: app.platform.database).saveCarPark(
                id: "clayton", name: "<!--<script>&</script>", capacity: 800)
            for uri in ["/timetable", "/timetable?fragment=live"] {
                try await client.execute(uri: uri, method: .get, headers: kier) { response in
                    #expect(response.status == .ok)
                    #expect(
                        response.text.contains(
                            #"<span class="parking-name">&lt;!--&lt;script&gt;&amp;&lt;/script&gt;</span>"#))
                    #expect(!response.text.contains("<!--<script>"), "\(uri)")
                }
            }
        }
    }

    /// A car park's Edit link opens its form filled in; saving changes that car park (no new one) and tells open
    /// timetable pages through the same `parking` event the feed sends.
    @Test(arguments: TestDatabase.engines)
    func editingACarParkChangesItAndTellsOpenPages(engine: Database.Engine) async throws {
        try await TestApp.run(engine) { app, client in
            _ = try await TimetableAPITests.setUp(app)
            let admin: HTTPFields = [.authorization: "Bearer \(TestApp.adminToken)"]
            let subscription = app.platform.events.subscribe(after: nil, types: [.parking, .departure])
            defer { subscription.cancel() }
            try await client.execute(uri: "/admin/timetable", method: .get, headers: admin) { response in
                #expect(response.text.contains(#"href="/admin/timetable?edit=carparks&amp;id=clayton#carparks""#))
                #expect(response.text.contains(#"href="/admin/timetable?edit=courses&amp;id=FIT1031#courses""#))
            }
            try await client.execute(
                uri: "/admin/timetable?edit=carparks&id=clayton", method: .get, headers: admin
            ) { response in
                let html = response.text
                #expect(html.contains(#"<input type="hidden" name="id" value="clayton">"#))
                #expect(html.contains(#"id="cp-name" name="name" value="Clayton""#))
                #expect(html.contains(#"id="cp-capacity" name="capacity" value="800""#))
                #expect(html.contains("Save changes"))
            }
            try await client.execute(uri: "/admin/timetable?edit=courses&id=FIT1031", method: .get, headers: admin) {
                #expect($0.text.contains(#"id="co-code" name="code" value="FIT1031" required readonly"#))
            }
            // An edit at fault stays an edit of the same car park.
            let (headers, bad) = Self.form(admin, "id=clayton&name=Clayton+North&capacity=-5")
            try await client.execute(uri: "/admin/timetable/carparks", method: .post, headers: headers, body: bad) {
                response in
                #expect(response.status == .unprocessableContent)
                #expect(response.text.contains(#"<input type="hidden" name="id" value="clayton">"#))
                #expect(response.text.contains(#"id="cp-name" name="name" value="Clayton North""#))
                #expect(response.text.contains(#"id="cp-capacity-error""#))
            }
            let (_, good) = Self.form(admin, "id=clayton&name=Clayton+North&capacity=900")
            try await client.execute(uri: "/admin/timetable/carparks", method: .post, headers: headers, body: good) {
                #expect($0.status == .seeOther)
            }
            try await client.execute(uri: "/api/parkings", method: .get) { response in
                let parks = response.json["parkings"] as? [[String: Any]] ?? []
                #expect(Set(parks.compactMap { $0["id"] as? String }) == ["clayton", "caulfield"])
                let clayton = parks.first { $0["id"] as? String == "clayton" }
                #expect(clayton?["name"] as? String == "Clayton North")
                #expect(clayton?["capacity"] as? Int == 900)
            }
            // On PostgreSQL events travel by NOTIFY through a listener the router-only test app does not run.
            guard engine == .sqlite else { return }
            let event = await first(subscription.events) { $0.type == "parking" }
            let change = try JSONSerialization.jsonObject(with: Data((event?.data ?? "{}").utf8)) as? [String: Any]
            #expect(change?["id"] as? String == "clayton")
            #expect(change?["capacity"] as? Int == 900)
            #expect(change?["refresh"] as? Bool == true)

            // Deleting a car park says so the same way.
            let (_, delete) = Self.form(admin, "id=caulfield")
            try await client.execute(
                uri: "/admin/timetable/carparks/delete", method: .post, headers: headers, body: delete
            ) { #expect($0.status == .seeOther) }
            let deleted = await first(subscription.events) { $0.data.contains("caulfield") }
            #expect(deleted?.type == "parking")
            #expect(deleted?.data.contains(#""refresh":true"#) == true)
        }
    }

    /// Changing a route's times tells open pages with `departure` events.
    @Test func editingARouteTellsOpenPages() async throws {
        try await TestApp.run(.sqlite) { app, client in
            _ = try await TimetableAPITests.setUp(app)
            let admin: HTTPFields = [.authorization: "Bearer \(TestApp.adminToken)"]
            let subscription = app.platform.events.subscribe(after: nil, types: [.departure])
            defer { subscription.cancel() }
            // (The demo's shuttles come from its feed: a route typed in first.)
            let routeId = "clayton-peninsula"
            try await TimetableStore(database: app.platform.database).saveRoute(
                RouteRecord(id: routeId, from: "Clayton", to: "Peninsula", times: [LocalTime(hour: 12, minute: 0)]))
            let (headers, body) = Self.form(admin, "id=\(routeId)&from=Clayton&to=Peninsula&times=00:05,23:55")
            try await client.execute(uri: "/admin/timetable/routes", method: .post, headers: headers, body: body) {
                #expect($0.status == .seeOther)
            }
            let event = await first(subscription.events)
            #expect(event?.type == "departure")
            #expect(event?.data.contains(routeId) == true)
            #expect(event?.data.contains(#""refresh":true"#) == true)
        }
    }

    /// Saving a class again (a new room) keeps who is enrolled in it; saving twice at once adds nothing twice.
    @Test(arguments: TestDatabase.engines) func savingAClassKeepsItsStudents(engine: Database.Engine) async throws {
        try await TestApp.run(engine) { app, _ in
            let store = TimetableStore(database: app.platform.database)
            try await store.saveCourse(code: "FIT1031", title: "Computers and networks")
            var lecture = TimetableClass(
                id: "fit1031-lecture-01", course: "FIT1031", courseTitle: "Computers and networks",
                name: "Lecture 01", lecturer: "Arun", room: "S4", campus: "Clayton", weekday: 1,
                start: LocalTime("10:00")!, end: LocalTime("12:00")!, weeks: Array(1...12))
            try await store.saveClass(lecture)
            try await store.saveStudent(id: "305491", name: "Kier")
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<4 {
                    group.addTask { try await store.enrol(student: "305491", classId: "fit1031-lecture-01") }
                }
                try await group.waitForAll()
            }
            lecture.room = "S5"
            try await store.saveClass(lecture)
            #expect(try await store.classes(student: "305491").map(\.room) == ["S5"])
            #expect(try await store.enrolments().count == 1)
        }
    }

    /// What the page says at a given moment: after the last class, and in the break.
    @Test func afterTheLastClassAndInTheBreakThePageSaysSo() {
        let zone = TimeZone(identifier: "Australia/Melbourne")!
        let settings = CampusSettings(
            name: "Clayton", timeZone: zone, semesterStart: LocalDate("2020-03-02")!, teachingWeeks: 12,
            breaks: [
                TeachingBreak(
                    name: "Mid-semester break", start: LocalDate("2020-04-13")!, end: LocalDate("2020-04-19")!),
                TeachingBreak(name: "Good Friday", start: LocalDate("2020-04-10")!, end: LocalDate("2020-04-10")!),
            ])
        let lecture = TimetableClass(
            id: "fit1031-lecture-01", course: "FIT1031", courseTitle: "Computers and networks", name: "Lecture 01",
            lecturer: "Arun", room: "S4", campus: "13 College Walk, Clayton", weekday: 5, start: LocalTime("10:00")!,
            end: LocalTime("12:00")!, weeks: Array(1...12))
        func words(at wallClock: String, language: Language = .english) -> TimetablePage.Day {
            let now = settings.clock.parseWallClock(wallClock)!
            let today = settings.clock.date(of: now)
            let student = StudentRecord(id: "305491", name: "Kier", calendarKey: "k")
            let view = TimetableRoutes.StudentView(
                student: student,
                payload: ScheduleResponse(
                    settings: settings, date: today, now: now, student: .init(id: "305491", name: "Kier"),
                    classes: [lecture], carParks: [], departures: []),
                plan: settings.plan(now: now, classes: [lecture]), settings: settings, today: today, now: now,
                link: .init(url: "", webcal: ""), stopChoices: [])
            return TimetableRoutes.day(view, t: Localizer(language: language), language: language)
        }
        let during = words(at: "2020-03-13T11:00:00")
        #expect(during.weekText == "Week 2")
        #expect(during.heading == "Today's classes")
        #expect(during.cards.first?.inProgress == true)

        // An open page fetches itself again when today's last class ends, then at the campus midnight.
        #expect(during.changesAt == Self.milliseconds("2020-03-13T01:00:00Z"))  // 12:00 AEDT
        let after = words(at: "2020-03-13T12:30:00")
        #expect(after.changesAt == Self.milliseconds("2020-03-13T13:00:00Z"))  // midnight AEDT
        #expect(after.heading == "Next classes: Friday 20 March 2020")
        #expect(after.note == "No more classes today: here is the next teaching day.")

        let inBreak = words(at: "2020-04-15T09:00:00")
        #expect(inBreak.weekText == "Mid-semester break: teaching resumes on Monday 20 April 2020.")
        #expect(inBreak.heading == "Next classes: Friday 24 April 2020")
        #expect(inBreak.note == inBreak.weekText)

        // Good Friday, a day off inside teaching week 6: the week keeps its number, the day is named, and the
        // next classes are after the break (the Friday lecture has no meeting on Good Friday).
        let goodFriday = words(at: "2020-04-10T09:00:00")
        #expect(goodFriday.weekText == "Week 6")
        #expect(goodFriday.heading == "Next classes: Friday 24 April 2020")
        #expect(goodFriday.note == "Good Friday: no classes today.")
        #expect(goodFriday.cards.count == 1)
        #expect(goodFriday.cards.first?.inProgress == false)
        // The day before, after class: the next class skips Good Friday and the break.
        let thursday = words(at: "2020-04-09T19:00:00")
        #expect(thursday.heading == "Next classes: Friday 24 April 2020")
        #expect(thursday.note == "No classes today: here is the next teaching day.")

        let french = words(at: "2020-04-15T09:00:00", language: .french)
        #expect(french.weekText == "Mid-semester break : les cours reprennent le lundi 20 avril 2020.")
    }

    /// An instant as page scripts count it (ms since 1970).
    static func milliseconds(_ iso: String) -> Int? {
        try? Int(Date(iso, strategy: .iso8601).timeIntervalSince1970 * 1000)
    }
}
