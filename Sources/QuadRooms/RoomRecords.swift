import Foundation
import QuadCore
import QuadPlatform
import SQLKit

/// Rooms as a CSV file (`RecordSet`): each value goes through the validators of `POST /api/rooms` and
/// `PATCH /api/rooms/{roomId}`, and each change through the store functions they use (a room's seats never below
/// those booked ahead; a new name told to whoever has a booking there). A row is matched by id.
struct RoomRecords: RecordSet {
    let rooms: Rooms

    let kind = "rooms"
    let columns = ["id", "name", "building", "capacity", "spots", "hours"]
    let required = ["id", "name", "building", "capacity"]

    func rows() async throws -> [[String]] {
        try await rooms.store.settings().map { room, hours in
            [room.id, room.name, room.building, String(room.capacity), String(room.seats), hours ?? ""]
        }
    }

    /// A row as checked. `spots`: nil where the file has no such column; `hours`: nil likewise, `.some(nil)` for its
    /// building's hours.
    struct Row {
        var row: RecordRow
        var room: RoomRecord
        var spotsGiven: Bool
        var hours: OpeningHours??
    }

    func apply(_ rows: [RecordRow], errors: RowErrors) async throws -> ImportSummary {
        var errors = errors
        var checked: [Row] = []
        var ids: [String: Int] = [:]
        var names: [String: Int] = [:]
        for row in rows {
            let capacity = errors.check(row, "capacity") { try Self.number(row["capacity"], field: "capacity") }
            let spots = errors.check(row, "spots") { () throws -> Int? in
                guard let text = row["spots"], !text.isEmpty else { return nil }
                return try Self.number(text, field: "spots")
            }
            let hours = errors.check(row, "hours") { () throws -> OpeningHours?? in
                try row["hours"].map { $0.isEmpty ? nil : try OpeningHours($0) }
            }
            let id = row["id"] ?? ""
            guard !id.isEmpty else {
                errors.add(row, field: "id", "Give the room's id: lowercase letters, digits and dashes.")
                continue
            }
            guard let capacity, let spots, let hours else { continue }
            let room = errors.check(row, "") {
                try RoomValidation.room(
                    id: id, name: row["name"], building: row["building"], capacity: capacity,
                    spots: spots ?? capacity)
            }
            guard let room else { continue }
            if let first = ids.updateValue(row.number, forKey: room.id) {
                errors.add(row, field: "id", "The room \(room.id) is on row \(first) too.")
            }
            if let first = names.updateValue(row.number, forKey: room.name.lowercased()) {
                errors.add(row, field: "name", "A room called \(room.name) is on row \(first) too.")
            }
            checked.append(
                Row(
                    row: row,
                    room: RoomRecord(
                        id: room.id, name: room.name, building: room.building, capacity: room.capacity,
                        seats: room.spots),
                    spotsGiven: row["spots"] != nil, hours: hours))
        }
        try errors.throwIfAny()
        return try await rooms.importRooms(checked)
    }

    /// A whole number of seats, as the file writes it.
    static func number(_ text: String?, field: String) throws -> Int {
        guard let text, let number = Int(text.trimmingCharacters(in: .whitespaces)) else {
            throw ValidationFailure(field: field, message: "Give a whole number.")
        }
        return number
    }
}

extension Rooms {
    /// Applies checked rows in one transaction: a new room (`RoomStore.insert`), or the changes to one Quad has
    /// (`RoomStore.change`); each room added or changed is announced once it is committed.
    func importRooms(_ rows: [RoomRecords.Row]) async throws -> ImportSummary {
        let current = Dictionary(try await store.settings().map { ($0.room.id, $0) }) { first, _ in first }
        let campus = await reservations.campusClock()
        let now = platform.clock.now
        let (summary, touched, renamed) = try await platform.database.transaction { sql in
            var summary = ImportSummary()
            var touched: [(String, Change.Kind)] = []
            var renamed = false
            for item in rows {
                let room = item.room
                guard let (held, hours) = current[room.id] else {
                    try await RowErrors.at(item.row, field: "name") {
                        try await self.store.insert(room, hours: item.hours ?? nil, sql)
                    }
                    summary.added += 1
                    touched.append((room.id, .created))
                    continue
                }
                let wantedHours = item.hours.map { $0?.description }
                let same =
                    held.name == room.name && held.building == room.building && held.capacity == room.capacity
                    && (!item.spotsGiven || held.seats == room.seats) && (wantedHours.map { $0 == hours } ?? true)
                if same {
                    summary.unchanged += 1
                    continue
                }
                let reservations = self.reservations
                renamed =
                    try await RowErrors.at(item.row, field: "spots") {
                        try await self.store.change(
                            room.id, name: room.name, building: room.building, capacity: room.capacity,
                            spots: item.spotsGiven ? room.seats : nil, hours: item.hours,
                            renamed: { sql in try await reservations.mailRenamed(room.id, sql, campus: campus) }, sql,
                            now: now)
                    } || renamed
                summary.changed += 1
                touched.append((room.id, .updated))
            }
            return (summary, touched, renamed)
        }
        if renamed { reservations.mail.wake() }
        let spots = Dictionary(try await store.all().map { ($0.id, $0.spots) }) { first, _ in first }
        for (id, kind) in touched { await changed(id, spots: spots[id], kind) }
        return summary
    }
}

/// Everyone's room bookings as one iCalendar file (`CalendarExport`), for an admin (`quad export bookings`).
struct BookingsCalendar: CalendarExport {
    let rooms: Rooms

    let kind = "bookings"

    func calendar() async throws -> String {
        let campus = await rooms.reservations.campusClock()
        let entries = try await rooms.reservations.calendars(where: "1 = 1", campus: campus)
        return ICalendar.bookings(
            entries, zone: campus.timeZone, calendarName: "Quad bookings", stamp: rooms.platform.clock.now,
            domain: "timetable.quad")
    }
}
