import Foundation
import Hummingbird
import QuadCore
import QuadPlatform

/// What the Timetable's operations (`TimetableOperations.swift`) and pages share: whose week a person may read,
/// the car parks and departures as the wire shows them, and the calendar's address.
struct TimetableAPI {
    let timetable: Timetable

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
        guard Self.isStudentId(id), let student = try await timetable.store.student(id)
        else {
            throw Problem.notFound("There is no student \(id).")
        }
        return student
    }

    /// A student id is digits: anything else names no one, and never reaches a query (PostgreSQL refuses NUL).
    static func isStudentId(_ id: String) -> Bool {
        (1...20).contains(id.count) && id.unicodeScalars.allSatisfy { ("0"..."9").contains($0) }
    }

    struct ParkingList: Codable {
        var parkings: [ScheduleResponse.Parking]
    }

    struct DepartureList: Codable {
        var departures: [ScheduleResponse.Stop]
    }

    func parkingList() async throws -> ParkingList { try await parkingsAndExpiry().list }

    /// The car parks, and until when they read the same unless a reading is stored (`ScheduleResponse.validUntil`:
    /// a reading growing too old to be live, or the campus day ending).
    func parkingsAndExpiry() async throws -> (list: ParkingList, validUntil: Date) {
        let now = timetable.now
        let settings = try await timetable.settings()
        let carParks = try await timetable.store.carParks()
        return (
            ParkingList(parkings: carParks.map { Self.parking($0, now: now) }),
            ScheduleResponse.validUntil(settings: settings, now: now, carParks: carParks, departures: [])
        )
    }

    static func parking(_ park: CarPark, now: Date) -> ScheduleResponse.Parking {
        ScheduleResponse.Parking(
            name: park.name, slot: park.free, id: park.id, capacity: park.capacity, state: park.state,
            updatedAt: park.updatedAt?.formatted(.iso8601), live: park.isLive(now: now))
    }

    func departureList() async throws -> DepartureList { try await departuresAndExpiry().list }

    /// The next departures, and until when they read the same unless a prediction is stored
    /// (`ScheduleResponse.validUntil`: a bus leaving, a prediction growing too old, or the campus day ending).
    func departuresAndExpiry() async throws -> (list: DepartureList, validUntil: Date) {
        let now = timetable.now
        let settings = try await timetable.settings()
        let all = try await timetable.departures(settings: settings, at: now)
        return (
            DepartureList(departures: Self.stops(all, now: now, clock: settings.clock, limit: Self.departureLimit)),
            ScheduleResponse.validUntil(settings: settings, now: now, carParks: [], departures: all)
        )
    }

    /// As many departures as `GET /api/departures` lists.
    static let departureLimit = 20

    /// The next `limit` departures of `all`, as the API and the page list them.
    static func stops(
        _ all: [Departure], now: Date, clock: CampusClock, limit: Int, first: Set<String> = []
    ) -> [ScheduleResponse.Stop] {
        Departure.upcoming(all, now: now, limit: limit, first: first).map {
            ScheduleResponse.Stop($0, now: now, clock: clock)
        }
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
        link(baseURL + "/api/students/\(student.id)/timetable.ics?key=\(student.calendarKey)")
    }

    /// A person's own feed (their bookings), for someone who is no student. Usernames and keys need no escaping.
    static func calendarLink(baseURL: String, username: String, key: String) -> CalendarLink {
        link(baseURL + "/api/people/\(username)/calendar.ics?key=\(key)")
    }

    private static func link(_ url: String) -> CalendarLink {
        CalendarLink(url: url, webcal: "webcal" + url.drop(while: { $0 != ":" }))
    }
}
