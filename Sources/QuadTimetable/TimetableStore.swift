import Foundation
import QuadCore
import QuadPlatform
import SQLKit

/// A student as stored: linked to an account through the account's `studentId`; the calendar key is
/// the secret in their subscription address.
struct StudentRecord: Sendable, Equatable {
    var id: String
    var name: String
    var calendarKey: String
    /// The stops of the operator's feed the student uses (ids), whose shuttles they are shown first.
    var stops: [String] = []
}

/// A shuttle route with its daily departure times (campus time).
struct RouteRecord: Sendable, Equatable {
    var id: String
    var from: String
    var to: String
    var times: [LocalTime]
}

/// The campus, courses, classes, students, enrolments, car parks and shuttle routes, in `timetable_*` tables.
final class TimetableStore: Sendable {
    let database: Database

    init(database: Database) {
        self.database = database
    }

    static let migrations = [
        Migration(
            id: 400, name: "timetable",
            statements: [
                """
                CREATE TABLE timetable_campus (
                    id INTEGER PRIMARY KEY, name TEXT NOT NULL, time_zone TEXT NOT NULL, semester_start TEXT NOT NULL,
                    teaching_weeks INTEGER NOT NULL CHECK (teaching_weeks > 0), breaks TEXT NOT NULL,
                    simulated INTEGER NOT NULL DEFAULT 0)
                """,
                "CREATE TABLE timetable_courses (code TEXT PRIMARY KEY, title TEXT NOT NULL)",
                """
                CREATE TABLE timetable_classes (
                    id TEXT PRIMARY KEY, course TEXT NOT NULL REFERENCES timetable_courses (code),
                    name TEXT NOT NULL, lecturer TEXT NOT NULL, room TEXT NOT NULL, campus TEXT NOT NULL,
                    weekday INTEGER NOT NULL CHECK (weekday BETWEEN 1 AND 7), start_time TEXT NOT NULL,
                    end_time TEXT NOT NULL, weeks TEXT NOT NULL)
                """,
                """
                CREATE TABLE timetable_students (
                    id TEXT PRIMARY KEY, name TEXT NOT NULL, calendar_key TEXT NOT NULL)
                """,
                """
                CREATE TABLE timetable_enrolments (
                    student_id TEXT NOT NULL REFERENCES timetable_students (id) ON DELETE CASCADE,
                    class_id TEXT NOT NULL REFERENCES timetable_classes (id) ON DELETE CASCADE,
                    PRIMARY KEY (student_id, class_id))
                """,
                """
                CREATE TABLE timetable_car_parks (
                    id TEXT PRIMARY KEY, name TEXT NOT NULL, capacity INTEGER NOT NULL CHECK (capacity > 0),
                    free INTEGER NOT NULL CHECK (free >= 0 AND free <= capacity), updated_at TEXT)
                """,
                """
                CREATE TABLE timetable_routes (
                    id TEXT PRIMARY KEY, from_name TEXT NOT NULL, to_name TEXT NOT NULL, times TEXT NOT NULL)
                """,
                """
                CREATE TABLE timetable_predictions (
                    departure_id TEXT PRIMARY KEY, route_id TEXT NOT NULL REFERENCES timetable_routes (id) ON DELETE CASCADE,
                    predicted TEXT NOT NULL, made_at TEXT NOT NULL)
                """,
            ]),
        // A calendar feed for a person who is no student (their room bookings): its address's key, by username.
        Migration(
            id: 401, name: "people's calendar feeds",
            statements: [
                """
                CREATE TABLE timetable_person_calendars (
                    username_key TEXT PRIMARY KEY, calendar_key TEXT NOT NULL)
                """
            ]),
        // A transit operator's GTFS feed, as read (`GTFSSchedule`, JSON): always replaced and read whole, so one row;
        // `version` tells an instance whether the copy it keeps in memory is still the one stored.
        Migration(
            id: 402, name: "GTFS feed",
            statements: [
                """
                CREATE TABLE timetable_gtfs (
                    id INTEGER PRIMARY KEY CHECK (id = 1), version TEXT NOT NULL, schedule TEXT NOT NULL)
                """
            ]),
        // A feed account's predictions for the departures of the operator's feed, which no route row holds (those of
        // the routes an admin typed in go with their route, in `timetable_predictions`).
        Migration(
            id: 403, name: "GTFS departures' predictions",
            statements: [
                """
                CREATE TABLE timetable_feed_predictions (
                    departure_id TEXT PRIMARY KEY, predicted TEXT NOT NULL, made_at TEXT NOT NULL)
                """
            ]),
        // The stops a student uses (a JSON array of the feed's stop ids): their shuttles come first.
        Migration(
            id: 404, name: "students' stops",
            statements: ["ALTER TABLE timetable_students ADD COLUMN stops TEXT NOT NULL DEFAULT '[]'"]),
    ]

