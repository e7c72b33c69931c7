import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import QuadTestSupport
import Testing

@testable import QuadPlatform

/// A pass of the loop's streams (`LoopStreams`) writes a few of them at a time, and the loop does what else waits
/// between: a request's answer, a database connection's reply. What the hub delivers during a pass waits for the next,
/// so every stream gets every event once, in the order the hub delivered them.
@Suite struct LoopStreamsPassTests {
    @Test func theLoopWorksBetweenAPassesStreamsAndEventsKeepTheirOrder() async throws {
        try await TestDatabase.withDatabase(.sqlite) { database in
            let hub = EventHub(database: database, capacity: 64, clock: TestTime.clock(), logger: TestDatabase.logger)
            // Two streams at a time: five streams are a pass of three turns of the loop.
            let streams = EventStreams(hub: hub, heartbeat: .seconds(60), maxPerClient: 8, passChunk: 2)
            let loop = EmbeddedEventLoop()
            let opened = try (0..<5).map { _ in
                try StreamHeartbeatTests.Opened(on: loop, streams: streams, types: nil)
            }
            let received = NIOLockedValueBox([String](repeating: "", count: opened.count))
            let bound = NIOLoopBound(opened, eventLoop: loop)
            @Sendable func readAll() {
                received.withLockedValue { texts in
                    for (index, stream) in bound.value.enumerated() { texts[index] += (try? stream.written()) ?? "" }
                }
            }

            await hub.publishForTesting("test", "first")
            // Work that came to the loop after the event: it runs once the pass has written its first two streams,
            // and an event delivered then goes out after the first, to every stream.
            let writtenBefore = NIOLockedValueBox(-1)
            loop.execute {
                readAll()
                writtenBefore.withLockedValue { count in
                    count = received.withLockedValue { $0.filter { $0.contains("first") }.count }
                }
                hub.deliver(Event(id: Int64.max - 1, type: "test", data: #""second""#))
            }
            #expect(received.withLockedValue { $0.allSatisfy(\.isEmpty) }, "nothing is written before the loop turns")
            loop.run()
            readAll()

            #expect(writtenBefore.withLockedValue { $0 } == 2, "the loop's other work waited for two streams only")
            for text in received.withLockedValue({ $0 }) {
                let first = try #require(text.range(of: #"data: "first""#), "every stream gets the first: \(text)")
                let second = try #require(text.range(of: #"data: "second""#), "and the second: \(text)")
                #expect(first.upperBound <= second.lowerBound, "in the hub's order: \(text)")
                #expect(text.components(separatedBy: "event: test").count == 3, "each once: \(text)")
            }
            for stream in opened { try stream.close() }
            try await loop.shutdownGracefully()
        }
    }
}
