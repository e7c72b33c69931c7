import Foundation
import QuadCore
import QuadPlatform
import QuadWaitingLines
import SQLKit

/// Removing a room: it goes with everything booked and awaited in it, and each person whose bookings still to come or
/// places in line end with it is told (a notice on Today and `/notifications`, live on their own streams).
extension Rooms {
    /// Removes the room and tells everyone. False: there is no such room.
    func remove(_ roomId: String) async throws -> Bool {
        guard let (posted, places, mailed) = try await reservations.remove(roomId) else { return false }
        await changed(roomId, spots: nil, .deleted)
        var ended = WaitingChanges()
        ended.changed = places.map { ($0, .removed) }
        ended.mailed = mailed
        await lines.announce(ended)
        await lines.announce(posted)
        return true
    }
}

extension ReservationStore {
    /// Under the room's lock, in one transaction: a notice for each person with bookings still to come or places in
    /// line there, and a message for each booking (or series) still to come, whose invitation takes it out of their
    /// calendar; then the room and all of it deleted. Returns the notices, the places that ended and whether mail was
    /// queued, or nil when there is no such room.
    func remove(
        _ roomId: String
    ) async throws -> (notices: [(owner: String, notice: Notice)], places: [WaitingPlace], mailed: Bool)? {
        let now = SlotRange.slot(containing: clock.now)
        let campus = await campusClock()
        return try await database.transaction { sql in
            guard try await Self.lockIfPresent(roomId, sql, engine: self.database.engine) != nil,
                let name = try await sql.raw("SELECT name FROM rooms WHERE id = \(bind: roomId)").first()?.decode(
                    column: "name", as: String.self)
            else { return nil }
            let upcoming = try await Self.select(sql, "room_id = \(bind: roomId) AND end_slot > \(bind: now)")
            let untimed = try await sql.raw(
                "SELECT owner FROM room_bookings WHERE room_id = \(bind: roomId) AND owner IS NOT NULL"
            ).all().map { try $0.decode(column: "owner", as: String.self) }
            let places = try await self.waiting.places(.room, thing: roomId, sql)
            var notices: [(owner: String, notice: Notice)] = []
            let booked = Dictionary(grouping: upcoming, by: \.owner)
            for owner in Set(booked.keys).union(untimed).sorted() {
                let timed = booked[owner] ?? []
                let count = timed.count + untimed.filter { $0 == owner }.count
                // One booking says its time; several say how many (the first with a time would mislead).
                let only = count == 1 ? timed.first?.range : nil
                notices.append(
                    try await self.waiting.post(
                        .bookingsEnded, room: name, count: count, start: only?.start, end: only?.end, to: owner, sql))
            }
            for (owner, mine) in Dictionary(grouping: places, by: \.owner).sorted(by: { $0.key < $1.key }) {
                let only = mine.count == 1 ? mine[0].roomSlot?.range : nil
                notices.append(
                    try await self.waiting.post(
                        .placesEnded, room: name, count: mine.count, start: only?.start, end: only?.end, to: owner,
                        sql))
            }
            var mailed = false
            var told = Set<String>()
            for reservation in upcoming where told.insert(reservation.seriesId ?? reservation.id).inserted {
                guard let to = try await self.mail.recipient(reservation.owner, for: .cancelled, sql) else { continue }
                let before = try await Self.entry(of: reservation, sql, campus: campus)
                mailed =
                    try await self.mailBooking(
                        .roomRemoved, to: to.username, before: before, after: nil, sql, campus: campus)
                    || mailed
            }
            try await self.waiting.deleteAll(.room, thing: roomId, sql)
            try await sql.raw("DELETE FROM room_bookings WHERE room_id = \(bind: roomId)").run()
            try await sql.raw("DELETE FROM room_reservations WHERE room_id = \(bind: roomId)").run()
            try await sql.raw("DELETE FROM room_series WHERE room_id = \(bind: roomId)").run()
            try await sql.raw("DELETE FROM rooms WHERE id = \(bind: roomId)").run()
            return (notices, places, mailed)
        }
    }
}
