import Foundation
import NIOConcurrencyHelpers
import QuadCore
import QuadTestSupport
import Testing

@testable import QuadPlatform

@Suite struct KeptTests {
    /// Everyone asking while an answer is built waits for that one build; a change means a new one, and what
    /// was being built when it landed is not kept.
    @Test func oneBuildForEveryoneWhoAsksMeanwhile() async throws {
        try await TestDatabase.withDatabase(.sqlite) { database in
            let clock = TestTime.clock()
            let hub = EventHub(database: database, capacity: 16, clock: clock, logger: TestDatabase.logger)
            let builds = NIOLockedValueBox(0)
            let (gate, open) = AsyncStream<Void>.makeStream()
            let cache = Kept<String, EncodedAnswer>(hub: hub, clock: clock, droppedBy: [.notice("test")]) { _ in
                let number = builds.withLockedValue { count in
                    count += 1
                    return count
                }
                for await _ in gate { break }
                return try EncodedAnswer.json(["build": number])
            }
            let etags = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<20 { group.addTask { try await cache.value("kier").etag } }
                try await eventually("the build started") { builds.withLockedValue { $0 } == 1 }
                open.yield()
                return try await group.reduce(into: [String]()) { $0.append($1) }
            }
            #expect(builds.withLockedValue { $0 } == 1 && Set(etags).count == 1)
            #expect(cache.cached("kier")?.etag == etags[0])

            await cache.changed()
            #expect(cache.cached("kier") == nil)
            let during = Task { try await cache.value("kier") }
            try await eventually("a build began") { builds.withLockedValue { $0 } == 2 }
            await cache.changed()
            open.yield()
            _ = try await during.value
            #expect(cache.cached("kier") == nil, "built across a change: not kept")
            open.yield()
            let fresh = try await cache.value("kier")
            #expect(builds.withLockedValue { $0 } == 3 && cache.cached("kier")?.etag == fresh.etag)
        }
    }

    /// While a value is built again after a feed's reading, or after it went stale by itself, whoever else asks gets
    /// the one kept before at once, for at most `PageCache.staleFor`; after an edit they wait for the new one.
    @Test func whileBuiltAgainAfterAReadingOthersGetTheValueBefore() async throws {
        try await TestDatabase.withDatabase(.sqlite) { database in
            let clock = ManualClock(now: TestTime.start)
            let hub = EventHub(database: database, capacity: 16, clock: clock, logger: TestDatabase.logger)
            let builds = NIOLockedValueBox(0)
            let (gate, open) = AsyncStream<Void>.makeStream()
            let cache = Kept<String, EncodedAnswer>(
                hub: hub, clock: clock, droppedBy: [.notice("edit"), .fed], expires: { $0.expires }
            ) { _ in
                let number = builds.withLockedValue { count in
                    count += 1
                    return count
                }
                for await _ in gate { break }
                return try EncodedAnswer.json(["build": number], expires: clock.now.addingTimeInterval(3600))
            }
            /// Starts build `number` and waits until it is under way.
            func building(_ number: Int) async throws -> Task<EncodedAnswer, any Error> {
                let task = Task { try await cache.value("kier") }
                try await eventually("build \(number) began") { builds.withLockedValue { $0 } == number }
                return task
            }
            func finish(_ build: Task<EncodedAnswer, any Error>) async throws -> String {
                open.yield()
                return try await build.value.etag
            }

            let first = try await finish(try await building(1))
            await cache.changed(by: .fed)
            // The first to ask (the fast path) starts the build: those who poll meanwhile do not all go to the router.
            #expect(cache.cached("kier") == nil, "nobody builds it yet: asking starts it")
            try await eventually("asking started build 2") { builds.withLockedValue { $0 } == 2 }
            #expect(cache.cached("kier")?.etag == first)
            // Of two asking through `value` (the router), one waits for the new value, the other gets the one before.
            let answered = NIOLockedValueBox<[String]>([])
            for _ in 0..<2 {
                Task {
                    let etag = try await cache.value("kier").etag
                    answered.withLockedValue { $0.append(etag) }
                }
            }
            try await eventually("one answered without waiting for the build") {
                answered.withLockedValue { $0 } == [first]
            }
            open.yield()
            try await eventually("the other answered with the new value") { answered.withLockedValue { $0.count } == 2 }
            let secondTag = answered.withLockedValue { $0[1] }
            #expect(secondTag != first && cache.cached("kier")?.etag == secondTag)
            #expect(builds.withLockedValue { $0 } == 2)

            // Behind for longer than `staleFor`: wait.
            await cache.changed(by: .fed)
            clock.advance(by: .seconds(3))
            let third = try await building(3)
            #expect(cache.cached("kier") == nil)
            _ = try await finish(third)

            // An edit: wait, however recent.
            await cache.changed()
            let fourth = try await building(4)
            #expect(cache.cached("kier") == nil)
            let fourthTag = try await finish(fourth)
            #expect(cache.cached("kier") != nil)

            // Stale by itself half a second ago: asking starts the build, the next through `value` waits for it, the
            // others get it meanwhile.
            clock.advance(by: .milliseconds(3_600_500))
            #expect(cache.cached("kier") == nil)
            let fifth = try await building(5)
            #expect(cache.cached("kier")?.etag == fourthTag)
            _ = try await finish(fifth)
            // Stale three seconds ago: wait.
            clock.advance(by: .seconds(3603))
            let sixth = try await building(6)
            #expect(cache.cached("kier") == nil)
            _ = try await finish(sixth)
        }
    }

    /// A kept value goes, on this instance at once, when an event of a kind it names is published (whoever made the
    /// change reads it next, on PostgreSQL too, before the notification comes back); an event of another kind
    /// leaves it; and it goes by itself at its deadline.
    @Test(arguments: TestDatabase.engines)
    func droppedByItsEventsAtOnceAndByItsDeadline(engine: Database.Engine) async throws {
        try await TestDatabase.withDatabase(engine) { database in
            let clock = TestTime.clock()
            let hub = EventHub(database: database, capacity: 16, clock: clock, logger: TestDatabase.logger)
            let listening = Task { try await hub.run() }
            defer { listening.cancel() }
            try await eventually("the hub listens") { hub.noticeGeneration != nil }
            let reads = NIOLockedValueBox(0)
            let deadline = clock.now.addingTimeInterval(60)
            let kept = Kept<One, Int>(
                hub: hub, clock: clock, droppedBy: [.event(.room)], expires: { _ in deadline }
            ) {
                reads.withLockedValue { count in
                    count += 1
                    return count
                }
            }
            #expect(try await kept.value() == 1 && kept.cached(.value) == 1)
            await hub.publish(BookEvent(id: 1, change: .returned, status: nil))
            #expect(kept.cached(.value) == 1, "a book's event leaves the rooms")
            await hub.publish(RoomEvent(id: "mostafa", spots: 3, change: .spots))
            #expect(kept.cached(.value) == nil, "a room's event drops them at once")
            #expect(try await kept.value() == 2)
            clock.advance(by: .seconds(60))
            #expect(kept.cached(.value) == nil, "stale at its deadline")
            // Read again: that look started a build of its own (which `value` waits for), or, when that build ended
            // first, another (a value kept past this deadline is stale at once).
            #expect(try await kept.value() > 2)
        }
    }

    /// Full, what is kept stays: a client sending ever new keys (Host headers) gets its answer built, and does not
    /// push out everyone else's.
    @Test func fullItKeepsWhatItHas() async throws {
        try await TestDatabase.withDatabase(.sqlite) { database in
            let clock = TestTime.clock()
            let hub = EventHub(database: database, capacity: 16, clock: clock, logger: TestDatabase.logger)
            let kept = Kept<String, String>(hub: hub, clock: clock, droppedBy: [.notice("test")], capacity: 2) {
                "answer for " + $0
            }
            for host in ["quad.example", "a1", "a2", "a3"] {
                #expect(try await kept.value(host) == "answer for " + host)
            }
            #expect(kept.cached("quad.example") != nil && kept.cached("a1") != nil)
            #expect(kept.cached("a2") == nil && kept.cached("a3") == nil)
            await kept.changed()
            #expect(kept.cached("quad.example") == nil, "a change drops them all")
            _ = try await kept.value("a3")
            #expect(kept.cached("a3") != nil)
        }
    }
}
