import Foundation
import NIOConcurrencyHelpers
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
            let cache = Kept<String, EncodedAnswer>(hub: hub, clock: clock, droppedBy: [.notice("test")])
            let builds = NIOLockedValueBox(0)
            let (gate, open) = AsyncStream<Void>.makeStream()
            let build: @Sendable () async throws -> EncodedAnswer = {
                let number = builds.withLockedValue { count in
                    count += 1
                    return count
                }
                for await _ in gate { break }
                return try EncodedAnswer.json(["build": number])
            }
            let etags = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<20 { group.addTask { try await cache.value("kier", build: build).etag } }
                try await eventually("the build started") { builds.withLockedValue { $0 } == 1 }
                open.yield()
                return try await group.reduce(into: [String]()) { $0.append($1) }
            }
            #expect(builds.withLockedValue { $0 } == 1 && Set(etags).count == 1)
            #expect(cache.cached("kier")?.etag == etags[0])

            await cache.changed()
            #expect(cache.cached("kier") == nil)
            let during = Task { try await cache.value("kier", build: build) }
            try await eventually("a build began") { builds.withLockedValue { $0 } == 2 }
            await cache.changed()
            open.yield()
            _ = try await during.value
            #expect(cache.cached("kier") == nil, "built across a change: not kept")
            open.yield()
            let fresh = try await cache.value("kier", build: build)
            #expect(builds.withLockedValue { $0 } == 3 && cache.cached("kier")?.etag == fresh.etag)
        }
    }
}
