import Foundation
import QuadCore
import QuadTestSupport
import Testing

@testable import QuadLibrary
@testable import QuadPlatform
@testable import QuadRooms
@testable import QuadServer

/// Waiting lines under concurrency, on SQLite and on PostgreSQL from two instances (two pools on one database, each
/// with every feature): what frees up goes to the first in line, held for them alone for the offer's time, then to
/// the next; a line never holds two offers; and a cancellation racing someone not in line is won by the line.
@Suite struct WaitingConcurrencyTests {
    /// Two Quads on one new database: on PostgreSQL each with its own pool (`TwoInstances`); an SQLite file has one
    /// Quad (its writer's lock is the process's), so there both are the same. The clock is theirs to move.
    static func instances(
        _ engine: Database.Engine, _ body: (Features, Features, OffsetClock) async throws -> Void
    ) async throws {
        switch engine {
        case .postgres:
            try await TwoInstances.run { first, second in
                try await body(first, second, try #require(first.platform.clock as? OffsetClock))
            }
        case .sqlite:
            try await TestDatabase.withLocation(.sqlite) { location in
                let clock = TestTime.clock()
                let database = try await Database.open(location, logger: TestDatabase.logger)
                do {
                    let features = try await Features.start(
                        TestApp.configuration(location, clock: clock), database: database,
                        logger: TestDatabase.logger
                    ) { _ in }
                    try await body(features, features, clock)
                } catch {
                    await database.close()
                    throw error
                }
                await database.close()
            }
        }
    }

    static func member(_ name: String) -> Person {
        Person(username: name, displayName: name.capitalized, role: .member)
    }

    /// What became of an attempt: "ok", or the problem's type (`held-for-line`, `book-on-loan`, …).
    static func outcome(_ body: () async throws -> Any) async -> String {
        do {
            _ = try await body()
            return "ok"
        } catch let problem as Problem {
            return String(problem.type.split(separator: ":").last ?? "")
        } catch {
            return "error: \(error)"
        }
    }

    /// How many places of the thing's lines hold an offer (live or not): never more than one per line.
    static func offers(_ features: Features, _ kind: WaitingKind, _ thing: String) async throws -> [WaitingPlace] {
        try await features.lines.lines().flatMap(\.places).filter {
            $0.kind == kind && $0.thing == thing && $0.offeredUntil != nil
        }
    }

    @Test(arguments: TestDatabase.engines)
    func aReturnedBookGoesToTheLineInOrderOfComing(engine: Database.Engine) async throws {
        try await Self.instances(engine) { first, second, clock in
            let library = (first.library, second.library)
            let book = try await library.0.store.create(
                .init(title: "Dune", author: "Frank Herbert", publisher: nil, categories: [], isbn: nil),
                now: clock.now)
            let (holder, ada, bob, cleo, dan) = (
                Self.member("holder"), Self.member("ada"), Self.member("bob"), Self.member("cleo"), Self.member("dan")
            )
            _ = try await library.0.checkOut(book.id, by: holder, name: nil)
            // Three come to wait, in this order, on either instance.
            #expect(try await library.1.hold(book.id, by: ada).position == 1)
            #expect(try await library.0.hold(book.id, by: bob).position == 2)
            #expect(try await library.1.hold(book.id, by: cleo).position == 3)
            _ = try await library.0.giveBack(book.id, by: holder)

            // Everyone rushes for it at once, on both instances: only the first in line can take it.
            let rush = await withTaskGroup(of: (String, String).self) { group in
                for (index, person) in [dan, cleo, bob, ada, dan, cleo, bob].enumerated() {
                    let shelf = index.isMultiple(of: 2) ? library.0 : library.1
                    group.addTask {
                        (
                            person.username,
                            await Self.outcome { try await shelf.checkOut(book.id, by: person, name: nil) }
                        )
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            #expect(rush.filter { $0.1 == "ok" }.map(\.0) == ["ada"], "\(rush)")
            #expect(rush.filter { $0.0 != "ada" }.allSatisfy { ["held-for-line", "book-on-loan"].contains($0.1) })
            #expect(try await first.library.find(book.id).loan?.username == "ada")

            // Ada brings it back: Bob's turn, held for two days. Cleo and Dan cannot take it meanwhile.
            _ = try await library.1.giveBack(book.id, by: ada)
            let bobsOffer = try #require(try await Self.offers(first, .book, String(book.id)).first)
            #expect(bobsOffer.owner == "bob")
            #expect(
                await Self.outcome { try await library.0.checkOut(book.id, by: cleo, name: nil) } == "held-for-line")
            #expect(await Self.outcome { try await library.1.checkOut(book.id, by: dan, name: nil) } == "held-for-line")

            // Bob lets the two days pass: the offer is Cleo's (the second left in line), and only hers.
            clock.advance(by: .seconds(2 * 86_400 + 1))
            let after = await withTaskGroup(of: (String, String).self) { group in
                for (index, person) in [dan, bob, cleo, dan, bob].enumerated() {
                    let shelf = index.isMultiple(of: 2) ? library.0 : library.1
                    group.addTask {
                        (
                            person.username,
                            await Self.outcome { try await shelf.checkOut(book.id, by: person, name: nil) }
                        )
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            #expect(after.filter { $0.1 == "ok" }.map(\.0) == ["cleo"], "\(after)")
            #expect(try await first.library.find(book.id).loan?.username == "cleo")
            // Bob's place went with his offer; nobody is left waiting.
            #expect(try await first.lines.lines().isEmpty)
        }
    }

    @Test(arguments: TestDatabase.engines)
    func anOfferNotTakenPassesOnWithoutAnyoneAsking(engine: Database.Engine) async throws {
        try await Self.instances(engine) { first, second, clock in
            let book = try await first.library.store.create(
                .init(title: "Emma", author: "Jane Austen", publisher: nil, categories: [], isbn: nil), now: clock.now)
            _ = try await first.library.checkOut(book.id, by: Self.member("holder"), name: nil)
            _ = try await first.library.hold(book.id, by: Self.member("ada"))
            _ = try await second.library.hold(book.id, by: Self.member("bob"))
            _ = try await second.library.giveBack(book.id, by: Self.member("holder"))
            #expect(try await Self.offers(first, .book, String(book.id)).map(\.owner) == ["ada"])
            clock.advance(by: .seconds(2 * 86_400 + 1))
            // What each instance's keeper does every minute: both at once, and the line still has one offer.
            async let a: Void = first.lines.settleDue()
            async let b: Void = second.lines.settleDue()
            _ = try await (a, b)
            #expect(try await Self.offers(first, .book, String(book.id)).map(\.owner) == ["bob"])
            let bob = try await first.waiting.notifications(of: "bob")
            #expect(bob.offers.count == 1 && bob.waiting.isEmpty)
            #expect(try await first.waiting.notifications(of: "ada").offers.isEmpty)
        }
    }

    /// A room with one seat, booked; someone waits for that hour. The booking is cancelled on one instance while
    /// someone not in line tries, again and again on the other, to book it: the line gets it every time.
    @Test(arguments: TestDatabase.engines)
    func aCancellationRacingABookingGoesToTheLine(engine: Database.Engine) async throws {
        try await Self.instances(engine) { first, second, clock in
            _ = try await first.rooms.store.create(
                RoomRecord(id: "solo", name: "Solo", building: "North Hall", capacity: 1, seats: 1))
            let (holder, ada, dan) = (Self.member("holder"), Self.member("ada"), Self.member("dan"))
            // From the next 8 am on the campus clock, so the six hours never run past midnight (a booking stays
            // within its day's opening hours, 00:00-24:00 by default) whatever the hour the test runs at.
            let morning = TestTime.next(
                LocalTime(hour: 8, minute: 0), in: await first.campus.timeZone(), after: clock.now)
            for round in 0..<6 {
                // A fresh hour each round.
                let start = morning.addingTimeInterval(Double(round) * 3600)
                let booked = try await first.rooms.book(
                    roomId: "solo", owner: holder, start: start, minutes: 60, hold: .seat, recurrence: nil)
                #expect(
                    await Self.outcome {
                        try await second.rooms.book(
                            roomId: "solo", owner: dan, start: start, minutes: 60, hold: .seat, recurrence: nil)
                    } == "room-full")
                let place = try await second.rooms.wait(
                    roomId: "solo", person: ada, start: start, minutes: 60, hold: .seat)
                #expect(place.position == 1)
                let results = await withTaskGroup(of: String.self) { group in
                    group.addTask {
                        await Self.outcome {
                            try await first.rooms.cancel(
                                booked.booking.id, roomId: "solo", by: holder, following: false)
                        }
                    }
                    for _ in 0..<8 {
                        group.addTask {
                            "dan: "
                                + (await Self.outcome {
                                    try await second.rooms.book(
                                        roomId: "solo", owner: dan, start: start, minutes: 60, hold: .seat,
                                        recurrence: nil)
                                })
                        }
                    }
                    return await group.reduce(into: []) { $0.append($1) }
                }
                #expect(results.contains("ok"), "the cancellation: \(results)")
                #expect(
                    results.filter { $0.hasPrefix("dan") }.allSatisfy {
                        $0 == "dan: room-full" || $0 == "dan: held-for-line"
                    },
                    "round \(round): \(results)")
                // The seat is held for Ada alone; she takes it in one step.
                let offers = try await Self.offers(first, .room, "solo")
                #expect(offers.map(\.owner) == ["ada"])
                let accepted = try await second.lines.accept(place.place.id, by: ada)
                #expect(accepted.bookingId != nil)
                let held = try await first.rooms.reservations.reservations(
                    roomId: "solo", during: SlotRange(start: start, end: start.addingTimeInterval(3600))!)
                #expect(held.map(\.owner) == ["ada"])
                // Ada frees it for the next round.
                #expect(try await first.rooms.cancel(held[0].id, roomId: "solo", by: ada, following: false))
            }
        }
    }

    /// An offer for a room lasts 15 minutes, then passes to the next in line; a place whose hour has begun leaves.
    @Test(arguments: TestDatabase.engines)
    func aRoomOfferLapsesToTheNextInLine(engine: Database.Engine) async throws {
        try await Self.instances(engine) { first, second, clock in
            _ = try await first.rooms.store.create(
                RoomRecord(id: "duo", name: "Duo", building: "North Hall", capacity: 1, seats: 1))
            // Tomorrow at 10:00 on the campus's clock (the server's zone, none being set): a time three hours on
            // could run past midnight, where a day's opening hours end.
            let campus = CampusClock(timeZone: .current)
            let start = campus.instant(campus.date(of: clock.now).adding(days: 1), LocalTime(hour: 10))
            let holder = Self.member("holder")
            let booked = try await first.rooms.book(
                roomId: "duo", owner: holder, start: start, minutes: 30, hold: .seat, recurrence: nil)
            let ada = try await first.rooms.wait(
                roomId: "duo", person: Self.member("ada"), start: start, minutes: 30, hold: .seat)
            let bob = try await second.rooms.wait(
                roomId: "duo", person: Self.member("bob"), start: start, minutes: 30, hold: .seat)
            #expect(bob.position == 2)
            _ = try await second.rooms.cancel(booked.booking.id, roomId: "duo", by: holder, following: false)
            #expect(try await Self.offers(first, .room, "duo").map(\.owner) == ["ada"])
            clock.advance(by: .seconds(15 * 60 + 1))
            // Ada is too late; her place went with her offer, which is Bob's now.
            let late = await Self.outcome {
                try await first.lines.accept(ada.place.id, by: Self.member("ada"))
            }
            #expect(late == "offer-ended")
            try await second.lines.settleDue()
            #expect(try await Self.offers(first, .room, "duo").map(\.owner) == ["bob"])
            _ = try await first.lines.accept(bob.place.id, by: Self.member("bob"))
            #expect(try await first.lines.lines().isEmpty)
        }
    }
}
