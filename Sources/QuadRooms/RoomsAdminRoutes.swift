import Foundation
import Hummingbird
import QuadCore
import QuadPlatform

/// An admin's rooms on the web: adding one (`/admin/rooms/new`), changing its name, building, seats and how many
/// people it holds, its photo (`/admin/rooms/{room}`), and removing it, asked once and saying how many bookings
/// go with it. Forms work without JavaScript (the photo is sent by `room-admin.js` to the API, as the specials'
/// are); a form at fault is drawn again with what was typed and each field's message beside it.
struct RoomsAdminRoutes {
    let rooms: Rooms
    let web: WebShell

    func register(on routes: Routes) {
        routes.on(.get, "/admin/rooms/new", .admin) { request, _ in try await self.form(request, room: nil) }
        routes.on(.post, "/admin/rooms/new", .admin) { request, _ in try await self.create(request) }
        routes.on(.get, "/admin/rooms/:roomId", .admin) { request, context in
            try await self.form(request, room: try await self.room(context))
        }
        routes.on(.post, "/admin/rooms/:roomId", .admin) { request, context in
            try await self.update(request, room: try await self.room(context))
        }
        routes.on(.post, "/admin/rooms/:roomId/remove", .admin) { request, context in
            try await self.remove(request, room: try await self.room(context))
        }
    }

    /// The room of the path, or 404.
    func room(_ context: AppRequestContext) async throws -> RoomRecord {
        guard let record = try await rooms.store.find(RoomsRoutes.roomId(context).value) else {
            throw Problem.notFound("There is no such room.")
        }
        return record
    }

    // MARK: Forms

    func create(_ request: Request) async throws -> Response {
        try await save(request, room: nil) { fields in
            let checked = try RoomValidation.room(
                id: nil, name: fields["name"], building: fields["building"], capacity: Int(fields["capacity"] ?? ""),
                spots: Int(fields["spots"] ?? ""))
            let record = try await rooms.store.create(
                RoomRecord(
                    id: checked.id, name: checked.name, building: checked.building, capacity: checked.capacity,
                    seats: checked.spots, photo: nil))
            await rooms.changed(record.id, spots: record.spots, .created)
            return record
        }
    }

    func update(_ request: Request, room: RoomRecord) async throws -> Response {
        try await save(request, room: room) { fields in
            let record = try await rooms.update(
                room.id, name: fields["name"] ?? "", building: fields["building"] ?? "",
                capacity: Int(fields["capacity"] ?? "") ?? 0, spots: Int(fields["spots"] ?? "") ?? -1)
            await rooms.changed(record.id, spots: record.spots, .updated)
            return record
        }
    }

    /// Saves the form's fields with `apply`: back to the room's page saying so, or the form drawn again with each
    /// fault beside its field (a name another room has is a conflict, said beside the name).
    private func save(
        _ request: Request, room: RoomRecord?, _ apply: ([String: String]) async throws -> RoomRecord
    ) async throws -> Response {
        var request = request
        let fields = try await request.formFields()
        do {
            let record = try await apply(fields)
            return .seeOther("/admin/rooms/\(record.id)?saved=1")
        } catch let failure as ValidationFailure {
            return try await form(request, room: room, submitted: (fields, failure.errors))
        } catch let problem as Problem where problem.status == .conflict {
            return try await form(request, room: room, submitted: (fields, [FieldError(field: "name", message: "")]))
        }
    }

    /// Removes the room once the admin has ticked that they mean it (the box is required; a form sent without it
    /// is drawn again, asking).
    func remove(_ request: Request, room: RoomRecord) async throws -> Response {
        var request = request
        guard try await request.formFields()["confirm"] == "1" else {
            return try await form(
                request, room: room, submitted: (["confirm": ""], [FieldError(field: "confirm", message: "")]))
        }
        _ = try await rooms.remove(room.id)
        return .seeOther("/admin/rooms?removed=1")
    }

    // MARK: The page

    func form(
        _ request: Request, room: RoomRecord?, submitted: (fields: [String: String], errors: [FieldError])? = nil
    ) async throws -> Response {
        let buildings = try await rooms.policies.buildings().map(\.name)
        var booked = 0
        if let room { booked = try await rooms.reservations.upcomingCount(roomId: room.id) }
        let saved = request.uri.queryParameters.get("saved") == "1" && submitted == nil
        return try web.page(
            request, template: "room-admin", status: submitted == nil ? .ok : .unprocessableContent,
            title: { t in room.map { t("rooms.admin.editTitle", ["name": $0.name]) } ?? t("rooms.admin.newTitle") }
        ) { t in
            var messages: [String: String] = [:]
            for error in submitted?.errors ?? [] {
                // The id is made from the name: its fault is the name's. A name another room has comes back as a
                // conflict, with no message of its own.
                let field = error.field == "id" ? "name" : error.field
                if messages[field] == nil {
                    messages[field] =
                        !error.message.isEmpty
                        ? error.message
                        : field == "confirm" ? t("rooms.admin.removeUnsure") : t("rooms.admin.nameTaken")
                }
            }
            let values =
                submitted?.fields.filter { $0.key != "csrf" && $0.key != "confirm" }.nilIfEmpty
                ?? room.map {
                    [
                        "name": $0.name, "building": $0.building, "capacity": String($0.capacity),
                        "spots": String($0.seats),
                    ]
                } ?? [:]
            return RoomAdminPage(
                heading: room.map { t("rooms.admin.editTitle", ["name": $0.name]) } ?? t("rooms.admin.newTitle"),
                action: room.map { "/admin/rooms/\($0.id)" } ?? "/admin/rooms/new",
                roomId: room?.id, photo: room?.photo, buildings: buildings,
                saved: saved ? t("rooms.admin.roomSaved") : nil, hasErrors: submitted != nil,
                removeText: room.map { _ in t("rooms.admin.removeAsk", count: booked) },
                form: FormValues(values: values, editing: room != nil, errors: messages))
        }
    }
}

/// `/admin/rooms/new` and `/admin/rooms/{room}`.
struct RoomAdminPage {
    let heading: String
    let action: String
    /// The room being changed (nil: a new one).
    let roomId: String?
    let photo: String?
    /// The buildings rooms are in already, offered as the building's name is typed.
    let buildings: [String]
    let saved: String?
    let hasErrors: Bool
    /// "Removing it cancels its 3 bookings to come."
    let removeText: String?
    let form: FormValues
}

extension Dictionary {
    /// Nil when empty: a form sent with none of the room's fields (removing it) shows the room as it is.
    fileprivate var nilIfEmpty: Self? { isEmpty ? nil : self }
}
