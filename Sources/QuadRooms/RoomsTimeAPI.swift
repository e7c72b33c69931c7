import Foundation
import OpenAPIRuntime
import QuadCore
import QuadPlatform

/// Rooms' operations about time: a room's day, finding a room, and the buildings' rules.
extension RoomsOperations {
    func getRoomDay(_ input: Operations.GetRoomDay.Input) async throws -> Operations.GetRoomDay.Output {
        let roomId = input.path.roomId
        let campus = await rooms.store.campusClock()
        let now = platform.clock.now
        let date =
            try input.query.date.map { text in
                guard let date = LocalDate(text) else {
                    throw ValidationFailure(field: "date", message: "A date such as 2026-12-24.")
                }
                return date
            } ?? campus.date(of: now)
        let policy = try await rooms.policy(roomId)
        guard
            let occupancy = try await rooms.reservations.occupancies(
                during: RoomDay.span(of: date, clock: campus), only: roomId)[roomId]
        else { throw BookingRefusal.roomNotFound(roomId) }
        let day = RoomDay(date: date, policy: policy, occupancy: occupancy, clock: campus, now: now)
        return .ok(
            .init(
                body: .json(
                    .init(
                        roomId: roomId, date: date.description, hours: day.periods.map(\.description),
                        slots: day.slots.map {
                            .init(
                                start: $0.range.start, end: $0.range.end, freeSeats: $0.freeSeats, empty: $0.empty,
                                bookable: $0.bookable)
                        }))))
    }

    func findRooms(_ input: Operations.FindRooms.Input) async throws -> Operations.FindRooms.Output {
        let people = input.query.people ?? 1
        guard (1...10_000).contains(people) else {
            throw ValidationFailure(field: "people", message: "From 1 to 10,000 people.")
        }
        guard (15...1440).contains(input.query.minutes), input.query.minutes % 15 == 0,
            let lower = SlotRange.slot(at: input.query.start),
            let range = SlotRange(lower: lower, upper: lower + input.query.minutes / 15)
        else {
            throw ValidationFailure(
                field: "start", message: "Start on the quarter hour, for whole quarter hours up to a day.")
        }
        let found = try await rooms.find(range: range, people: people)
        let choice = { (room: RoomFinder.Choice) -> Components.Schemas.FoundRoom in
            .init(
                id: room.id, name: room.name, freeSeats: room.freeSeats, nextFree: room.nextFree,
                hold: room.hold.flatMap { .init(rawValue: $0.rawValue) })
        }
        return .ok(.init(body: .json(.init(fitting: found.fitting.map(choice), others: found.others.map(choice)))))
    }

    func listBuildings(_ input: Operations.ListBuildings.Input) async throws -> Operations.ListBuildings.Output {
        let buildings = try await rooms.policies.buildings()
        let zone = await rooms.store.campusClock().timeZone.identifier
        return .ok(
            .init(
                body: .json(
                    .init(buildings: buildings.map { .init($0.name, $0.policy, rooms: $0.rooms) }, timeZone: zone))))
    }

    func setBuildingRules(
        _ input: Operations.SetBuildingRules.Input
    ) async throws -> Operations.SetBuildingRules.Output {
        guard case .json(let body) = input.body else { throw Problem.malformedBody("Send the rules as JSON.") }
        let policy = try BookingPolicy.validated(
            hours: body.hours, horizonDays: body.horizonDays, maxMinutes: body.maxMinutes,
            checkInMinutes: body.checkInMinutes)
        let name = input.path.building
        guard
            let building = try await rooms.policies.buildings().first(where: {
                $0.name.lowercased() == name.lowercased()
            })
        else { throw Problem.notFound("No room is in a building called \(name).") }
        try await rooms.setRules(policy, forBuilding: building.name)
        return .ok(.init(body: .json(.init(building.name, policy, rooms: building.rooms))))
    }
}

extension Components.Schemas.Building {
    init(_ name: String, _ policy: BookingPolicy, rooms: [String]) {
        self.init(
            name: name, hours: policy.hours.description, horizonDays: policy.horizonDays,
            maxMinutes: policy.maxMinutes, checkInMinutes: policy.checkInMinutes, rooms: rooms)
    }
}
