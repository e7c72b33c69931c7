import Foundation
import QuadCore
import QuadTestSupport
import Testing

@testable import QuadKit

/// A person's day through the kit and the command line, against a real Quad on its demo data: the offer made while
/// the store listens comes first with the badge's count, and `quad today` prints the same sections.
@Suite("Today through the kit and the CLI", .serialized)
struct TodayKitTests {
    static let campus = CampusClock(timeZone: TestTime.melbourne)

    @Test("TodayStore: an offer arriving live leads the day and counts on the badge; taken in one call")
    @MainActor
    func todayStore() async throws {
        try await LiveServer.with { server in
            let grace = try await server.client(as: "grace")
            let book = try #require(try await grace.books().value.first { $0.borrower == nil })
            _ = try await grace.checkOutBook(id: book.id, idempotencyKey: UUID().uuidString)
            var options = QuadClient.Options.forTests
            options.clock = ManualClock(now: server.clock.now)
            let client = try await server.client(as: "ada", options: options)
            let session = KitSession(
                client: client, offline: OfflineStore(directory: temporaryDirectory()),
                refresh: .init(interval: .seconds(30)))
            _ = try await client.holdBook(id: book.id, idempotencyKey: UUID().uuidString)
            let today = TodayStore(session: session)
            await today.start()
            try await eventually("Ada's day is live, her place in line on it") {
                today.isLive && today.day?.sections.first { $0.key == .waiting }?.items.count == 1
            }
            #expect(today.needsYou == 0)

            _ = try await grace.returnBook(id: book.id)
            try await eventually("the offer leads Ada's day") { today.needsYou == 1 }
            let first = try #require(today.day?.sections.first)
            #expect(first.key == .offers)
            let offer = try #require(first.items.first)
            #expect(offer.title == book.title && offer.endsAt != nil)

            let accepted = try await today.accept(offer.id)
            #expect(accepted.kind == .book && accepted.thing == String(book.id))
            #expect(today.needsYou == 0)
            #expect(today.day?.sections.first { $0.key == .offers }?.items.isEmpty == true)
            await today.stop()
        }
    }

    @Test("quad today: the day's sections, each item with the command that acts on it; --json is the API's")
    func commandLine() async throws {
        let tuesday = TestTime.next(LocalTime(hour: 9, minute: 50), where: { $0.weekday == 2 })
        try await LiveServer.with(at: tuesday) { server in
            let cli = CLI(server: server.url, clock: server.clock)
            _ = try await cli.run(["login", "--username", "ada"], stdin: server.passwords["ada"]! + "\n")
            let grace = try await server.client(as: "grace")
            let day = Self.campus.date(of: tuesday)
            let team = try await grace.book(
                roomId: "ljerka",
                TimedBooking(start: Self.campus.instant(day, LocalTime(hour: 10)), minutes: 60, hold: .room),
                idempotencyKey: UUID().uuidString)
            _ = try await cli.run(["wait", "ljerka", "--at", "10:00", "--for", "1h"])
            try await grace.cancel(roomId: "ljerka", bookingId: team.booking.id)

            let json = try await cli.run(["today", "--json"])
            #expect(json.status == 0, "\(json.err)")
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .iso8601
            let read = try decoder.decode(Today.self, from: Data(json.out.utf8))
            let offer = try #require(read.sections.first?.items.first)
            let until = Self.campus.time(of: try #require(offer.endsAt))
            let specials = try #require(read.sections.first { $0.key == .specials })
            #expect(specials.items.count == 4)

            let text = try await cli.run(["today"])
            #expect(text.status == 0, "\(text.err)")
            let expected =
                """
                1 thing needs you now

                Held for you
                  Ljerka, \(day) 10:00–11:00: Yours to take until \(until); then it passes to the next person.
                    quad accept \(offer.id) · quad leave -- \(offer.id)
                Your bookings today and tomorrow
                  No room booked for today or tomorrow.
                Your places in line
                  You are not waiting in any line.
                Loans to return
                  No loan is due soon.
                Specials today

                """
                + specials.items.map { "  \($0.title): \($0.detail ?? "")\n" }.joined()
            #expect(text.out == expected)

            // In French, the same day in French words.
            let french = try await cli.run(["today", "--language", "fr"])
            #expect(french.out.contains("Réservé pour vous\n  Ljerka"))
        }
    }
}