    // MARK: GTFS feed

    /// The stored feed's version (nil without one): read on every build, the feed itself only when it changed.
    func gtfsVersion() async throws -> String? {
        try await database.withConnection { sql in
            try await sql.raw("SELECT version FROM timetable_gtfs WHERE id = 1").first()?
                .decode(column: "version", as: String.self)
        }
    }

    func gtfs() async throws -> (version: String, schedule: GTFSSchedule)? {
        try await database.withConnection { sql in
            guard let row = try await sql.raw("SELECT version, schedule FROM timetable_gtfs WHERE id = 1").first()
            else { return nil }
            let schedule = try JSONDecoder().decode(
                GTFSSchedule.self, from: Data(try row.decode(column: "schedule", as: String.self).utf8))
            return (try row.decode(column: "version", as: String.self), schedule)
        }
    }

    /// Replaces the feed (a new version, made up here).
    func setGTFS(_ schedule: GTFSSchedule) async throws {
        let json = String(decoding: try JSONEncoder().encode(schedule), as: UTF8.self)
        let version = Self.newKey()
        try await database.withConnection { sql in
            try await sql.raw(
                """
                INSERT INTO timetable_gtfs (id, version, schedule) VALUES (1, \(bind: version), \(bind: json))
                ON CONFLICT (id) DO UPDATE SET version = excluded.version, schedule = excluded.schedule
                """
            ).run()
        }
    }

    // MARK: People's calendar feeds

    /// The key of `username`'s feed, made on first asking (or anew with `rotate`: the old address stops working).
    func personKey(_ username: String, rotate: Bool) async throws -> String {
        let fresh = Self.newKey()
        return try await database.withConnection { sql in
            let conflict: SQLQueryString =
                rotate ? "DO UPDATE SET calendar_key = excluded.calendar_key" : "DO NOTHING"
            try await sql.raw(
                """
                INSERT INTO timetable_person_calendars (username_key, calendar_key)
                VALUES (\(bind: username.lowercased()), \(bind: fresh))
                ON CONFLICT (username_key) \(conflict)
                """
            ).run()
            return try await sql.raw(
                "SELECT calendar_key FROM timetable_person_calendars WHERE username_key = \(bind: username.lowercased())"
            ).first()?.decode(column: "calendar_key", as: String.self) ?? fresh
        }
    }

    /// The key of `username`'s feed, if they have one.
    func existingPersonKey(_ username: String) async throws -> String? {
        try await database.withConnection { sql in
            try await sql.raw(
                "SELECT calendar_key FROM timetable_person_calendars WHERE username_key = \(bind: username.lowercased())"
            ).first()?.decode(column: "calendar_key", as: String.self)
        }
    }

    /// Forgets `username`'s feed, inside the caller's transaction (Accounts removing the person).
    static func forgetPersonKey(_ username: String, in sql: any SQLDatabase) async throws {
        try await sql.raw(
            "DELETE FROM timetable_person_calendars WHERE username_key = \(bind: username.lowercased())"
        ).run()
    }

    // MARK: Campus

    func campus() async throws -> CampusSettings? {
        try await database.withConnection { sql in try await Self.campus(sql) }
    }

