import Foundation
import QuadCore
import QuadPlatform
import SQLKit

extension Rooms {
    /// An admin's change to a room (`RoomStore.update`). A new name reaches everyone with a booking or a series there
    /// still to come: a message whose invitation, the next revision of theirs, puts the new name in their calendar.
    func update(
        _ id: String, name: String?, building: String?, capacity: Int?, spots: Int?, hours: OpeningHours?? = nil
    ) async throws -> RoomRecord {
        let campus = await reservations.campusClock()
        let record = try await store.update(
            id, name: name, building: building, capacity: capacity, spots: spots, hours: hours
        ) { [reservations] sql in
            try await reservations.mailRenamed(id, sql, campus: campus)
        }
        reservations.mail.wake()
        return record
    }
}

extension ReservationStore {
    /// Inside the rename's transaction: one message per booking or series of the room still to come.
    func mailRenamed(_ roomId: String, _ sql: any SQLDatabase, campus: CampusClock) async throws {
        let now = SlotRange.slot(containing: clock.now)
        var told = Set<String>()
        for reservation in try await Self.select(sql, "room_id = \(bind: roomId) AND end_slot > \(bind: now)")
        where told.insert(reservation.seriesId ?? reservation.id).inserted {
            guard let to = try await mail.recipient(reservation.owner, for: .changed, sql) else { continue }
            let after = try await Self.entry(of: reservation, sql, campus: campus)
            _ = try await mailBooking(.roomRenamed, to: to.username, before: nil, after: after, sql, campus: campus)
        }
    }
}
