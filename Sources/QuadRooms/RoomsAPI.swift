import Foundation
import OpenAPIRuntime
import QuadCore
import QuadPlatform

/// Rooms' operations of the generated interface. The whole `GET /api/rooms` is answered from what is kept
/// (`KeptAnswerMiddleware`, from `Rooms.keptAnswers`).
struct RoomsOperations: APIProtocol {
    let rooms: Rooms
    var platform: Platform { rooms.platform }
}

extension RoomsOperations {
    /// The whole list is answered from what is kept (`Rooms.keptAnswers`); a filtered one here.
    func listRooms(_ input: Operations.ListRooms.Input) async throws -> Operations.ListRooms.Output {
        if let minSpots = input.query.minSpots, minSpots < 0 {
            throw Problem(
                .badRequest, type: "invalid-parameter", title: "Invalid parameter",
                detail: "minSpots must be a whole number ≥ 0, not \(minSpots).",
                errors: [FieldError(field: "minSpots", message: "A whole number ≥ 0.")])
        }
        let all = try await rooms.kept.rooms().map { $0.room(baseURL: RequestInfo.current.baseURL) }
        let shown = Room.filtered(all, minSpots: input.query.minSpots, building: input.query.building)
        return .ok(.init(body: .json(.init(rooms: shown.map { .init($0) }))))
    }

    func getRoom(_ input: Operations.GetRoom.Input) async throws -> Operations.GetRoom.Output {
        guard let record = try await rooms.store.find(input.path.roomId) else {
            throw Problem.notFound("There is no room \(input.path.roomId).")
        }
        return .ok(.init(body: .json(.init(record.room(baseURL: RequestInfo.current.baseURL)))))
    }

    func createRoom(_ input: Operations.CreateRoom.Input) async throws -> Operations.CreateRoom.Output {
        guard case .json(let body) = input.body else { throw Problem.malformedBody("Send the room as JSON.") }
        let checked = try RoomValidation.room(
            id: body.id, name: body.name, building: body.building, capacity: body.capacity, spots: body.spots)
        let record = try await rooms.store.create(
            RoomRecord(
                id: checked.id, name: checked.name, building: checked.building, capacity: checked.capacity,
                seats: checked.spots, photo: nil))
        await rooms.changed(record.id, spots: record.spots, .created)
        return .created(.init(body: .json(.init(record.room(baseURL: RequestInfo.current.baseURL)))))
    }

    func updateRoom(_ input: Operations.UpdateRoom.Input) async throws -> Operations.UpdateRoom.Output {
        guard case .json(let body) = input.body else { throw Problem.malformedBody("Send the changes as JSON.") }
        let hours: OpeningHours?? = try body.hours.map { $0.isEmpty ? nil : try OpeningHours($0) }
        let record = try await rooms.update(
            input.path.roomId, name: body.name, building: body.building, capacity: body.capacity, spots: body.spots,
            hours: hours)
        await rooms.changed(record.id, spots: record.spots, .updated)
        return .ok(.init(body: .json(.init(record.room(baseURL: RequestInfo.current.baseURL)))))
    }

    func deleteRoom(_ input: Operations.DeleteRoom.Input) async throws -> Operations.DeleteRoom.Output {
        guard try await rooms.remove(input.path.roomId) else {
            throw Problem.notFound("There is no room \(input.path.roomId).")
        }
        return .noContent(.init())
    }

    func setRoomPhoto(_ input: Operations.SetRoomPhoto.Input) async throws -> Operations.SetRoomPhoto.Output {
        guard try await rooms.store.find(input.path.roomId) != nil else {
            throw Problem.notFound("There is no room \(input.path.roomId).")
        }
        let body: HTTPBody =
            switch input.body {
            case .jpeg(let body), .png(let body), .imageWebp(let body), .binary(let body): body
            }
        let image = try await platform.images.store(try await ImageStore.collect(body))
        let record = try await rooms.store.setPhoto(input.path.roomId, path: image.path)
        await rooms.changed(record.id, spots: record.spots, .updated)
        return .ok(.init(body: .json(.init(record.room(baseURL: RequestInfo.current.baseURL)))))
    }

    /// The booking's hold: seats (the default) or the whole room, which takes no number of seats.
    static func hold(_ body: Components.Schemas.BookingInput) throws -> Hold {
        let hold = body.hold.flatMap { Hold(rawValue: $0.rawValue) } ?? .seat
        if hold == .room, let seats = body.seats, seats != 1 {
            throw ValidationFailure(field: "seats", message: "The whole room is booked without a number of seats.")
        }
        return hold
    }

    func bookRoom(_ input: Operations.BookRoom.Input) async throws -> Operations.BookRoom.Output {
        let person = try Access.person()
        guard case .json(let body) = input.body else { throw Problem.malformedBody("Send the booking as JSON.") }
        let roomId = input.path.roomId
        // The contract's `null` for the hold is no hold (its generated enum reads it as an empty string).
        if body.hold == ._empty_ { throw ValidationFailure(field: "hold", message: "seat or room.") }
        guard let start = body.start else {
            if body.minutes != nil || body._repeat != nil || body.hold == .room || (body.seats ?? 1) != 1 {
                throw ValidationFailure(field: "start", message: "Say when it starts.")
            }
            let (booking, spots) = try await rooms.book(roomId: roomId, owner: person)
            return .created(.init(body: .json(.init(booking: .init(booking), spots: spots))))
        }
        guard let minutes = body.minutes else {
            throw ValidationFailure(field: "minutes", message: "Say how long, in minutes.")
        }
        let booked = try await rooms.book(
            roomId: roomId, owner: person, start: start, minutes: minutes,
            hold: try Self.hold(body), seats: body.seats ?? 1,
            recurrence: try body._repeat.map(Recurrence.init))
        return .created(
            .init(
                body: .json(
                    .init(
                        booking: .init(booked.booking), spots: booked.spots,
                        series: booked.series.map { series in
                            .init(
                                id: series.id,
                                outcomes: series.outcomes.map {
                                    .init(
                                        date: $0.date.description,
                                        result: .init(rawValue: $0.result.rawValue) ?? .unavailable,
                                        reason: $0.reason)
                                })
                        }))))
    }