    static func campus(_ sql: any SQLDatabase) async throws -> CampusSettings? {
        guard
            let row = try await sql.raw(
                "SELECT name, time_zone, semester_start, teaching_weeks, breaks FROM timetable_campus WHERE id = 1"
            ).first()
        else { return nil }
        let breaks = try JSONDecoder().decode(
            [TeachingBreak].self, from: Data(try row.decode(column: "breaks", as: String.self).utf8))
        return CampusSettings(
            name: try row.decode(column: "name", as: String.self),
            timeZone: TimeZone(identifier: try row.decode(column: "time_zone", as: String.self)) ?? .gmt,
            semesterStart: LocalDate(try row.decode(column: "semester_start", as: String.self))
                ?? LocalDate(year: 2020, month: 1, day: 1),
            teachingWeeks: try row.decode(column: "teaching_weeks", as: Int.self), breaks: breaks)
    }

    func setCampus(_ settings: CampusSettings) async throws {
        let breaks = String(decoding: try JSONEncoder().encode(settings.breaks), as: UTF8.self)
        try await database.transaction { sql in
            let simulated =
                try await sql.raw("SELECT simulated FROM timetable_campus WHERE id = 1").first()?
                .decode(column: "simulated", as: Int.self) ?? 0
            try await sql.raw("DELETE FROM timetable_campus").run()
            try await sql.raw(
                """
                INSERT INTO timetable_campus (id, name, time_zone, semester_start, teaching_weeks, breaks, simulated)
                VALUES (1, \(bind: settings.name), \(bind: settings.timeZone.identifier),
                        \(bind: settings.semesterStart.description), \(bind: settings.teachingWeeks), \(bind: breaks),
                        \(bind: simulated))
                """
            ).run()
        }
    }

    /// True when the campus is the demo's, whose feeds the simulator may move (never a real campus).
    func isSimulated() async throws -> Bool {
        try await database.withConnection { sql in
            try await sql.raw("SELECT simulated FROM timetable_campus WHERE id = 1").first()?
                .decode(column: "simulated", as: Int.self) == 1
        }
    }

    func setSimulated(_ simulated: Bool) async throws {
        try await database.withConnection { sql in
            try await sql.raw("UPDATE timetable_campus SET simulated = \(bind: simulated ? 1 : 0) WHERE id = 1").run()
        }
    }

    // MARK: Courses and classes

    func courses() async throws -> [(code: String, title: String)] {
        try await database.withConnection { sql in
            try await sql.raw("SELECT code, title FROM timetable_courses ORDER BY code").all().map {
                (try $0.decode(column: "code", as: String.self), try $0.decode(column: "title", as: String.self))
            }
        }
    }

    /// Adds or renames a course.
    func saveCourse(code: String, title: String) async throws {
        try await database.withConnection { sql in
            try await sql.raw(
                """
                INSERT INTO timetable_courses (code, title) VALUES (\(bind: code), \(bind: title))
                ON CONFLICT (code) DO UPDATE SET title = excluded.title
                """
            ).run()
        }
    }

    func deleteCourse(_ code: String) async throws -> Bool {
        try await database.transaction { sql in
            let used = try await sql.raw("SELECT id FROM timetable_classes WHERE course = \(bind: code)").first()
            if used != nil {
                throw Problem.conflict(
                    "course-in-use", title: "Course has classes", detail: "Delete the course's classes first.")
            }
            return try await sql.raw("DELETE FROM timetable_courses WHERE code = \(bind: code) RETURNING code").first()
                != nil
        }
    }

    private static let classColumns =
        "c.id, c.course, co.title, c.name, c.lecturer, c.room, c.campus, c.weekday, c.start_time, c.end_time, c.weeks"

    private static func timetableClass(_ row: any SQLRow) throws -> TimetableClass {
        TimetableClass(
            id: try row.decode(column: "id", as: String.self),
            course: try row.decode(column: "course", as: String.self),
            courseTitle: try row.decode(column: "title", as: String.self),
            name: try row.decode(column: "name", as: String.self),
            lecturer: try row.decode(column: "lecturer", as: String.self),
            room: try row.decode(column: "room", as: String.self),
            campus: try row.decode(column: "campus", as: String.self),
            weekday: try row.decode(column: "weekday", as: Int.self),
            start: LocalTime(try row.decode(column: "start_time", as: String.self)) ?? LocalTime(hour: 0),
            end: LocalTime(try row.decode(column: "end_time", as: String.self)) ?? LocalTime(hour: 0),
            weeks: TimetableInput.weeks(try row.decode(column: "weeks", as: String.self)) ?? [])
    }

