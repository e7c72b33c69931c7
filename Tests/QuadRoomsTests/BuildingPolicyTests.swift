import Foundation
import QuadCore
import QuadTestSupport
import Testing

@testable import QuadPlatform
@testable import QuadRooms
@testable import QuadServer

/// Each building's rules for booking in time, and a room's own hours, as stored on both engines.
@Suite struct BuildingPolicyTests {
    static func withRooms(
        _ engine: Database.Engine, _ body: (BuildingPolicyStore) async throws -> Void
    ) async throws {
        try await TestDatabase.withDatabase(engine) { database in
            try await Migrator.migrate(
                database, (Platform.migrations + Features.migrations).sorted { $0.id < $1.id }, now: TestTime.start,
                logger: TestDatabase.logger)
            let rooms = RoomStore(
                database: database, clock: ManualClock(now: TestTime.start), campus: FixedCampus.melbourne)
            for (id, building) in [("mina", "Library Wing"), ("yana", "North Hall")] {
                _ = try await rooms.create(
                    RoomRecord(id: id, name: id.capitalized, building: building, capacity: 8, seats: 8))
            }
            try await body(BuildingPolicyStore(database: database))
        }
    }

    @Test(arguments: TestDatabase.engines)
    func aRoomTakesItsBuildingsRulesAndMayHaveHoursOfItsOwn(engine: Database.Engine) async throws {
        try await Self.withRooms(engine) { store in
            #expect(try await store.policy(forRoom: "mina") == .default)
            #expect(try await store.policy(forRoom: "nowhere") == nil)

            let library = try BookingPolicy.validated(
                hours: "Mon-Sun 07:00-23:00", horizonDays: 14, maxMinutes: 120, checkInMinutes: 10)
            try await store.set(library, forBuilding: "library wing")  // the rooms write it otherwise
            #expect(try await store.policy(forRoom: "mina") == library)
            #expect(try await store.policy(forRoom: "yana") == .default)

            let own = try OpeningHours("Mon-Fri 09:00-17:00")
            #expect(try await store.setHours(own, forRoom: "mina"))
            var expected = library
            expected.hours = own
            #expect(try await store.policy(forRoom: "mina") == expected)
            #expect(try await store.setHours(nil, forRoom: "mina"))
            #expect(try await store.policy(forRoom: "mina") == library)
            #expect(try await store.setHours(own, forRoom: "nowhere") == false)

            // Set again: changed, not added.
            let shorter = try BookingPolicy.validated(
                hours: "Mon-Fri 08:00-18:00", horizonDays: 7, maxMinutes: 60, checkInMinutes: nil)
            try await store.set(shorter, forBuilding: "Library Wing")
            #expect(try await store.policy(forRoom: "mina") == shorter)
        }
    }

    @Test func aPolicyAtFaultNamesEveryField() {
        #expect {
            _ = try BookingPolicy.validated(hours: "Mon 08:00-07:00", horizonDays: 0, maxMinutes: 50, checkInMinutes: 1)
        } throws: { error in
            (error as? ValidationFailure)?.errors.map(\.field) == [
                "hours", "horizonDays", "maxMinutes", "checkInMinutes",
            ]
        }
    }
}
