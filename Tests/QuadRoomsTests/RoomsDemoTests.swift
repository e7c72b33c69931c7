import Foundation
import QuadCore
import QuadTestSupport
import Testing

@testable import QuadPlatform
@testable import QuadRooms
@testable import QuadServer

/// The demo looks like a campus in use: buildings keep hours (one asks for check-in), rooms are booked for later
/// today and tomorrow, and someone waits on a full time; yet what is free now is the original app's.
@Suite struct RoomsDemoTests {
    @Test(arguments: TestDatabase.engines)
    func theDemoCampusIsInUse(engine: Database.Engine) async throws {
        let tuesday = RoomsInTimeTests.tuesday
        try await TestApp.run(engine, at: tuesday, configure: { $0.loadDemoData = true }) { app, client in
            let rooms = app.features.rooms
            let buildings = Dictionary(
                uniqueKeysWithValues: try await rooms.policies.buildings().map { ($0.name, $0.policy) })
            #expect(buildings["Engineering"]?.hours.description == "Mon-Fri 07:00-21:00; Sat 09:00-17:00")
            #expect(buildings["Engineering"]?.checkInMinutes == 15)
            #expect(buildings["Library Wing"]?.hours.description == "Mon-Fri 08:00-22:00; Sat-Sun 10:00-18:00")
            #expect(buildings["North Hall"]?.checkInMinutes == nil)

            // Free now as the original app had them.
            for room in RoomsDemo.rooms {
                #expect(try await RoomsInTimeTests.spots(client, RoomValidation.slug(room.name)) == room.spots)
            }
            // Booked later today (the hour after next) and tomorrow.
            let campus = RoomsInTimeTests.campus
            let today = campus.date(of: tuesday)
            let sams = try await rooms.reservations.upcoming(owner: "sam.rivera").map(\.reservation)
            #expect(
                sams.map {
                    "\($0.roomId) \(campus.date(of: $0.range.start)) \(campus.time(of: $0.range.start)) \($0.seats)"
                }
                    == ["septima \(today) 11:00 8", "septima \(today.adding(days: 1)) 09:00 12"])
            #expect(sams.allSatisfy { $0.checkInBy != nil })
            let painter = try await rooms.reservations.upcoming(owner: "lin.chen").map(\.reservation)
            #expect(painter.map(\.roomId) == ["painter"] && painter.first?.hold == .room)
            // Noor waits for a seat there then.
            let lines = try await app.features.waiting.lines.lines()
            #expect(lines.count == 1)
            #expect(lines.first?.places.map(\.owner) == ["noor.haddad"])
            #expect(lines.first?.places.first?.thing == "painter")
        }
    }
}
