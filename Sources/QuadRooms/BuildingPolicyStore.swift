import Foundation
import QuadCore
import QuadPlatform
import SQLKit

/// Each building's rules for booking its rooms in time (`BookingPolicy`), in table `room_buildings`, and a room's own
/// opening hours where they differ from its building's (`rooms.hours`). A building nobody set up has
/// `BookingPolicy.default`.
final class BuildingPolicyStore: Sendable {
    let database: Database

    init(database: Database) {
        self.database = database
    }

    static let migration = Migration(
        id: 102, name: "buildings' booking rules",
        statements: [
            """
            CREATE TABLE room_buildings (
                name_key TEXT PRIMARY KEY, name TEXT NOT NULL, hours TEXT NOT NULL,
                horizon_days INTEGER NOT NULL CHECK (horizon_days BETWEEN 1 AND 365),
                max_minutes INTEGER NOT NULL CHECK (max_minutes BETWEEN 15 AND 1440),
                check_in_minutes INTEGER CHECK (check_in_minutes BETWEEN 5 AND 240))
            """,
            "ALTER TABLE rooms ADD COLUMN hours TEXT",
        ])

    /// The rules for booking `roomId`: its building's, with its own hours where it has them. Nil: no such room.
    func policy(forRoom roomId: String) async throws -> BookingPolicy? {
        try await database.withConnection { sql in
            guard
                let row = try await sql.raw(
                    """
                    SELECT r.hours AS room_hours, b.hours, b.horizon_days, b.max_minutes, b.check_in_minutes
                    FROM rooms r LEFT JOIN room_buildings b ON b.name_key = LOWER(r.building)
                    WHERE r.id = \(bind: roomId)
                    """
                ).first()
            else { return nil }
            return try Self.policy(row)
        }
    }

    /// Every room's rules, by room id.
    func policies() async throws -> [String: BookingPolicy] {
        try await database.withConnection { sql in
            try await sql.raw(
                """
                SELECT r.id, r.hours AS room_hours, b.hours, b.horizon_days, b.max_minutes, b.check_in_minutes
                FROM rooms r LEFT JOIN room_buildings b ON b.name_key = LOWER(r.building)
                """
            ).all().reduce(into: [:]) { $0[try $1.decode(column: "id", as: String.self)] = try Self.policy($1) }
        }
    }

    /// Every building the rooms name, with its rules (`BookingPolicy.default` for one nobody set up) and its rooms'
    /// ids, by name.
    func buildings() async throws -> [(name: String, policy: BookingPolicy, rooms: [String])] {
        try await database.withConnection { sql in
            let set = try await sql.raw(
                "SELECT name_key, name, hours, horizon_days, max_minutes, check_in_minutes FROM room_buildings"
            ).all().reduce(into: [String: (String, BookingPolicy)]()) {
                $0[try $1.decode(column: "name_key", as: String.self)] = (
                    try $1.decode(column: "name", as: String.self), try Self.policy($1)
                )
            }
            let rooms = try await sql.raw("SELECT id, building FROM rooms ORDER BY id").all().map {
                (try $0.decode(column: "building", as: String.self), try $0.decode(column: "id", as: String.self))
            }
            let byBuilding = Dictionary(grouping: rooms, by: { $0.0.lowercased() })
            return byBuilding.map { key, rooms in
                (set[key]?.0 ?? rooms[0].0, set[key]?.1 ?? .default, rooms.map(\.1))
            }.sorted { $0.name.lowercased() < $1.name.lowercased() }
        }
    }

    /// A row of `room_buildings` (or of rooms joined to it) as rules: the building's, else the default; a room's
    /// own hours (`room_hours`) over them.
    private static func policy(_ row: any SQLRow) throws -> BookingPolicy {
        var policy = BookingPolicy.default
        if let hours = try row.decode(column: "hours", as: String?.self) {
            policy = BookingPolicy(
                hours: try Self.hours(hours), horizonDays: try row.decode(column: "horizon_days", as: Int.self),
                maxMinutes: try row.decode(column: "max_minutes", as: Int.self),
                checkInMinutes: try row.decode(column: "check_in_minutes", as: Int?.self))
        }
        if row.contains(column: "room_hours"), let own = try row.decode(column: "room_hours", as: String?.self) {
            policy.hours = try Self.hours(own)
        }
        return policy
    }

    /// Sets `building`'s rules (its name as the rooms give it, matched without case).
    func set(_ policy: BookingPolicy, forBuilding building: String) async throws {
        try await database.withConnection { sql in
            try await sql.raw(
                """
                INSERT INTO room_buildings (name_key, name, hours, horizon_days, max_minutes, check_in_minutes)
                VALUES (\(bind: building.lowercased()), \(bind: building), \(bind: policy.hours.description),
                        \(bind: policy.horizonDays), \(bind: policy.maxMinutes), \(bind: policy.checkInMinutes))
                ON CONFLICT (name_key) DO UPDATE SET name = excluded.name, hours = excluded.hours,
                    horizon_days = excluded.horizon_days, max_minutes = excluded.max_minutes,
                    check_in_minutes = excluded.check_in_minutes
                """
            ).run()
        }
    }

    /// Gives `roomId` hours of its own, or (nil) its building's again. False: no such room.
    func setHours(_ hours: OpeningHours?, forRoom roomId: String) async throws -> Bool {
        try await database.withConnection { sql in
            try await sql.raw(
                "UPDATE rooms SET hours = \(bind: hours?.description) WHERE id = \(bind: roomId) RETURNING id"
            ).first() != nil
        }
    }

    /// Stored hours were checked when written: text that no longer reads is the store's fault, said as such.
    static func hours(_ text: String) throws -> OpeningHours {
        do {
            return try OpeningHours(text)
        } catch {
            throw StoreCorruption(description: "Stored opening hours \"\(text)\" do not read: \(error.errors)")
        }
    }
}
