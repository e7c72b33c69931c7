import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import QuadCore
import Testing

@testable import QuadServer

@Suite struct TimetablePagesTests {
    static let csrf = "abcdefghijklmnopqrstuvwxyz0123456789ABCD"

    static func form(_ headers: HTTPFields, _ body: String, token: String? = csrf) -> (HTTPFields, ByteBuffer) {
        var headers = headers
        headers[.contentType] = "application/x-www-form-urlencoded"
        headers[.cookie] = "quad_csrf=\(csrf)"
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
            try await client.execute(uri: "/timetable", method: .get) { response in
                #expect(response.text.contains("Sign in to see your timetable."))
                #expect(!response.text.contains("Hey,"))
            }
            try await client.execute(uri: "/timetable", method: .get, headers: try await app.signedIn("ada")) {
                #expect($0.text.contains("not linked to a student"))
            }
            // The navigation offers the timetable.
            try await client.execute(uri: "/", method: .get) { #expect($0.text.contains("href=\"/timetable\"")) }
        }
    }

    @Test(arguments: TestDatabase.engines)
    func adminFormsCheckTheTokenAndEveryField(engine: Database.Engine) async throws {
        try await TestApp.run(engine) { app, client in
            let (kier, _, _) = try await TimetableAPITests.setUp(app)
            let admin: HTTPFields = [.authorization: "Bearer \(TestApp.adminToken)"]
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
        }
    }

    /// What the page says at a given moment: after the last class, and in the break.
    @Test func afterTheLastClassAndInTheBreakThePageSaysSo() {
        let zone = TimeZone(identifier: "Australia/Melbourne")!
        let settings = CampusSettings(
            name: "Clayton", timeZone: zone, semesterStart: LocalDate("2020-03-02")!, teachingWeeks: 12,
            breaks: [
                TeachingBreak(
                    name: "Mid-semester break", start: LocalDate("2020-04-13")!, end: LocalDate("2020-04-19")!)
            ])
        let lecture = TimetableClass(
            id: "fit1031-lecture-01", course: "FIT1031", courseTitle: "Computers and networks", name: "Lecture 01",
            lecturer: "Arun", room: "S4", campus: "13 College Walk, Clayton", weekday: 5, start: LocalTime("10:00")!,
            end: LocalTime("12:00")!, weeks: Array(1...12))
        func words(at wallClock: String, language: Language = .english) -> [String: Any] {
            let now = settings.clock.parseWallClock(wallClock)!
            let today = settings.clock.date(of: now)
            let student = StudentRecord(id: "305491", name: "Kier", calendarKey: "k")
            let view = TimetableRoutes.StudentView(
                student: student,
                payload: ScheduleResponse(
                    settings: settings, date: today, now: now, student: .init(id: "305491", name: "Kier"),
                    classes: [lecture], carParks: [], departures: []),
                plan: settings.plan(now: now, classes: [lecture]), settings: settings, today: today, now: now,
                link: .init(url: "", webcal: ""))
            return TimetableRoutes.values(view, t: Localizer(language: language), language: language)
        }
        let during = words(at: "2020-03-13T11:00:00")
        #expect(during["weekText"] as? String == "Week 2")
        #expect(during["heading"] as? String == "Today's classes")
        #expect((during["cards"] as? [[String: Any]])?.first?["inProgress"] as? Bool == true)

        let after = words(at: "2020-03-13T12:30:00")
        #expect(after["heading"] as? String == "Next classes: Friday 20 March 2020")
        #expect(after["note"] as? String == "No more classes today: here is the next teaching day.")

        let inBreak = words(at: "2020-04-15T09:00:00")
        #expect(inBreak["weekText"] as? String == "Mid-semester break: teaching resumes on Monday 20 April 2020.")
        #expect(inBreak["heading"] as? String == "Next classes: Friday 24 April 2020")
        #expect(inBreak["note"] as? String == inBreak["weekText"] as? String)

        let french = words(at: "2020-04-15T09:00:00", language: .french)
        #expect(french["weekText"] as? String == "Mid-semester break : les cours reprennent le lundi 20 avril 2020.")
    }
}
