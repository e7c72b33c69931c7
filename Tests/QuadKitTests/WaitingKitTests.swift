import Foundation
import QuadCore
import QuadTestSupport
import Testing

@testable import QuadKit

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Waiting lines through the kit and the command line, against a real Quad: the offer reaches the person's own
/// stream (and nobody else's), and is taken in one call.
@Suite("Waiting lines through the kit and the CLI", .serialized)
struct WaitingKitTests {
    @MainActor
    func makeStore(_ server: LiveServer, as username: String) async throws -> NotificationsStore {
        var options = QuadClient.Options.forTests
        options.clock = ManualClock(now: server.clock.now)
        options.retry = RetryMiddleware(maxAttempts: 3, clock: InstantClock())
        let client = try await server.client(as: username, options: options)
        return NotificationsStore(
            session: KitSession(
                client: client, offline: OfflineStore(directory: temporaryDirectory()),
                refresh: .init(interval: .seconds(30))))
    }

    @Test("NotificationsStore: a place in line, the offer arriving live on the person's own stream, taken in one call")
    @MainActor
    func notificationsStore() async throws {
        try await LiveServer.with { server in
            let grace = try await server.client(as: "grace")
            let books = try await grace.books().value
            let book = try #require(books.first { $0.borrower == nil })
            _ = try await grace.checkOutBook(id: book.id, idempotencyKey: UUID().uuidString)

            let ada = try await makeStore(server, as: "ada")
            let kier = try await makeStore(server, as: "kier")
            let library = LibraryStore(session: ada.session)
            let place = try #require(await library.hold(book.id))
            #expect(await library.hold(book.id) == nil && library.lastError?.contains("already") == true)
            #expect(place.position == 1 && place.label == book.title)
            for store in [ada, kier] { await store.start() }
            try await eventually("both are live") { ada.isLive && kier.isLive && ada.notes.waiting.count == 1 }
            #expect(ada.notes.offers.isEmpty && ada.newOffer == nil)

            _ = try await grace.returnBook(id: book.id)
            try await eventually("the offer reaches Ada") { ada.newOffer != nil && ada.notes.offers.count == 1 }
            let offer = try #require(ada.notes.offers.first)
            #expect(offer.id == place.id && offer.offerEnds != nil)
            // Kier, listening all along, heard nothing of it.
            #expect(kier.newOffer == nil && kier.notes.offers.isEmpty)

            let accepted = try await ada.accept(offer.id)
            #expect(accepted.kind == .book && accepted.thing == String(book.id))
            #expect(ada.notes.offers.isEmpty && ada.newOffer == nil)
            #expect(ada.notes.loans.map(\.title).contains(book.title))
            // Taken once: a second tap is the server's "no such offer".
            await #expect(throws: KitError.self) { try await ada.accept(offer.id) }

            try await ada.setReminders(off: [.dueSoon])
            #expect(ada.notes.remindersOff == [.dueSoon])
            for store in [ada, kier] { await store.stop() }
        }
    }

