import Foundation
import Hummingbird
import QuadCore
import QuadPlatform

/// `/admin/rooms`: each building's rules for booking its rooms in time (opening hours, how far ahead, how long,
/// check-in), one form per building (CSRF-protected, no JavaScript needed). A form at fault is drawn again with
/// what was typed and each field's message beside it.
struct BuildingsAdminRoutes {
    let rooms: Rooms
    let web: WebShell

    func register(on routes: Routes) {
        routes.on(.get, "/admin/rooms", .admin) { request, _ in
            try await self.page(request, saved: request.uri.queryParameters.get("saved"))
        }
        RoomsAdminRoutes(rooms: rooms, web: web).register(on: routes)
        routes.on(.post, "/admin/rooms/buildings", .admin) { request, _ in try await self.save(request) }
    }

    func save(_ request: Request) async throws -> Response {
        var request = request
        let fields = try await request.formFields()
        let name = fields["building"] ?? ""
        guard
            let building = try await rooms.policies.buildings().first(where: {
                $0.name.lowercased() == name.lowercased()
            })
        else { throw Problem.notFound("No room is in a building called \(name).") }
        do {
            // The week's rows of times when the form has them; else the hours as text.
            let hours =
                fields["open0"] == nil
                ? fields["hours"]
                : try OpeningHours(week: (0..<7).map { (fields["open\($0)"] ?? "", fields["close\($0)"] ?? "") })
                    .description
            let policy = try BookingPolicy.validated(
                hours: hours, horizonDays: Int(fields["horizonDays"] ?? ""),
                maxMinutes: Int(fields["maxMinutes"] ?? ""),
                checkInMinutes: (fields["checkInMinutes"] ?? "").isEmpty
                    ? nil : Int(fields["checkInMinutes"] ?? "") ?? 0)
            try await rooms.setRules(policy, forBuilding: building.name)
        } catch let failure as ValidationFailure {
            return try await page(
                request, submitted: (building.name, fields, failure.errors), status: .unprocessableContent)
        }
        let encoded = building.name.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        return .seeOther("/admin/rooms?saved=\(encoded)")
    }

    func page(
        _ request: Request, saved: String? = nil,
        submitted: (building: String, fields: [String: String], errors: [FieldError])? = nil,
        status: HTTPResponse.Status = .ok
    ) async throws -> Response {
        let buildings = try await rooms.policies.buildings()
        let all = try await rooms.store.all().sorted { $0.name.lowercased() < $1.name.lowercased() }
        let removed = request.uri.queryParameters.get("removed")
        let zone = await rooms.store.campusClock().timeZone.identifier
        return try web.page(request, template: "rooms-admin", status: status, title: { $0("rooms.admin.title") }) {
            t in
            BuildingsAdminPage(
                timeZone: t("rooms.admin.timeZone", ["zone": zone]),
                saved: buildings.first { $0.name == saved }.map { t("rooms.admin.saved", ["name": $0.name]) }
                    // Said in general words: a link cannot put words of its own on the page.
                    ?? (removed == "1" ? t("rooms.admin.removed") : nil),
                hasErrors: submitted != nil,
                rooms: all.map {
                    .init(
                        name: $0.name, building: $0.building, path: "/admin/rooms/\($0.id)",
                        seatsText:
                            "\(RoomsPage.seatsFree($0.spots, of: $0.seats, t: t)) · \(t("rooms.capacity", count: $0.capacity))"
                    )
                },
                buildings: buildings.enumerated().map { index, building in
                    let mine = submitted.flatMap { $0.building == building.name ? $0 : nil }
                    var messages: [String: String] = [:]
                    for error in mine?.errors ?? [] where messages[error.field] == nil {
                        messages[error.field] = error.message
                    }
                    let values =
                        mine?.fields
                        ?? [
                            "hours": building.policy.hours.description,
                            "horizonDays": String(building.policy.horizonDays),
                            "maxMinutes": String(building.policy.maxMinutes),
                            "checkInMinutes": building.policy.checkInMinutes.map(String.init) ?? "",
                        ]
                    // The week as rows of times, from what was typed or what is set; the text when a day has two
                    // periods or more.
                    let week =
                        mine?.fields["open0"] != nil
                        ? (0..<7).map { (mine?.fields["open\($0)"] ?? "", mine?.fields["close\($0)"] ?? "") }
                        : mine == nil ? building.policy.hours.week : nil
                    let key = "b\(index)"
                    return .init(
                        key: key, name: building.name, rooms: building.rooms.joined(separator: ", "),
                        form: FormValues(values: values.filter { $0.key != "csrf" }, errors: messages),
                        days: (week ?? []).enumerated().map { day, times in
                            .init(
                                id: "\(key)-d\(day)", index: day, name: t.weekdayName(day), open: times.open,
                                close: times.close)
                        }, byText: week == nil)
                })
        }
    }
}

/// `/admin/rooms`.
struct BuildingsAdminPage {
    let timeZone: String
    let saved: String?
    let hasErrors: Bool
    /// Every room, each leading to its form.
    let rooms: [Room]
    let buildings: [Building]

    struct Room {
        let name: String
        let building: String
        let path: String
        let seatsText: String
    }

    struct Building {
        /// Unique within the page, for the fields' ids.
        let key: String
        let name: String
        let rooms: String
        let form: FormValues
        /// Monday to Sunday, an opening and a closing time each (empty: closed).
        let days: [Day]
        /// A day has two periods or more: the hours are written as text.
        let byText: Bool
    }

    struct Day {
        let id: String
        let index: Int
        let name: String
        let open: String
        let close: String
    }
}