    func classes() async throws -> [TimetableClass] {
        try await database.withConnection { sql in
            try await sql.raw(
                """
                SELECT \(unsafeRaw: Self.classColumns) FROM timetable_classes c
                JOIN timetable_courses co ON co.code = c.course ORDER BY c.course, c.name
                """
            ).all().map(Self.timetableClass)
        }
    }

    func classes(student: String) async throws -> [TimetableClass] {
        try await database.withConnection { sql in
            try await sql.raw(
                """
                SELECT \(unsafeRaw: Self.classColumns) FROM timetable_classes c
                JOIN timetable_courses co ON co.code = c.course
                JOIN timetable_enrolments e ON e.class_id = c.id
                WHERE e.student_id = \(bind: student) ORDER BY c.course, c.name
                """
            ).all().map(Self.timetableClass)
        }
    }

    /// Adds or replaces a class; its course must exist.
    func saveClass(_ item: TimetableClass) async throws {
        try await database.transaction { sql in
            let course = try await sql.raw("SELECT code FROM timetable_courses WHERE code = \(bind: item.course)")
                .first()
            guard course != nil else {
                throw ValidationFailure(field: "course", message: "There is no course \(item.course).")
            }
            // Updated in place (never deleted and re-added): its enrolments cascade from the row.
            try await sql.raw(
                """
                INSERT INTO timetable_classes (id, course, name, lecturer, room, campus, weekday, start_time, end_time, weeks)
                VALUES (\(bind: item.id), \(bind: item.course), \(bind: item.name), \(bind: item.lecturer),
                        \(bind: item.room), \(bind: item.campus), \(bind: item.weekday), \(bind: item.start.description),
                        \(bind: item.end.description), \(bind: TimetableInput.weeksText(item.weeks)))
                ON CONFLICT (id) DO UPDATE SET course = excluded.course, name = excluded.name,
                    lecturer = excluded.lecturer, room = excluded.room, campus = excluded.campus,
                    weekday = excluded.weekday, start_time = excluded.start_time, end_time = excluded.end_time,
                    weeks = excluded.weeks
                """
            ).run()
        }
    }

    func deleteClass(_ id: String) async throws -> Bool {
        try await database.transaction { sql in
            try await sql.raw("DELETE FROM timetable_enrolments WHERE class_id = \(bind: id)").run()
            return try await sql.raw("DELETE FROM timetable_classes WHERE id = \(bind: id) RETURNING id").first() != nil
        }
    }

    // MARK: Students and enrolments

    func students() async throws -> [StudentRecord] {
        try await database.withConnection { sql in
            try await sql.raw("SELECT id, name, calendar_key, stops FROM timetable_students ORDER BY id").all().map(
                Self.student)
        }
    }

    func student(_ id: String) async throws -> StudentRecord? {
        try await database.withConnection { sql in
            try await sql.raw(
                "SELECT id, name, calendar_key, stops FROM timetable_students WHERE id = \(bind: id)"
            ).first().map(Self.student)
        }
    }

    private static func student(_ row: any SQLRow) throws -> StudentRecord {
        StudentRecord(
            id: try row.decode(column: "id", as: String.self), name: try row.decode(column: "name", as: String.self),
            calendarKey: try row.decode(column: "calendar_key", as: String.self),
            stops: (try? JSONDecoder().decode(
                [String].self, from: Data(try row.decode(column: "stops", as: String.self).utf8)))
                ?? [])
    }

    /// The stops `student` uses, replacing those before (false: no such student).
    func setStops(student: String, stops: [String]) async throws -> Bool {
        let json = String(decoding: try JSONEncoder().encode(stops), as: UTF8.self)
        return try await database.withConnection { sql in
            try await sql.raw(
                "UPDATE timetable_students SET stops = \(bind: json) WHERE id = \(bind: student) RETURNING id"
            ).first() != nil
        }
    }

    func saveStudent(id: String, name: String) async throws {
        try await database.withConnection { sql in
            try await sql.raw(
                """
                INSERT INTO timetable_students (id, name, calendar_key) VALUES (\(bind: id), \(bind: name), \(bind: Self.newKey()))
                ON CONFLICT (id) DO UPDATE SET name = excluded.name
                """
            ).run()
        }
    }

