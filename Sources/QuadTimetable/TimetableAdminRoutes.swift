import Foundation
import Hummingbird
import QuadCore
import QuadPlatform

/// `/admin/timetable`: forms (CSRF-protected, no JavaScript needed) for the campus, courses, classes,
/// students and enrolments, car parks and shuttle routes. A form at fault comes back with 422 and
/// each field's message; nothing is written.
struct TimetableAdminRoutes {
    let timetable: Timetable
    let web: WebShell

    func register(on routes: Routes) {
        routes.on(.get, "/admin/timetable", .admin) { request, _ in
            let query = request.uri.queryParameters
            return try await self.page(
                request, saved: query.get("saved") != nil,
                editing: query.get("edit").map { ($0, query.get("id") ?? "") })
        }
        let actions: [(String, @Sendable (TimetableAdminRoutes, [String: String]) async throws -> Void)] = [
            ("campus", { try await $0.saveCampus($1) }),
            ("courses", { try await $0.saveCourse($1) }),
            (
                "courses/delete",
                { admin, fields in
                    let code = fields["code"] ?? ""
                    do {
                        _ = try await admin.timetable.store.deleteCourse(code)
                    } catch let problem as Problem where problem.status == .conflict {
                        // Shown on the page, beside the others, rather than as an error page.
                        throw ValidationFailure(
                            field: "code", message: "\(code) still has classes: delete or move them first.")
                    }
                }
            ),
            ("classes", { try await $0.saveClass($1) }),
            ("classes/delete", { _ = try await $0.timetable.store.deleteClass($1["id"] ?? "") }),
            ("students", { try await $0.saveStudent($1) }),
            (
                "enrolments",
                { try await $0.timetable.store.enrol(student: $1["student"] ?? "", classId: $1["class"] ?? "") }
            ),
            (
                "enrolments/delete",
                { try await $0.timetable.store.unenrol(student: $1["student"] ?? "", classId: $1["class"] ?? "") }
            ),
            ("carparks", { try await $0.saveCarPark($1) }),
            (
                "carparks/delete",
                {
                    let id = $1["id"] ?? ""
                    if try await $0.timetable.store.deleteCarPark(id) { try await $0.timetable.carParkChanged(id) }
                }
            ),
            ("routes", { try await $0.saveRoute($1) }),
            (
                "routes/delete",
                {
                    let id = $1["id"] ?? ""
                    if try await $0.timetable.store.deleteRoute(id) { try await $0.timetable.routeChanged(id) }
                }
            ),
        ]
        routes.on(.post, "/admin/timetable/gtfs", .admin, upload: true) { request, _ in
            try await self.loadFeed(request)
        }
        for (path, action) in actions {
            routes.on(.post, "/admin/timetable/\(path)", .admin) { request, _ in
                var request = request
                let fields = try await request.formFields()
                do {
                    try await action(self, fields)
                    await timetable.changed()
                } catch let failure as ValidationFailure {
                    return try await self.page(
                        request, saved: false, errors: failure.errors, form: path, submitted: fields,
                        status: .unprocessableContent)
                }
                return .seeOther("/admin/timetable?saved=1#\(path.split(separator: "/")[0])")
            }
        }
    }

    /// The form's file: the feed's ZIP.
    private struct FeedUpload: Decodable {
        var feed: Data?
    }

    /// An operator's GTFS feed from the form: loaded whole, or the page again with each file, row and column at fault.
    func loadFeed(_ request: Request) async throws -> Response {
        var request = request
        let upload = try await request.multipartForm(FeedUpload.self, limit: BodyLimit.upload)
        do {
            _ = try await timetable.importGTFS(upload.feed ?? Data())
        } catch let failure as ValidationFailure {
            let errors = failure.errors.map { error in
                FieldError(
                    field: error.field.isEmpty ? "gtfs" : error.field,
                    message: error.row.map { "row \($0): \(error.message)" } ?? error.message)
            }
            return try await page(request, saved: false, errors: errors, status: .unprocessableContent)
        }
        return .seeOther("/admin/timetable?saved=1#gtfs")
    }

    func saveCampus(_ f: [String: String]) async throws {
        try await timetable.store.setCampus(
            try TimetableInput.campus(
                name: f["name"], timeZone: f["timeZone"], semesterStart: f["semesterStart"],
                teachingWeeks: f["teachingWeeks"], breaks: f["breaks"]))
    }

