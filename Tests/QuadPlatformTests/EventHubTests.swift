import Foundation
import QuadTestSupport
import ServiceLifecycle
import Testing

@testable import QuadPlatform
@testable import QuadServer

@Suite struct EventHubTests {
    struct Spots: Codable, Sendable, Equatable {
        var id: String
        var spots: Int
    }

    @Test func subscribersGetEventsInOrderWithGrowingIds() async throws {
        try await TestDatabase.withDatabase(.sqlite) { database in
            let hub = EventHub(database: database, capacity: 16, clock: TestTime.clock(), logger: TestDatabase.logger)
            let subscription = hub.subscribe(after: nil)
            await hub.publishForTesting("room", Spots(id: "ljerka", spots: 42))
            await hub.publishForTesting("room", Spots(id: "ljerka", spots: 41))
            var iterator = subscription.events.makeAsyncIterator()
            let first = try #require(await iterator.next())
            let second = try #require(await iterator.next())
            #expect(first.type == "room" && second.id > first.id)
            #expect(
                try JSONDecoder().decode(Spots.self, from: Data(second.data.utf8)) == Spots(id: "ljerka", spots: 41))
            subscription.cancel()
        }
    }

    @Test func aReconnectingClientGetsWhatItMissedOrIsToldToReload() async throws {
        try await TestDatabase.withDatabase(.sqlite) { database in
            let hub = EventHub(database: database, capacity: 3, clock: TestTime.clock(), logger: TestDatabase.logger)
            let watcher = hub.subscribe(after: nil)
            var iterator = watcher.events.makeAsyncIterator()
            var seen: [Event] = []
            for spots in 0..<5 {
                await hub.publishForTesting("room", Spots(id: "mina", spots: spots))
                seen.append(try #require(await iterator.next()))
            }

            let resumed = hub.subscribe(after: seen[2].id)
            #expect(resumed.replay == Array(seen[3...]))
            #expect(!resumed.missedSome)

            let tooOld = hub.subscribe(after: seen[0].id)  // the buffer of 3 no longer holds seen[1]
            #expect(tooOld.missedSome)

            let filtered = hub.subscribe(after: seen[2].id, types: [.special])
            #expect(filtered.replay.isEmpty)
            for subscription in [watcher, resumed, tooOld, filtered] { subscription.cancel() }
        }
    }

    @Test func aSubscriberTooFarBehindIsCutOffNotSkipped() async throws {
        try await TestDatabase.withDatabase(.sqlite) { database in
            let hub = EventHub(database: database, capacity: 2, clock: TestTime.clock(), logger: TestDatabase.logger)
            let slow = hub.subscribe(after: nil)
            for spots in 0..<3 { await hub.publishForTesting("room", Spots(id: "alexis", spots: spots)) }
            var received: [Event] = []
            for await event in slow.events { received.append(event) }
            #expect(received.count == 2)  // then the stream ended: the client resumes after received[1]
            #expect(hub.subscribe(after: received[1].id).replay.count == 1)
        }
    }

    @Test func closingEndsEveryStream() async throws {
        try await TestDatabase.withDatabase(.sqlite) { database in
            let hub = EventHub(database: database, capacity: 4, clock: TestTime.clock(), logger: TestDatabase.logger)
            let subscription = hub.subscribe(after: nil)
            hub.closeAll()
            var iterator = subscription.events.makeAsyncIterator()
            #expect(await iterator.next() == nil)
        }
    }

    /// Two Quad instances on one PostgreSQL database deliver each other's events.
    @Test(.enabled(if: TestDatabase.postgresURL != nil), .timeLimit(.minutes(1)))
    func twoInstancesOnPostgreSQLHearEachOther() async throws {
        try await TestDatabase.withLocation(.postgres) { location in
            let first = try await Database.open(location, logger: TestDatabase.logger)
            let second = try await Database.open(location, logger: TestDatabase.logger)
            try await Migrator.migrate(first, Platform.migrations, now: TestTime.start, logger: TestDatabase.logger)
            let hubA = EventHub(database: first, capacity: 16, clock: TestTime.clock(), logger: TestDatabase.logger)
            let hubB = EventHub(database: second, capacity: 16, clock: TestTime.clock(), logger: TestDatabase.logger)
            let group = ServiceGroup(
                configuration: .init(services: [hubA, hubB], gracefulShutdownSignals: [], logger: TestDatabase.logger))
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { try await group.run() }
                let onB = hubB.subscribe(after: nil)
                let onA = hubA.subscribe(after: nil)
                var fromB = onB.events.makeAsyncIterator()
                var fromA = onA.events.makeAsyncIterator()
                // LISTEN starts in the background: wait until both instances hear, then publish once.
                try await eventually("both instances listen") { hubA.isListening && hubB.isListening }
                await hubA.publishForTesting("room", Spots(id: "yana", spots: 1))
                let heard = await fromB.next()
                let event = try #require(heard)
                #expect(event.type == "room")
                await hubB.publishForTesting("special", Spots(id: "noodles", spots: 1))
                var fromBOnA: Event?
                while let next = await fromA.next() {
                    if next.type == "special" {
                        fromBOnA = next
                        break
                    }
                }
                #expect(fromBOnA?.id ?? 0 > event.id)
                onA.cancel()
                onB.cancel()
                await group.triggerGracefulShutdown()
                try await tasks.waitForAll()
            }
            await first.close()
            await second.close()
        }
    }

    /// A private event (an offer made to Ada) reaches Ada's streams alone, live and in a replay, from either instance
    /// (on PostgreSQL its audience travels with it through NOTIFY); everyone else goes on to the next public event.
    @Test(arguments: TestDatabase.engines)
    func aPrivateEventReachesOnlyItsPersonsStreams(engine: Database.Engine) async throws {
        try await TestDatabase.withLocation(engine) { location in
            let first = try await Database.open(location, logger: TestDatabase.logger)
            let second = engine == .postgres ? try await Database.open(location, logger: TestDatabase.logger) : first
            try await Migrator.migrate(first, Platform.migrations, now: TestTime.start, logger: TestDatabase.logger)
            let hubA = EventHub(database: first, capacity: 16, clock: TestTime.clock(), logger: TestDatabase.logger)
            let hubB =
                engine == .postgres
                ? EventHub(database: second, capacity: 16, clock: TestTime.clock(), logger: TestDatabase.logger) : hubA
            let hubs: [EventHub] = engine == .postgres ? [hubA, hubB] : [hubA]
            let group = ServiceGroup(
                configuration: .init(services: hubs, gracefulShutdownSignals: [], logger: TestDatabase.logger))
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { try await group.run() }
                try await eventually("the hubs listen") { hubA.isListening && hubB.isListening }
                let ada = hubB.subscribe(after: nil, person: "ada")
                let bob = hubB.subscribe(after: nil, person: "bob")
                let visitor = hubB.subscribe(after: nil)
                await hubA.publishForTesting("waiting", Spots(id: "offer", spots: 1), to: "ada")
                await hubA.publishForTesting("room", Spots(id: "mina", spots: 3))
                var adas = ada.events.makeAsyncIterator()
                let (first, second) = (await adas.next(), await adas.next())
                #expect(first?.type == "waiting" && first?.audience == "ada")
                #expect(second?.type == "room")
                for other in [bob, visitor] {
                    var iterator = other.events.makeAsyncIterator()
                    #expect(await iterator.next()?.type == "room")
                }
                // Reconnecting from before both: Bob's replay has the public one only, Ada's both.
                let before = try #require(first).id - 1
                let (bobAgain, adaAgain) = (
                    hubB.subscribe(after: before, person: "bob"), hubB.subscribe(after: before, person: "ada")
                )
                #expect(bobAgain.replay.map(\.type) == ["room"])
                #expect(adaAgain.replay.map(\.type) == ["waiting", "room"])
                for subscription in [ada, bob, visitor, bobAgain, adaAgain] { subscription.cancel() }
                await group.triggerGracefulShutdown()
                try await tasks.waitForAll()
            }
            await first.close()
            if engine == .postgres { await second.close() }
        }
    }
}