    /// A new calendar key: the old subscription address stops working.
    func rotateKey(student: String) async throws -> String {
        try await database.withConnection { sql in try await Self.rotateKey(student: student, in: sql) }
    }

    /// A new calendar key inside the caller's transaction (Accounts ending a person's keys).
    @discardableResult
    static func rotateKey(student: String, in sql: any SQLDatabase) async throws -> String {
        let key = newKey()
        try await sql.raw("UPDATE timetable_students SET calendar_key = \(bind: key) WHERE id = \(bind: student)").run()
        return key
    }

    func enrolments() async throws -> [(student: String, classId: String)] {
        try await database.withConnection { sql in
            try await sql.raw("SELECT student_id, class_id FROM timetable_enrolments ORDER BY student_id, class_id")
                .all().map {
                    (
                        try $0.decode(column: "student_id", as: String.self),
                        try $0.decode(column: "class_id", as: String.self)
                    )
                }
        }
    }

    func enrol(student: String, classId: String) async throws {
        try await database.transaction { sql in
            var errors: [FieldError] = []
            if try await sql.raw("SELECT id FROM timetable_students WHERE id = \(bind: student)").first() == nil {
                errors.append(.init(field: "student", message: "There is no student \(student)."))
            }
            if try await sql.raw("SELECT id FROM timetable_classes WHERE id = \(bind: classId)").first() == nil {
                errors.append(.init(field: "class", message: "There is no class \(classId)."))
            }
            guard errors.isEmpty else { throw ValidationFailure(errors) }
            try await sql.raw(
                """
                INSERT INTO timetable_enrolments (student_id, class_id) VALUES (\(bind: student), \(bind: classId))
                ON CONFLICT (student_id, class_id) DO NOTHING
                """
            ).run()
        }
    }

    func unenrol(student: String, classId: String) async throws {
        try await database.withConnection { sql in
            try await sql.raw(
                "DELETE FROM timetable_enrolments WHERE student_id = \(bind: student) AND class_id = \(bind: classId)"
            ).run()
        }
    }

    // MARK: Car parks

    private static func carPark(_ row: any SQLRow) throws -> CarPark {
        CarPark(
            id: try row.decode(column: "id", as: String.self), name: try row.decode(column: "name", as: String.self),
            capacity: try row.decode(column: "capacity", as: Int.self),
            free: try row.decode(column: "free", as: Int.self),
            updatedAt: try row.decode(column: "updated_at", as: String?.self).flatMap(Timestamp.date))
    }

    func carParks() async throws -> [CarPark] {
        try await database.withConnection { sql in
            try await sql.raw("SELECT id, name, capacity, free, updated_at FROM timetable_car_parks ORDER BY name")
                .all().map(Self.carPark)
        }
    }

    /// Adds or changes a car park; free places are kept within the new capacity.
    func saveCarPark(id: String, name: String, capacity: Int) async throws {
        try await database.withConnection { sql in
            try await sql.raw(
                """
                INSERT INTO timetable_car_parks (id, name, capacity, free, updated_at)
                VALUES (\(bind: id), \(bind: name), \(bind: capacity), \(bind: capacity), NULL)
                ON CONFLICT (id) DO UPDATE SET name = excluded.name, capacity = excluded.capacity,
                    free = CASE WHEN timetable_car_parks.free > excluded.capacity THEN excluded.capacity
                        ELSE timetable_car_parks.free END
                """
            ).run()
        }
    }

    func deleteCarPark(_ id: String) async throws -> Bool {
        try await database.withConnection { sql in
            try await sql.raw("DELETE FROM timetable_car_parks WHERE id = \(bind: id) RETURNING id").first() != nil
        }
    }

    /// Records a feed's reading (0 … capacity, else 422) taken at `at`.
    func setFree(_ id: String, free: Int?, at: Date) async throws -> CarPark {
        try await database.transaction { sql in
            guard
                var park = try await sql.raw(
                    "SELECT id, name, capacity, free, updated_at FROM timetable_car_parks WHERE id = \(bind: id)"
                ).first().map(Self.carPark)
            else { throw Problem.notFound("There is no car park \(id).") }
            park.free = try CarPark.validateFree(free, capacity: park.capacity)
            park.updatedAt = at
            try await sql.raw(
                """
                UPDATE timetable_car_parks SET free = \(bind: park.free), updated_at = \(bind: at.formatted(.iso8601))
                WHERE id = \(bind: id)
                """
            ).run()
            return park
        }
    }