    func saveCourse(_ f: [String: String]) async throws {
        let course = try TimetableInput.course(code: f["code"], title: f["title"])
        try await timetable.store.saveCourse(code: course.code, title: course.title)
    }

    func saveClass(_ f: [String: String]) async throws {
        try await timetable.store.saveClass(
            try TimetableInput.timetableClass(
                id: f["id"], course: f["course"], name: f["name"], lecturer: f["lecturer"], room: f["room"],
                campus: f["campus"], weekday: f["weekday"], start: f["start"], end: f["end"], weeks: f["weeks"]))
    }

    func saveStudent(_ f: [String: String]) async throws {
        let student = try TimetableInput.student(id: f["id"], name: f["name"])
        try await timetable.store.saveStudent(id: student.id, name: student.name)
    }

    func saveCarPark(_ f: [String: String]) async throws {
        let park = try TimetableInput.carPark(id: f["id"], name: f["name"], capacity: f["capacity"])
        try await timetable.store.saveCarPark(id: park.id, name: park.name, capacity: park.capacity)
        try await timetable.carParkChanged(park.id)
    }

    func saveRoute(_ f: [String: String]) async throws {
        let route = try TimetableInput.route(id: f["id"], from: f["from"], to: f["to"], times: f["times"])
        try await timetable.store.saveRoute(
            RouteRecord(id: route.id, from: route.from, to: route.to, times: route.times))
        try await timetable.routeChanged(route.id)
    }

    /// The form each action posts from, as the page's values name it.
    static let formKeys: [String: String] = [
        "campus": "campusForm", "courses": "courseForm", "classes": "classForm", "students": "studentForm",
        "enrolments": "enrolmentForm", "carparks": "carParkForm", "routes": "routeForm",
    ]