    func cancelBooking(_ input: Operations.CancelBooking.Input) async throws -> Operations.CancelBooking.Output {
        let person = try Access.person()
        let (roomId, bookingId) = (input.path.roomId, input.path.bookingId)
        guard try await rooms.cancel(bookingId, roomId: roomId, by: person, following: input.query.following ?? false)
        else { throw Problem.notFound("There is no such booking in room \(roomId).") }
        return .noContent(.init())
    }

    func checkInBooking(_ input: Operations.CheckInBooking.Input) async throws -> Operations.CheckInBooking.Output {
        let person = try Access.person()
        guard
            let reservation = try await rooms.checkIn(
                input.path.bookingId, roomId: input.path.roomId, owner: person.username)
        else { throw Problem.notFound("You have no such booking in room \(input.path.roomId).") }
        return .ok(.init(body: .json(.init(reservation.booking))))
    }

    /// The original apps' booking, through a personal app link (or any member's credentials): a seat for them from
    /// now to the end of the opening period.
    func legacyBook(_ input: Operations.LegacyBook.Input) async throws -> Operations.LegacyBook.Output {
        let person = try Access.person()
        guard case .json(let body) = input.body else {
            throw Problem.malformedBody("Send {\"name\": \"<room name>\"}.")
        }
        guard let roomId = try await rooms.store.id(forName: body.name) else {
            return .notFound(.init(body: .json(.init(success: false))))
        }
        do {
            _ = try await rooms.book(roomId: roomId, owner: person)
            return .ok(.init(body: .json(.init(success: true))))
        } catch let problem as Problem where problem.status == .conflict {
            return .conflict(.init(body: .json(.init(success: false))))
        }
    }
}

extension Recurrence {
    /// A series as the API takes it: every day or week until a date, but for the dates skipped.
    init(_ input: Components.Schemas.BookingInput.RepeatPayload) throws(ValidationFailure) {
        guard let until = LocalDate(input.until) else {
            throw ValidationFailure(field: "repeat.until", message: "A date such as 2026-12-24.")
        }
        var skipped: Set<LocalDate> = []
        let skip = input.skip ?? []
        guard skip.count <= Recurrence.maxSkipped else {
            throw ValidationFailure(
                field: "repeat.skip", message: "Skip at most \(Recurrence.maxSkipped) dates (\(skip.count) were sent).")
        }
        for text in skip {
            guard let date = LocalDate(text) else {
                throw ValidationFailure(field: "repeat.skip", message: "\"\(text)\" is not a date such as 2026-12-24.")
            }
            skipped.insert(date)
        }
        self.init(frequency: input.every == .day ? .daily : .weekly, until: until, skipped: skipped)
    }
}

extension Components.Schemas.Room {
    init(_ room: Room) {
        self.init(
            id: room.id, name: room.name, building: room.building, capacity: room.capacity, spots: room.spots,
            seats: room.seats, thumbnail: room.thumbnail,
            availability: .init(rawValue: room.availability.rawValue) ?? .bookable)
    }
}

extension Components.Schemas.Booking {
    init(_ booking: Booking) {
        self.init(
            id: booking.id, roomId: booking.roomId, person: booking.person,
            createdAt: Timestamp.date(booking.createdAt) ?? Date(timeIntervalSince1970: 0), start: booking.start,
            end: booking.end, hold: booking.hold.flatMap { .init(rawValue: $0.rawValue) }, seats: booking.seats,
            seriesId: booking.seriesId,
            checkInBy: booking.checkInBy, checkedIn: booking.checkedIn)
    }
}

extension RoomsOperations {
    /// The bookings without time first (held until cancelled), then those in time not yet over, soonest first. (The
    /// list is answered from what is kept, `KeptMyBookings`; here when it could not be.)
    func listMyBookings(_ input: Operations.ListMyBookings.Input) async throws -> Operations.ListMyBookings.Output {
        .ok(.init(body: .json(.init(try await rooms.bookings(of: try Access.person())))))
    }
}

extension Components.Schemas.BookingList {
    init(_ all: [(booking: Booking, roomName: String)]) {
        self.init(
            bookings: all.map { booking, roomName in
                .init(
                    id: booking.id, roomId: booking.roomId, roomName: roomName,
                    createdAt: Timestamp.date(booking.createdAt) ?? Date(timeIntervalSince1970: 0),
                    start: booking.start, end: booking.end,
                    hold: booking.hold.flatMap { .init(rawValue: $0.rawValue) }, seats: booking.seats,
                    seriesId: booking.seriesId, checkInBy: booking.checkInBy, checkedIn: booking.checkedIn)
            })
    }
}
