import Testing

@testable import QuadCore

@Suite struct RoomsTests {
    static func room(_ name: String, spots: Int, capacity: Int = 50) -> Room {
        Room(id: name.lowercased(), name: name, building: "North Hall", capacity: capacity, spots: spots)
    }

    @Test func mostFreeSpotsFirstFullRoomsLastTiesByName() {
        let rooms = [
            Self.room("Alexis", spots: 0), Self.room("Mina", spots: 39), Self.room("yana", spots: 39),
            Self.room("Helmold", spots: 86), Self.room("Bea", spots: 0), Self.room("ljerka", spots: 39),
        ]
        #expect(Room.sortedForBooking(rooms).map(\.name) == ["Helmold", "ljerka", "Mina", "yana", "Alexis", "Bea"])
    }

    @Test func availabilityStates() {
        #expect(Availability(spots: 0, capacity: 10) == .full)
        #expect(Availability(spots: 3, capacity: 100) == .runningLow)
        #expect(Availability(spots: 10, capacity: 100) == .runningLow)  // 10 %
        #expect(Availability(spots: 11, capacity: 100) == .bookable)
        #expect(Availability(spots: 4, capacity: 12) == .bookable)
        #expect(Self.room("Alexis", spots: 0).availability == .full)
    }

    @Test func filtersBySpotsAndBuilding() {
        let rooms = [
            Self.room("A", spots: 2), Self.room("B", spots: 5),
            Room(id: "c", name: "C", building: "Engineering", capacity: 9, spots: 9),
        ]
        #expect(Room.filtered(rooms, minSpots: 5, building: nil).map(\.id) == ["b", "c"])
        #expect(Room.filtered(rooms, minSpots: nil, building: "engineering").map(\.id) == ["c"])
    }

    @Test func seatsFreeOfTheSeatsOfferedInBothLanguages() {
        let english = Localizer(language: .english)
        let french = Localizer(language: .french)
        #expect(english("rooms.seatsOf", count: 42, ["seats": "43"]) == "42 of 43 seats free")
        #expect(english("rooms.seatsOf", count: 1, ["seats": "4"]) == "1 of 4 seats free")
        #expect(english("rooms.seatsOf", count: 0, ["seats": "4"]) == "No seat free of 4")
        #expect(french("rooms.seatsOf", count: 42, ["seats": "43"]) == "42 places libres sur 43")
        #expect(french("rooms.seatsOf", count: 1, ["seats": "4"]) == "1 place libre sur 4")
        #expect(french("rooms.seatsOf", count: 0, ["seats": "4"]) == "Aucune place libre sur 4")
        #expect(french("rooms.capacity", count: 0) == "Accueille 0 personne")  // 0 is singular in French
    }

    @Test func personNamesAreValidated() throws {
        #expect(try RoomValidation.person("  Ada Lovelace ") == "Ada Lovelace")
        #expect(throws: ValidationFailure(field: "person", message: "Say who the spot is for.")) {
            try RoomValidation.person("   ")
        }
        #expect(throws: ValidationFailure.self) { try RoomValidation.person(String(repeating: "a", count: 101)) }
        #expect(throws: ValidationFailure.self) { try RoomValidation.person("Ada\u{7}") }
    }

    @Test func roomFieldsNameEveryFieldAtFault() {
        let failure = try? #require(throws: ValidationFailure.self) {
            try RoomValidation.room(id: "Bad Id", name: "", building: "", capacity: 0, spots: 3)
        }
        #expect(failure?.errors.map(\.field) == ["name", "building", "id", "capacity", "spots"])
        #expect(RoomValidation.slug("Salle Ljerka-Ève 2") == "salle-ljerka-eve-2")
    }
}