    /// `editing` is (kind, id) from `?edit=…&id=…`: that row fills its form. `submitted` (a form at fault) fills
    /// the form it came from instead, with each field's message beside it.
    func page(
        _ request: Request, saved: Bool, editing: (String, String)? = nil, errors: [FieldError] = [],
        form: String? = nil, submitted: [String: String]? = nil, status: HTTPResponse.Status = .ok
    ) async throws -> Response {
        let store = timetable.store
        let campus = try await store.campus()
        let courses = try await store.courses()
        let classes = try await store.classes()
        let students = try await store.students()
        let enrolments = try await store.enrolments()
        let parks = try await store.carParks()
        let routes = try await store.routes()
        let feed = try await timetable.gtfs().map(GTFSSummary.init)
        // What each kind of row fills its form with, by the row's id (`?edit=classes&id=…`).
        let editable: [String: [(id: String, fields: [String: String])]] = [
            "courses": courses.map { ($0.code, ["code": $0.code, "title": $0.title]) },
            "classes": classes.map {
                (
                    $0.id,
                    [
                        "id": $0.id, "course": $0.course, "name": $0.name, "lecturer": $0.lecturer, "room": $0.room,
                        "campus": $0.campus, "weekday": String($0.weekday), "start": $0.start.description,
                        "end": $0.end.description, "weeks": TimetableInput.weeksText($0.weeks),
                    ]
                )
            },
            "students": students.map { ($0.id, ["id": $0.id, "name": $0.name]) },
            "carparks": parks.map { ($0.id, ["id": $0.id, "name": $0.name, "capacity": String($0.capacity)]) },
            "routes": routes.map {
                (
                    $0.id,
                    [
                        "id": $0.id, "from": $0.from, "to": $0.to,
                        "times": $0.times.map(\.description).joined(separator: ", "),
                    ]
                )
            },
        ]
        var forms: [String: FormValues] = [
            "campusForm": FormValues(values: [
                "name": campus?.name ?? "", "timeZone": campus?.timeZone.identifier ?? "",
                "semesterStart": campus?.semesterStart.description ?? "",
                "teachingWeeks": campus.map { String($0.teachingWeeks) } ?? "",
                "breaks": campus.map { TimetableInput.breaksText($0.breaks) } ?? "",
            ]),
            "classForm": FormValues(values: ["weeks": "1-12"]),
        ]
        if let (kind, id) = editing, let formKey = Self.formKeys[kind],
            let row = editable[kind]?.first(where: { $0.id == id })
        {
            forms[formKey] = FormValues(values: row.fields, editing: true)
        }
        if let form, let submitted, let formKey = Self.formKeys[form] {
            // An edit at fault stays an edit.
            let editing =
                !(submitted["id"] ?? "").isEmpty || form == "campus"
                || (form == "courses" && courses.contains { $0.code == submitted["code"] })
            var messages: [String: String] = [:]
            for error in errors where messages[error.field] == nil { messages[error.field] = error.message }
            forms[formKey] = FormValues(
                values: submitted.filter { $0.key != "csrf" }, editing: editing, errors: messages)
        }
        // An enrolment at fault keeps the student and class that were chosen.
        let chosen = form == "enrolments" ? submitted : nil
        let page = TimetableAdminPage(
            courses: courses.map { .init(code: $0.code, title: $0.title) },
            classes: classes.map {
                .init(
                    id: $0.id, course: $0.course, name: $0.name, lecturer: $0.lecturer, room: $0.room,
                    campus: $0.campus, weekday: String($0.weekday), start: $0.start.description,
                    end: $0.end.description, weeks: TimetableInput.weeksText($0.weeks),
                    selected: chosen?["class"] == $0.id)
            },
            students: students.map { .init(id: $0.id, name: $0.name, selected: chosen?["student"] == $0.id) },
            enrolments: enrolments.map { enrolment in
                .init(
                    student: enrolment.student, classId: enrolment.classId,
                    studentName: students.first { $0.id == enrolment.student }?.name ?? "",
                    className: classes.first { $0.id == enrolment.classId }.map { "\($0.course) \($0.name)" }
                        ?? enrolment.classId)
            },
            carParks: parks.map { .init(id: $0.id, name: $0.name, capacity: String($0.capacity)) },
            routes: routes.map {
                .init(id: $0.id, from: $0.from, to: $0.to, times: $0.times.map(\.description).joined(separator: ", "))
            },
            campusForm: forms["campusForm"] ?? FormValues(), courseForm: forms["courseForm"] ?? FormValues(),
            classForm: forms["classForm"] ?? FormValues(), studentForm: forms["studentForm"] ?? FormValues(),
            enrolmentForm: forms["enrolmentForm"] ?? FormValues(), carParkForm: forms["carParkForm"] ?? FormValues(),
            routeForm: forms["routeForm"] ?? FormValues(), saved: saved,
            hasErrors: !errors.isEmpty, errors: errors.map { .init(field: $0.field, message: $0.message) })
        return try web.page(request, template: "timetable-admin", status: status, title: { $0("timetable.adminTitle") })
        { t in
            var page = page
            page.feed = feed.map { feed in
                t(
                    "timetable.admin.gtfsLoaded",
                    [
                        "agency": feed.agency, "stops": t("timetable.admin.gtfsStops", count: feed.stops),
                        "services": t("timetable.admin.gtfsServices", count: feed.services),
                        "calls": t("timetable.admin.gtfsCalls", count: feed.calls),
                    ])
            }
            return page
        }
    }
}

/// `/admin/timetable`: the campus, courses, classes, students, enrolments, car parks and shuttle routes, each with
/// its form.
struct TimetableAdminPage {
    let courses: [Course]
    let classes: [Class]
    let students: [Student]
    let enrolments: [Enrolment]
    let carParks: [CarPark]
    let routes: [Route]
    let campusForm: FormValues
    let courseForm: FormValues
    let classForm: FormValues
    let studentForm: FormValues
    let enrolmentForm: FormValues
    let carParkForm: FormValues
    let routeForm: FormValues
    let saved: Bool
    let hasErrors: Bool
    let errors: [Message]
    /// What the operator's feed holds, in words, when one is loaded.
    var feed: String?

    struct Course {
        let code: String
        let title: String
    }

    struct Class {
        let id: String
        let course: String
        let name: String
        let lecturer: String
        let room: String
        let campus: String
        let weekday: String
        let start: String
        let end: String
        let weeks: String
        let selected: Bool
    }

    struct Student {
        let id: String
        let name: String
        let selected: Bool
    }

    struct Enrolment {
        let student: String
        let classId: String
        let studentName: String
        let className: String
    }

    struct CarPark {
        let id: String
        let name: String
        let capacity: String
    }

    struct Route {
        let id: String
        let from: String
        let to: String
        let times: String
    }

    struct Message {
        let field: String
        let message: String
    }
}
