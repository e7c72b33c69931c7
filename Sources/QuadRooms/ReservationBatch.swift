import QuadCore
import QuadPlatform
import QuadWaitingLines
import SQLKit

extension ReservationStore {
    /// `reserve` for each of `intents` in turn, inside the caller's transaction (`BookingBatcher`'s), in four
    /// statements however many they are: every room's row with its free seats now and whether anyone waits for it,
    /// the bookings overlapping the times asked in each room, the people's untimed bookings there, and one insert of
    /// every booking made. Each is decided as `take` decides it, against what was read and the bookings made before it
    /// in the batch; each keeps its own answer.
    ///
    /// Why: each statement is a round trip (to SQLite's thread, where it is parsed again, or to PostgreSQL), and the
    /// storm in `Benchmarks/run` spent most of the writer's time in those, five per booking.
    ///
    /// A room someone waits for takes `reserve`'s way, one booking at a time: its lines are settled and its offers
    /// counted first. Its bookings never meet the others', which are for other rooms.
    func reserveAll(
        _ intents: [ReservationIntent], _ sql: any SQLDatabase, campus: CampusClock
    ) async throws -> [Result<Reserved, any Error>] {
        var roomIds: [String] = []
        for intent in intents where !roomIds.contains(intent.roomId) { roomIds.append(intent.roomId) }
        var rooms: [String: (now: SeatsNow, names: (String, String), lines: Bool)] = [:]
        let lines = WaitingLists.anyPlace(.room, thing: SQLColumn("id", table: "r"))
        // PostgreSQL: each room's row locked until the commit (as `lockForBooking` locks one), in the rooms' order, so
        // that two instances' batches never wait for each other's rooms in turn.
        let lock: SQLQueryString = database.engine == .postgres ? " ORDER BY r.id FOR UPDATE OF r" : ""
        for (record, now, row) in try await RoomStore.rows(
            sql, at: clock.now, campus: campus, extra: ", \(lines) AS lines",
            where: "WHERE r.id IN (\(binds: roomIds))\(lock)"
        ) {
            rooms[record.id] = (now, (record.name, record.building), try row.decode(column: "lines", as: Int.self) != 0)
        }
        let calm = intents.filter { rooms[$0.roomId]?.lines == false }
        var held = try await overlapping(calm, sql)
        let standing = try await standing(calm, sql)

        var made: [Reservation] = []
        var results: [Result<Reserved, any Error>] = []
        for intent in intents {
            do {
                guard var room = rooms[intent.roomId] else { throw BookingRefusal.roomNotFound(intent.roomId) }
                if room.lines {
                    results.append(.success(try await reserve(intent, sql, campus: campus)))
                    continue
                }
                let seats = room.now.seats - room.now.standing
                try Self.checkSeats(intent, seats: seats)
                let reservation = try decide(
                    intent, seats: seats,
                    held: held[intent.roomId, default: []].filter { $0.range.overlaps(intent.range) },
                    standing: standing.contains(Pair(room: intent.roomId, owner: intent.owner)), offers: [])
                held[intent.roomId, default: []].append(reservation)
                room.now.add(reservation)
                rooms[intent.roomId] = room
                made.append(reservation)
                results.append(.success((reservation, room.now.free, WaitingChanges())))
            } catch let refusal as Problem {
                results.append(.failure(refusal))
            } catch let refusal as ValidationFailure {
                results.append(.failure(refusal))  // asked for more seats than the room has
            }
        }
        try await Self.insert(made, sql)
        for (index, result) in results.enumerated() {
            guard case .success(var reserved) = result, rooms[reserved.reservation.roomId]?.lines == false,
                try await mailBooked(
                    reserved.reservation,
                    names: [reserved.reservation.roomId: rooms[reserved.reservation.roomId]!.names],
                    sql, campus: campus)
            else { continue }
            reserved.waiting.mailed = true
            results[index] = .success(reserved)
        }
        return results
    }

    private struct Pair: Hashable {
        let room: String
        let owner: String
    }

    /// Each room's bookings overlapping the times `intents` ask there (read from the earliest start to the latest end).
    private func overlapping(
        _ intents: [ReservationIntent], _ sql: any SQLDatabase
    ) async throws -> [String: [Reservation]] {
        guard !intents.isEmpty else { return [:] }
        var spans: [(room: String, lower: Int, upper: Int)] = []
        for intent in intents {
            if let at = spans.firstIndex(where: { $0.room == intent.roomId }) {
                spans[at].lower = min(spans[at].lower, intent.range.lower)
                spans[at].upper = max(spans[at].upper, intent.range.upper)
            } else {
                spans.append((intent.roomId, intent.range.lower, intent.range.upper))
            }
        }
        let condition = spans.map { span -> SQLQueryString in
            "(room_id = \(bind: span.room) AND end_slot > \(bind: span.lower) AND first_slot < \(bind: span.upper))"
        }.joined(separator: " OR ")
        return Dictionary(grouping: try await Self.select(sql, condition), by: \.roomId)
    }

    /// Which of `intents`' people hold an untimed booking in the room they ask for.
    private func standing(_ intents: [ReservationIntent], _ sql: any SQLDatabase) async throws -> Set<Pair> {
        guard !intents.isEmpty else { return [] }
        let rows = try await sql.raw(
            """
            SELECT room_id, owner FROM room_bookings
            WHERE room_id IN (\(binds: Array(Set(intents.map(\.roomId))))) AND owner IN (\(binds: Array(Set(intents.map(\.owner)))))
            """
        ).all()
        return Set(
            try rows.map {
                Pair(
                    room: try $0.decode(column: "room_id", as: String.self),
                    owner: try $0.decode(column: "owner", as: String.self))
            })
    }
}