    @Test("quad wait, offers, accept, leave and library hold; quad watch shows the offer")
    func commandLine() async throws {
        let tuesday = TestTime.next(LocalTime(hour: 9, minute: 50), where: { $0.weekday == 2 })
        try await LiveServer.with(at: tuesday) { server in
            let cli = CLI(server: server.url, clock: server.clock)
            _ = try await cli.run(["login", "--username", "ada"], stdin: server.passwords["ada"]! + "\n")
            let grace = try await server.client(as: "grace")
            let campus = CampusClock(timeZone: TestTime.melbourne)
            let day = campus.date(of: tuesday)
            let team = try await grace.book(
                roomId: "ljerka",
                TimedBooking(start: campus.instant(day, LocalTime(hour: 10)), minutes: 60, hold: .room),
                idempotencyKey: UUID().uuidString)

            let full = try await cli.run(["book", "ljerka", "--at", "10:00", "--for", "1h"])
            #expect(full.status == 1)
            let wait = try await cli.run(["wait", "ljerka", "--at", "10:00", "--for", "1h"])
            #expect(wait.status == 0, "\(wait.err)")
            #expect(wait.out.hasPrefix("In line for Ljerka, \(day) 10:00–11:00: 1st in line."))
            let again = try await cli.run(["wait", "ljerka", "--at", "10:00", "--for", "1h"])
            #expect(again.status == 1 && again.err.contains("You are in this line already."))
            let free = try await cli.run(["wait", "mina", "--at", "10:00", "--for", "1h"])
            #expect(free.status == 1 && free.err.contains("There is room at that time"))
            let offers = try await cli.run(["offers"])
            #expect(offers.out.contains("In line\n  Ljerka, \(day) 10:00–11:00: 1st in line"))

            let watcher = try cli.start(["watch", "rooms"])
            try await eventually("the watcher is listening") { watcher.err.contains("Watching") }
            try await grace.cancel(roomId: "ljerka", bookingId: team.booking.id)
            try await eventually("the offer is printed") { watcher.out.contains("Held for you: Ljerka") }
            watcher.stop()

            let held = try await cli.run(["offers"])
            #expect(held.out.hasPrefix("Held for you\n  Ljerka, \(day) 10:00–11:00 until "), "\(held.out)")
            let offerLine = try #require(held.out.split(separator: "\n").first { $0.contains("quad accept ") })
            let id = try #require(offerLine.split(separator: " ").last.map(String.init))
            let accept = try await cli.run(["accept", id])
            #expect(accept.status == 0 && accept.out == "Booked: the seat in ljerka is yours (`quad bookings`).\n")
            let twice = try await cli.run(["accept", id])
            #expect(twice.status == 1)
            let bad = try await cli.run(["accept", "not-an-id"])
            #expect(bad.status == 2)

            // A book out to someone else: in line for it, then out of the line.
            let onLoan = try #require(try await grace.books().value.first { $0.borrower != nil })
            let hold = try await cli.run(["library", "hold", String(onLoan.id)])
            #expect(hold.status == 0 && hold.out.hasPrefix("In line for \"\(onLoan.title)\": 1st in line."))
            let place = try #require(
                try await cli.run(["offers"]).out.split(separator: "\n").first { $0.contains(onLoan.title) })
            let placeId = try #require(place.split(separator: " ").last.map { String($0.dropLast()) })
            let leave = try await cli.run(["leave", placeId])
            #expect(leave.status == 0 && leave.out == "Left the line.\n", "\(place) \(leave.err)")
            #expect(try await cli.run(["offers"]).out.contains(onLoan.title) == false)
        }
    }

    @Test("quad offers says what changed without you (a room removed); quad dismiss dismisses it")
    func noticesOnTheCommandLine() async throws {
        let tuesday = TestTime.next(LocalTime(hour: 9, minute: 50), where: { $0.weekday == 2 })
        try await LiveServer.with(at: tuesday) { server in
            let cli = CLI(server: server.url, clock: server.clock)
            _ = try await cli.run(["login", "--username", "ada"], stdin: server.passwords["ada"]! + "\n")
            let booked = try await cli.run(["book", "mostafa", "--at", "10:00", "--for", "30m"])
            #expect(booked.status == 0, "\(booked.err)")
            var remove = URLRequest(url: server.url.appending(path: "api/rooms/mostafa"))
            remove.httpMethod = "DELETE"
            remove.setValue("Bearer \(LiveServer.adminToken)", forHTTPHeaderField: "Authorization")
            let (_, response) = try await URLSession.shared.data(for: remove)
            #expect((response as? HTTPURLResponse)?.statusCode == 204)

            let offers = try await cli.run(["offers"])
            let line = try #require(offers.out.split(separator: "\n").first { $0.contains("Mostafa was removed") })
            // On the campus's clock, as the bookings are.
            #expect(line.contains("your booking on ") && line.contains(", 10:00–10:30 is cancelled."), "\(line)")
            let id = try #require(line.split(separator: " ").last.map { String($0.dropLast()) })
            let dismiss = try await cli.run(["dismiss", id])
            #expect(dismiss.status == 0 && dismiss.out == "Dismissed.\n", "\(dismiss.err)")
            #expect(try await cli.run(["offers"]).out.contains("Mostafa") == false)
            let twice = try await cli.run(["dismiss", id])
            #expect(twice.status == 1)
            #expect(try await cli.run(["dismiss", "not-an-id"]).status == 2)
        }
    }
}
