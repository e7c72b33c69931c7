import Foundation
import OpenAPIRuntime
import QuadCore
import QuadPlatform

/// The Timetable's operations of the generated interface. `GET /api/schedules` keeps the original app's
/// snake_case shape (QuadCore's `ScheduleResponse`, used by the contract as it is); the calendar is
/// `text/calendar` text.
struct TimetableOperations: APIProtocol {
    let timetable: Timetable
    var platform: Platform { timetable.platform }
}

extension TimetableOperations {
    private var api: TimetableAPI { TimetableAPI(timetable: timetable) }

    func getSchedules(_ input: Operations.GetSchedules.Input) async throws -> Operations.GetSchedules.Output {
        let person = try Access.person()
        var date: LocalDate?
        if let raw = input.query.date {
            guard let parsed = LocalDate(raw), AcceptedDates.contains(parsed) else {
                throw Problem(
                    .badRequest, type: "invalid-parameter", title: "Invalid parameter",
                    detail: "date must be a day as YYYY-MM-DD from 2000 to 2099, not \"\(raw)\".",
                    errors: [FieldError(field: "date", message: "A day as YYYY-MM-DD, from 2000 to 2099.")])
            }
            date = parsed
        }
        let student = try await api.studentFor(person, asked: input.query.student)
        return .ok(.init(body: .json(try await timetable.schedule(for: student, date: date))))
    }

    func listParkings(_ input: Operations.ListParkings.Input) async throws -> Operations.ListParkings.Output {
        .ok(.init(body: .json(.init(parkings: try await api.parkingList().parkings))))
    }

    func listDepartures(_ input: Operations.ListDepartures.Input) async throws -> Operations.ListDepartures.Output {
        .ok(.init(body: .json(.init(departures: try await api.departureList().departures))))
    }

    func setParkingReading(
        _ input: Operations.SetParkingReading.Input
    ) async throws -> Operations.SetParkingReading.Output {
        guard case .json(let body) = input.body else { throw Problem.malformedBody("Send {\"free\": <places>}.") }
        let park: CarPark
        do {
            park = try await timetable.recordReading(input.path.parkingId, free: body.free)
        } catch let failure as ValidationFailure {
            throw Problem.validation(failure.errors)
        }
        return .ok(.init(body: .json(TimetableAPI.parking(park, now: timetable.now))))
    }

    func setDeparturePrediction(
        _ input: Operations.SetDeparturePrediction.Input
    ) async throws -> Operations.SetDeparturePrediction.Output {
        guard case .json(let body) = input.body else {
            throw Problem.malformedBody("Send {\"predicted\": \"<ISO 8601 time>\"}.")
        }
        let departure = try await timetable.recordPrediction(input.path.departureId, predicted: body.predicted)
        let settings = try await timetable.settings()
        return .ok(.init(body: .json(ScheduleResponse.Stop(departure, now: timetable.now, clock: settings.clock))))
    }

    /// The subscription: 404 alike for an unknown student and a wrong key, so ids cannot be probed.
    func getTimetableCalendar(
        _ input: Operations.GetTimetableCalendar.Input
    ) async throws -> Operations.GetTimetableCalendar.Output {
        guard let student = try await timetable.store.student(input.path.studentId),
            TimetableAPI.sameKey(input.query.key, student.calendarKey)
        else { throw Problem.notFound("There is no such calendar (was its address replaced?).") }
        let settings = try await timetable.settings()
        let text = ICalendar.write(
            settings: settings, classes: try await timetable.store.classes(student: student.id),
            bookings: try await timetable.bookings(ofStudent: student.id),
            reminders: try await timetable.reminders(ofStudent: student.id),
            calendarName: "\(student.name) — \(settings.name)", stamp: timetable.now,
            domain: "timetable.quad")
        return .ok(.init(body: .textCalendar(HTTPBody(text))))
    }

    func getMyCalendar(_ input: Operations.GetMyCalendar.Input) async throws -> Operations.GetMyCalendar.Output {
        .ok(.init(body: .json(try await calendarLink(rotate: false))))
    }

    /// An operator's GTFS feed, read and checked whole before it replaces the one before.
    func importGTFS(_ input: Operations.ImportGTFS.Input) async throws -> Operations.ImportGTFS.Output {
        guard case .applicationZip(let body) = input.body else {
            throw Problem.malformedBody("Send the feed as application/zip.")
        }
        let summary = GTFSSummary(
            try await timetable.importGTFS(try await Data(collecting: body, upTo: BodyLimit.upload)))
        return .ok(
            .init(
                body: .json(
                    .init(
                        agency: summary.agency, stops: summary.stops, services: summary.services, calls: summary.calls))
            ))
    }

    func getMyStops(_ input: Operations.GetMyStops.Input) async throws -> Operations.GetMyStops.Output {
        .ok(.init(body: .json(try await myStops(try await api.studentFor(try Access.person(), asked: nil)))))
    }

    func setMyStops(_ input: Operations.SetMyStops.Input) async throws -> Operations.SetMyStops.Output {
        guard case .json(let body) = input.body else { throw Problem.malformedBody("Send {\"stops\": [...]}.") }
        var student = try await api.studentFor(try Access.person(), asked: nil)
        student.stops = try await timetable.chooseStops(student: student.id, stops: body.stops)
        return .ok(.init(body: .json(try await myStops(student))))
    }

    /// The student's stops and the feed's boarding stops they may choose among.
    private func myStops(_ student: StudentRecord) async throws -> Components.Schemas.MyStops {
        .init(
            chosen: student.stops,
            stops: try await timetable.boardingStops().map { .init(id: $0.id, name: $0.name) })
    }

    /// A new address: the old one stops working.
    func rotateMyCalendar(_ input: Operations.RotateMyCalendar.Input) async throws -> Operations.RotateMyCalendar.Output
    {
        .ok(.init(body: .json(try await calendarLink(rotate: true))))
    }

    /// A student's timetable feed (their bookings in it); for anyone else, a feed of their bookings alone.
    private func calendarLink(rotate: Bool) async throws -> Components.Schemas.CalendarLink {
        let person = try Access.person()
        guard person.studentId != nil else {
            let key = try await timetable.store.personKey(person.username, rotate: rotate)
            let link = TimetableAPI.calendarLink(
                baseURL: RequestInfo.current.baseURL, username: person.username, key: key)
            return .init(url: link.url, webcal: link.webcal)
        }
        var student = try await api.studentFor(person, asked: nil)
        if rotate { student.calendarKey = try await timetable.rotateCalendarKey(student: student.id) }
        let link = TimetableAPI.calendarLink(baseURL: RequestInfo.current.baseURL, student: student)
        return .init(url: link.url, webcal: link.webcal)
    }

    /// The feed of a person who is no student: 404 alike for an unknown person and a wrong key.
    func getPersonCalendar(
        _ input: Operations.GetPersonCalendar.Input
    ) async throws -> Operations.GetPersonCalendar.Output {
        let username = input.path.username
        guard let key = try await timetable.store.existingPersonKey(username),
            TimetableAPI.sameKey(input.query.key, key)
        else { throw Problem.notFound("There is no such calendar (was its address replaced?).") }
        let settings = try await timetable.settings()
        let text = ICalendar.write(
            settings: settings, classes: [], bookings: try await timetable.bookings(of: username),
            reminders: try await timetable.reminders.calendarReminders(of: username),
            calendarName: "\(username) — \(settings.name)", stamp: timetable.now, domain: "timetable.quad")
        return .ok(.init(body: .textCalendar(HTTPBody(text))))
    }
}
