import Foundation
import Hummingbird
import HummingbirdTesting
import QuadCore
import QuadTestSupport
import Testing

@testable import QuadPlatform
@testable import QuadRooms
@testable import QuadServer

/// A room whose building is closed says so, and when it opens, rather than "Full · No seats free".
@Suite struct ClosedRoomsTests {
    static let campus = CampusClock(timeZone: TestTime.melbourne)

    /// Ljerka's card on `/rooms`, as a visitor sees it, with its words run together.
    static func ljerka(_ client: any TestClientProtocol, language: String = "en") async throws -> String {
        try await client.execute(
            uri: "/rooms", method: .get, headers: [.accept: "text/html", .acceptLanguage: language]
        ) { response in
            let html = response.text
            let start = try #require(html.range(of: #"id="room-ljerka""#))
            let card = html[start.lowerBound...]
            let end = try #require(card.range(of: "</li>"))
            return String(card[..<end.lowerBound]).replacing(#/<[^>]+>/#, with: " ").split(
                whereSeparator: \.isWhitespace
            )
            .joined(separator: " ")
        }
    }

    @Test func aClosedRoomSaysWhenItOpens() async throws {
        // A Tuesday, 06:00 on the campus; North Hall opens on weekdays, 08:00 to 20:00.
        let tuesday = TestTime.next(LocalTime(hour: 6, minute: 0), where: { $0.weekday == 2 })
        try await TestApp.run(at: tuesday, configure: { $0.loadDemoData = true }) { app, client in
            try await app.features.rooms.setRules(
                BookingPolicy(hours: .weekdays, horizonDays: 56, maxMinutes: 240, checkInMinutes: nil),
                forBuilding: "North Hall")
            var card = try await Self.ljerka(client)
            #expect(card.contains("Closed Opens at 08:00"), "\(card)")
            #expect(!card.contains("Full"))
            #expect(try await Self.ljerka(client, language: "fr").contains("Fermé Ouvre à 08:00"))

            // 09:00: open, with its seats.
            app.clock.advance(by: .seconds(3 * 3600))
            card = try await Self.ljerka(client)
            #expect(!card.contains("Closed") && card.contains("43 of 43 seats free"), "\(card)")

            // 21:00: closed until tomorrow; Friday at 21:00, until Monday.
            app.clock.advance(by: .seconds(12 * 3600))
            #expect(try await Self.ljerka(client).contains("Closed Opens tomorrow at 08:00"))
            app.clock.advance(by: .seconds(3 * 24 * 3600))
            let monday = Self.campus.date(of: app.clock.now).adding(days: 3)
            let said = Localizer(language: .english).longDate(monday)
            #expect(try await Self.ljerka(client).contains("Closed Opens \(said) at 08:00"))
        }
    }

    @Test func theNextOpeningIsNoneWhileOpenOrWhenItNeverOpens() {
        let tuesday = TestTime.next(LocalTime(hour: 9, minute: 0), where: { $0.weekday == 2 })
        #expect(OpeningHours.weekdays.nextOpening(after: tuesday, clock: Self.campus) == nil)
        #expect(
            OpeningHours(days: Array(repeating: [], count: 7)).nextOpening(after: tuesday, clock: Self.campus) == nil)
        let evening = tuesday.addingTimeInterval(12 * 3600)
        #expect(
            OpeningHours.weekdays.nextOpening(after: evening, clock: Self.campus)
                == Self.campus.instant(Self.campus.date(of: tuesday).adding(days: 1), LocalTime(hour: 8)))
    }
}
