import Foundation
import Hummingbird
import QuadCore

/// The Timetable API as plain routes, documented in openapi.yaml: `GET /api/schedules` keeps the
/// original app's snake_case shape and the calendar is `text/calendar` bytes.
struct TimetableAPI {
    let timetable: Timetable

    func register(on routes: Routes) {
        routes.api(.get, "/api/schedules") { request, _ in try await self.schedules(request) }
        routes.api(.get, "/api/parkings") { _, _ in try await self.parkings() }
        routes.api(.put, "/api/parkings/:parkingId") { request, context in
            try await self.reading(request, context: context, id: context.parameters.require("parkingId"))
        }
        routes.api(.get, "/api/departures") { _, _ in try await self.departures() }
        routes.api(.put, "/api/departures/:departureId") { request, context in
            try await self.prediction(request, context: context, id: context.parameters.require("departureId"))
        }
        routes.api(.get, "/api/students/:studentId/timetable.ics") { request, context in
            try await self.calendar(request, studentId: context.parameters.require("studentId"))
        }
        routes.api(.get, "/api/me/calendar") { request, _ in try await self.myCalendar(request, rotate: false) }
        routes.api(.post, "/api/me/calendar") { request, _ in try await self.myCalendar(request, rotate: true) }
    }

    static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = try encoder.encode(value)
        return Response(
            status: status,
            headers: [.contentType: "application/json", .cacheControl: "no-cache, private"],
            body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// The student whose timetable `person` may read: their own, or for an admin anyone's (`student=`).
    func studentFor(_ person: Person, asked: String?) async throws -> StudentRecord {
        let id: String
        if let asked, asked != person.studentId {
            guard person.isAdmin else {
                throw Problem(.forbidden, detail: "A timetable is only shown to its student (or an admin).")
            }
            id = asked
        } else {
            guard let own = person.studentId else {
                throw Problem.notFound("Your account is not linked to a student.")
            }
            id = own
        }
        guard let student = try await timetable.store.student(id) else {
            throw Problem.notFound("There is no student \(id).")
        }
        return student
    }

    func schedules(_ request: Request) async throws -> Response {
        let person = try Access.person()
        let query = request.uri.queryParameters
        var date: LocalDate?
        if let raw = query.get("date") {
            guard let parsed = LocalDate(raw) else {
                throw Problem(
                    .badRequest, type: "invalid-parameter", title: "Invalid parameter",
                    detail: "date must be a day as YYYY-MM-DD, not \"\(raw)\".",
                    errors: [FieldError(field: "date", message: "A day as YYYY-MM-DD.")])
            }
            date = parsed
        }
        let student = try await studentFor(person, asked: query.get("student"))
        return try Self.json(try await timetable.schedule(for: student, date: date))
    }

    struct ParkingList: Codable {
        var parkings: [ScheduleResponse.Parking]
    }

    struct DepartureList: Codable {
        var departures: [ScheduleResponse.Stop]
    }

    func parkingList() async throws -> ParkingList {
        let now = timetable.now
        return ParkingList(
            parkings: try await timetable.store.carParks().map { Self.parking($0, now: now) })
    }

    static func parking(_ park: CarPark, now: Date) -> ScheduleResponse.Parking {
        ScheduleResponse.Parking(
            name: park.name, slot: park.free, id: park.id, capacity: park.capacity, state: park.state,
            updatedAt: park.updatedAt?.formatted(.iso8601), live: park.isLive(now: now))
    }

    func parkings() async throws -> Response { try Self.json(try await parkingList()) }

    func departureList(limit: Int = 20) async throws -> DepartureList {
        let now = timetable.now
        let settings = try await timetable.settings()
        let all = try await timetable.departures(settings: settings, at: now)
        return DepartureList(
            departures: Departure.upcoming(all, now: now, limit: limit).map {
                Self.stop($0, now: now, clock: settings.clock)
            })
    }

    static func stop(_ departure: Departure, now: Date, clock: CampusClock) -> ScheduleResponse.Stop {
        let expected = departure.expected(now: now)
        return ScheduleResponse.Stop(
            departure: departure.from, arrival: departure.to, predictedArrivalDate: clock.wallClock(expected.time),
            id: departure.id, scheduledDate: clock.wallClock(departure.scheduled),
            expectedAt: expected.time.formatted(.iso8601), live: expected.live)
    }

    func departures() async throws -> Response { try Self.json(try await departureList()) }

    struct Reading: Decodable {
        var free: Int?
    }

    func reading(_ request: Request, context: AppRequestContext, id: String) async throws -> Response {
        var request = request
        let body = try await request.decodeJSON(Reading.self, context: context)
        let park: CarPark
        do {
            park = try await timetable.recordReading(id, free: body.free)
        } catch let failure as ValidationFailure {
            throw Problem.validation(failure.errors)
        }
        return try Self.json(Self.parking(park, now: timetable.now))
    }

    struct Prediction: Decodable {
        var predicted: String?
    }

    func prediction(_ request: Request, context: AppRequestContext, id: String) async throws -> Response {
        var request = request
        let body = try await request.decodeJSON(Prediction.self, context: context)
        let departure = try await timetable.recordPrediction(id, predicted: body.predicted.flatMap(Timestamp.date))
        let settings = try await timetable.settings()
        return try Self.json(Self.stop(departure, now: timetable.now, clock: settings.clock))
    }

    /// The subscription: 404 alike for an unknown student and a wrong key, so ids cannot be probed.
    func calendar(_ request: Request, studentId: String) async throws -> Response {
        guard let key = request.uri.queryParameters.get("key"),
            let student = try await timetable.store.student(studentId),
            Self.sameKey(key, student.calendarKey)
        else { throw Problem.notFound("There is no such calendar (was its address replaced?).") }
        let settings = try await timetable.settings()
        let text = ICalendar.write(
            settings: settings, classes: try await timetable.store.classes(student: student.id),
            calendarName: "\(student.name) — \(settings.name)", stamp: timetable.now,
            domain: "timetable.quad")
        return Response(
            status: .ok,
            headers: [
                .contentType: "text/calendar; charset=utf-8", .cacheControl: "no-cache, private",
                .contentDisposition: "inline; filename=\"timetable.ics\"",
            ],
            body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    static func sameKey(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8)
        let y = Array(b.utf8)
        guard x.count == y.count else { return false }
        return zip(x, y).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }

    struct CalendarLink: Codable {
        var url: String
        var webcal: String
    }

    static func calendarLink(baseURL: String, student: StudentRecord) -> CalendarLink {
        let path = "/api/students/\(student.id)/timetable.ics?key=\(student.calendarKey)"
        let url = baseURL + path
        let webcal = "webcal" + url.drop(while: { $0 != ":" })
        return CalendarLink(url: url, webcal: webcal)
    }

    /// The signed-in student's subscription address; POST makes a new one (the old stops working).
    func myCalendar(_ request: Request, rotate: Bool) async throws -> Response {
        let person = try Access.person()
        var student = try await studentFor(person, asked: nil)
        if rotate { student.calendarKey = try await timetable.store.rotateKey(student: student.id) }
        let baseURL = request.baseURL(trustProxy: timetable.platform.configuration.trustProxy)
        return try Self.json(Self.calendarLink(baseURL: baseURL, student: student))
    }
}
