import Foundation
import QuadCore
import QuadPlatform
import QuadWaitingLines
import SQLKit

extension WaitingRefusal {
    static let freeNow = Problem.conflict(
        "free-now", title: "Free then", detail: "There is room at that time: book it rather than wait.")
    static let seatOfferEnded = offerEnded("This seat")
}

/// A room's waiting lines, one per time slot and hold, kept by the platform's engine (`WaitingLists`) under the room's
/// lock (`ReservationStore.lock`).
extension ReservationStore {
    /// Under the room's lock: its lines brought up to now. A place whose time is over leaves; an offer not taken
    /// passes on; the first in each line gets the seat (or the room) held for them when it is free then, counting
    /// the bookings and the offers live now. An offer never outlasts the time it is for.
    func settleWaiting(_ roomId: String, seats: Int, _ sql: any SQLDatabase) async throws -> WaitingChanges {
        let now = clock.now
        return try await waiting.settle(
            .room, thing: roomId, now: now, sql, over: { ($0.roomSlot?.range.end ?? .distantPast) <= now },
            until: { $0.roomSlot?.range.end }
        ) { place, offers in
            guard let (range, hold) = place.roomSlot else { return false }
            let booked = try await Self.overlapping(roomId, range, sql)
            if booked.contains(where: { $0.owner == place.owner }) { return false }
            return Self.occupancy(seats: seats, booked: booked, offers: offers, during: range).allows(
                hold, during: range)
        }
    }

    /// Puts `owner` in the line for `range` in the room: only while it is full then (409 `free-now` otherwise).
    func wait(
        roomId: String, range: SlotRange, hold: Hold, owner: String, name: String, label: String
    ) async throws -> (place: WaitingPlace, position: Int, waiting: WaitingChanges) {
        try await database.transaction { sql in
            let seats = try await Self.lock(roomId, sql, engine: self.database.engine)
            var changes = try await self.settleWaiting(roomId, seats: seats, sql)
            let now = self.clock.now
            let booked = try await Self.overlapping(roomId, range, sql)
            if booked.contains(where: { $0.owner == owner }) { throw BookingRefusal.alreadyBooked }
            let offers = try await self.waiting.places(.room, thing: roomId, sql).filter {
                $0.holdsOffer(at: now) && $0.owner != owner
            }
            if Self.occupancy(seats: seats, booked: booked, offers: offers, during: range).allows(hold, during: range) {
                throw WaitingRefusal.freeNow
            }
            let (place, position) = try await self.waiting.join(
                .init(kind: .room, thing: roomId, detail: WaitingPlace.roomDetail(range, hold)), owner: owner,
                name: name, label: label, sql)
            changes.changed.append((place, .joined))
            return (place, position, changes)
        }
    }

    /// `place`'s owner takes the seat held for them: booked as one booking of theirs (409 `offer-ended` unless the
    /// offer is live now).
    func accept(_ place: WaitingPlace, person: String, policy: BookingPolicy) async throws -> Reserved {
        guard let (range, hold) = place.roomSlot else { throw WaitingRefusal.seatOfferEnded }
        let campus = await campusClock()
        let now = clock.now
        return try await database.transaction { sql in
            let seats = try await Self.lock(place.thing, sql, engine: self.database.engine)
            let settled = try await self.settleWaiting(place.thing, seats: seats, sql)
            guard
                try await self.waiting.places(.room, thing: place.thing, sql).contains(where: {
                    $0.id == place.id && $0.holdsOffer(at: now)
                })
            else { throw WaitingRefusal.seatOfferEnded }
            let intent = ReservationIntent(
                roomId: place.thing, range: range, hold: hold, owner: place.owner, person: person,
                checkInBy: policy.checkInDeadline(for: range, bookedAt: now))
            var (reservation, changes) = try await self.take(intent, seats: seats, sql)
            changes.merge(settled)
            if try await self.mailBooked(reservation, sql, campus: campus) { changes.mailed = true }
            return (reservation, try await Self.spots(place.thing, sql, at: now, campus: campus), changes)
        }
    }