    // MARK: Routes and departures

    func routes() async throws -> [RouteRecord] {
        try await database.withConnection { sql in
            try await sql.raw("SELECT id, from_name, to_name, times FROM timetable_routes ORDER BY from_name, to_name")
                .all().map { row in
                    RouteRecord(
                        id: try row.decode(column: "id", as: String.self),
                        from: try row.decode(column: "from_name", as: String.self),
                        to: try row.decode(column: "to_name", as: String.self),
                        times: TimetableInput.times(try row.decode(column: "times", as: String.self)) ?? [])
                }
        }
    }

    func saveRoute(_ route: RouteRecord) async throws {
        let times = route.times.map(\.description).joined(separator: ",")
        try await database.withConnection { sql in
            try await sql.raw(
                """
                INSERT INTO timetable_routes (id, from_name, to_name, times)
                VALUES (\(bind: route.id), \(bind: route.from), \(bind: route.to), \(bind: times))
                ON CONFLICT (id) DO UPDATE SET from_name = excluded.from_name, to_name = excluded.to_name,
                    times = excluded.times
                """
            ).run()
        }
    }

    func deleteRoute(_ id: String) async throws -> Bool {
        try await database.transaction { sql in
            try await sql.raw("DELETE FROM timetable_predictions WHERE route_id = \(bind: id)").run()
            return try await sql.raw("DELETE FROM timetable_routes WHERE id = \(bind: id) RETURNING id").first() != nil
        }
    }

    /// Predictions by departure id.
    func predictions() async throws -> [String: (predicted: Date, madeAt: Date)] {
        try await database.withConnection { sql in
            var result: [String: (Date, Date)] = [:]
            let rows = try await sql.raw(
                """
                SELECT departure_id, predicted, made_at FROM timetable_predictions
                UNION ALL SELECT departure_id, predicted, made_at FROM timetable_feed_predictions
                """
            ).all()
            for row in rows {
                if let predicted = Timestamp.date(try row.decode(column: "predicted", as: String.self)),
                    let madeAt = Timestamp.date(try row.decode(column: "made_at", as: String.self))
                {
                    result[try row.decode(column: "departure_id", as: String.self)] = (predicted, madeAt)
                }
            }
            return result
        }
    }

    /// A departure's prediction: with its route (an admin's), or for a departure of the operator's feed (`route` nil).
    func setPrediction(departure: String, route: String?, predicted: Date, at: Date) async throws {
        try await database.transaction { sql in
            guard let route else {
                try await sql.raw(
                    """
                    INSERT INTO timetable_feed_predictions (departure_id, predicted, made_at)
                    VALUES (\(bind: departure), \(bind: predicted.formatted(.iso8601)), \(bind: at.formatted(.iso8601)))
                    ON CONFLICT (departure_id) DO UPDATE SET predicted = excluded.predicted, made_at = excluded.made_at
                    """
                ).run()
                return
            }
            try await sql.raw(
                """
                INSERT INTO timetable_predictions (departure_id, route_id, predicted, made_at)
                VALUES (\(bind: departure), \(bind: route), \(bind: predicted.formatted(.iso8601)),
                        \(bind: at.formatted(.iso8601)))
                ON CONFLICT (departure_id) DO UPDATE SET route_id = excluded.route_id, predicted = excluded.predicted,
                    made_at = excluded.made_at
                """
            ).run()
        }
    }

    /// Drops predictions made before `date` (they can no longer be shown).
    func deletePredictions(before date: Date) async throws {
        try await database.withConnection { sql in
            for table in ["timetable_predictions", "timetable_feed_predictions"] {
                try await sql.raw(
                    "DELETE FROM \(unsafeRaw: table) WHERE made_at < \(bind: date.formatted(.iso8601))"
                ).run()
            }
        }
    }

    /// 144 random bits, base64url.
    static func newKey() -> String { SecureRandom.base64url(byteCount: 18) }
}
