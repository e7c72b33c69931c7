import Foundation
import HTTPTypes
import OpenAPIRuntime
import QuadCore
import QuadTestSupport
import Testing

@testable import QuadKit

/// One Idempotency-Key per user intent, through the stores: every attempt of one intent repeats it, a lost
/// answer never books or checks out twice, and a later intent gets a new key (never a replay of the old one).
@Suite("Intents and Idempotency-Key in the stores", .serialized)
struct IntentKitTests {
    func options(_ recorder: Recorder, losing operationID: String, server: LiveServer) -> QuadClient.Options {
        var options = QuadClient.Options.forTests
        // The device's clock reads the server's (which bookings are held now depends on it).
        options.clock = ManualClock(now: server.clock.now)
        options.retry = RetryMiddleware(maxAttempts: 3, clock: InstantClock())
        options.extraMiddlewares = [LoseAnswers(operationID, count: 3), recorder]
        return options
    }

    @Test("RoomsStore: a booking whose every answer was lost shows as booked once; after a cancel, a new booking")
    @MainActor
    func booking() async throws {
        try await LiveServer.with { server in
            let recorder = Recorder()
            let client = try await server.client(
                as: "ada", options: options(recorder, losing: "bookRoom", server: server))
            let store = RoomsStore(
                session: KitSession(client: client, offline: OfflineStore(directory: temporaryDirectory())))
            #expect(await store.refresh())
            guard case .failed = await store.book("mostafa") else {
                Issue.record("a booking with every answer lost did not fail: \(store.state(of: "mostafa"))")
                return
            }
            #expect(store.isOffline)
            let attempts = recorder.exchanges.filter { $0.operationID == "bookRoom" }
            #expect(attempts.count == 3 && attempts.allSatisfy { $0.status == 201 })
            #expect(Set(attempts.map(\.idempotencyKey)).count == 1 && attempts[0].idempotencyKey != nil)

            // It did happen, once: the next refresh shows it booked.
            #expect(await store.refresh())
            let mine = try await client.myBookings()
            #expect(mine.map(\.roomId) == ["mostafa"])
            #expect(store.state(of: "mostafa") == .booked(bookingId: mine[0].id))

            // Cancelled, then booked again: a new intent with a new key, so a new booking.
            try await store.cancel("mostafa")
            guard case .booked(let second) = await store.book("mostafa") else {
                Issue.record("booking again failed: \(store.state(of: "mostafa"))")
                return
            }
            #expect(second != mine[0].id)
            #expect(try await client.myBookings().map(\.id) == [second])
            let keys = recorder.exchanges.filter { $0.operationID == "bookRoom" }.map(\.idempotencyKey)
            #expect(keys.count == 4 && Set(keys).count == 2)
        }
    }

    @Test("LibraryStore: a checkout whose every answer was lost is one loan; after a return, a new loan")
    @MainActor
    func checkout() async throws {
        try await LiveServer.with { server in
            let recorder = Recorder()
            let client = try await server.client(
                as: "grace", options: options(recorder, losing: "checkOutBook", server: server))
            let store = LibraryStore(
                session: KitSession(client: client, offline: OfflineStore(directory: temporaryDirectory())))
            #expect(await store.refresh())
            let book = try #require(store.books.first { $0.status == .available })
            let loans = try await client.book(id: book.id).loans?.count ?? 0
            #expect(await store.checkOut(book.id) == nil)
            #expect(store.isOffline && store.lastError != nil)
            let attempts = recorder.exchanges.filter { $0.operationID == "checkOutBook" }
            #expect(attempts.count == 3 && Set(attempts.map(\.idempotencyKey)).count == 1)

            #expect(await store.refresh())
            #expect(store.book(book.id)?.status == .onLoan && store.book(book.id)?.borrower == "Grace Hopper")
            #expect(try await client.book(id: book.id).loans?.count == loans + 1)

            #expect(await store.giveBack(book.id)?.status == .available)
            let again = try #require(await store.checkOut(book.id))
            #expect(again.status == .onLoan)
            // GET /api/books/{id}'s ETag versions the book's fields, not its loans: read afresh, never revalidated
            // (a 304 would keep the one-loan list across a return and checkout made within the same second).
            let fresh = try await client.book(id: book.id)
            #expect(fresh.loans?.count == loans + 2)
            #expect(fresh.loans?.map { $0.returnedAt == nil } == [true, false])
            let reads = recorder.exchanges.filter { $0.operationID == "getBook" }
            #expect(reads.count == 3 && reads.allSatisfy { $0.status == 200 && $0.ifNoneMatch == nil })
        }
    }
}