    /// Takes `place` out of its line under the room's lock, passing its offer on.
    func removeWaiting(_ place: WaitingPlace) async throws -> WaitingChanges {
        try await database.transaction { sql in
            guard let seats = try await Self.lockIfPresent(place.thing, sql, engine: self.database.engine) else {
                try await self.waiting.delete(place.id, sql)
                return WaitingChanges()
            }
            try await self.waiting.delete(place.id, sql)
            return try await self.settleWaiting(place.thing, seats: seats, sql)
        }
    }

    /// The room's lines brought up to now, under its lock (`WaitingKeeper`).
    func settleWaiting(_ roomId: String) async throws -> WaitingChanges {
        try await database.transaction { sql in
            guard let seats = try await Self.lockIfPresent(roomId, sql, engine: self.database.engine) else {
                try await self.waiting.deleteAll(.room, thing: roomId, sql)
                return WaitingChanges()
            }
            return try await self.settleWaiting(roomId, seats: seats, sql)
        }
    }
}

extension Rooms: WaitingThings {
    /// Puts `person` in line for a seat (or the room) from `start` for `minutes`: the same rules as booking it.
    func wait(
        roomId: String, person: Person, start: Date, minutes: Int, hold: Hold
    ) async throws -> (place: WaitingPlace, position: Int) {
        let policy = try await policy(roomId)
        let campus = await store.campusClock()
        guard SlotRange.slot(at: start) != nil else {
            throw ValidationFailure(field: "start", message: "Start on the quarter hour (:00, :15, :30 or :45).")
        }
        let range = try policy.range(
            date: campus.date(of: start), start: campus.time(of: start), minutes: minutes, clock: campus,
            now: platform.clock.now)
        let name = try await store.find(roomId)?.name ?? roomId
        let label =
            "\(name)\(hold == .room ? " (whole room)" : ""), \(campus.date(of: range.start)) "
            + "\(campus.time(of: range.start))–\(campus.time(of: range.end))"
        let (place, position, changes) = try await reservations.wait(
            roomId: roomId, range: range, hold: hold, owner: person.username.lowercased(), name: person.displayName,
            label: label)
        await lines.announce(changes)
        return (place, position)
    }

    package func accept(_ place: WaitingPlace, by person: Person) async throws -> AcceptedOffer {
        let (reservation, spots, changes) = try await reservations.accept(
            place, person: person.displayName, policy: try await policy(place.thing))
        await changed(place.thing, spots: spots, .spots)
        await lines.announce(changes)
        let date = await store.campusClock().date(of: reservation.range.start)
        return AcceptedOffer(
            kind: .room, thing: place.thing, path: "/rooms/\(place.thing)?date=\(date)&booked=\(reservation.id)",
            bookingId: reservation.id)
    }

    package func remove(_ place: WaitingPlace, _ change: WaitingEvent.Change) async throws {
        var changes = try await reservations.removeWaiting(place)
        changes.changed.append((place, change))
        await lines.announce(changes)
    }

    package func settle(thing: String) async throws {
        await lines.announce(try await reservations.settleWaiting(thing))
    }
}

extension RoomsOperations {
    func joinRoomWaitingLine(
        _ input: Operations.JoinRoomWaitingLine.Input
    ) async throws -> Operations.JoinRoomWaitingLine.Output {
        let person = try Access.person()
        guard case .json(let body) = input.body else { throw Problem.malformedBody("Send the time as JSON.") }
        // The contract's `null` for the hold is no hold (its generated enum reads it as an empty string).
        if body.hold == ._empty_ { throw ValidationFailure(field: "hold", message: "seat or room.") }
        let (place, position) = try await rooms.wait(
            roomId: input.path.roomId, person: person, start: body.start, minutes: body.minutes,
            hold: body.hold.flatMap { Hold(rawValue: $0.rawValue) } ?? .seat)
        return .created(.init(body: .json(WaitingPlaceRecord(place, position: position))))
    }
}
