import NIOCore
import NIOEmbedded
import NIOHTTP1
import QuadTestSupport
import Testing

@testable import QuadPlatform

/// The heartbeat of the streams answered in the pipeline (`LoopStreams`) goes only to a stream that has been silent:
/// never more than a heartbeat without a byte, and no comment where an event has just been.
@Suite struct StreamHeartbeatTests {
    /// A stream of the fast path's, on a channel of its own on `loop` (the time of which the test moves on).
    struct Opened {
        let channel: EmbeddedChannel
        let stream: PipelineEventStream

        init(on loop: EmbeddedEventLoop, streams: EventStreams, types: String?) throws {
            channel = EmbeddedChannel(loop: loop)
            try channel.pipeline.syncOperations.addHandler(Wire())
            let context = try channel.pipeline.syncOperations.context(handlerType: Wire.self)
            let slot = try #require(streams.slot(for: "10.0.0.9"))
            stream = PipelineEventStream(
                context: context, wire: context, head: HTTPResponseHead(version: .http1_1, status: .ok), slot: slot,
                streams: streams, asked: .init(lastEventId: nil, types: types), person: nil)
            _ = try channel.readOutbound(as: HTTPServerResponsePart.self)
            #expect(try written().contains("retry: "), "its opening")
        }

        /// What the stream was written since last asked, as text.
        func written() throws -> String {
            var text = ""
            while let buffer = try channel.readOutbound(as: ByteBuffer.self) { text += String(buffer: buffer) }
            return text
        }

        func close() throws {
            stream.stop()
            _ = try channel.finish()
        }
    }

    /// Where the stream writes: the response encoder's place in the server's pipeline.
    final class Wire: ChannelOutboundHandler, Sendable {
        typealias OutboundIn = Any
    }

    @Test func aHeartbeatGoesToAStreamOnlyOnceItHasBeenSilentForMostOfOne() async throws {
        try await TestDatabase.withDatabase(.sqlite) { database in
            let hub = EventHub(database: database, capacity: 64, clock: TestTime.clock(), logger: TestDatabase.logger)
            // A heartbeat of 4 s: the timer ticks each second.
            let streams = EventStreams(hub: hub, heartbeat: .seconds(4), maxPerClient: 2)
            let loop = EmbeddedEventLoop()
            // One stream hears every event, the other only car parks'.
            let busy = try Opened(on: loop, streams: streams, types: nil)
            let quiet = try Opened(on: loop, streams: streams, types: "parking")

            loop.advanceTime(by: .milliseconds(2500))
            await hub.publishForTesting("room", ["id": "helmold"])
            loop.run()
            #expect(try busy.written().contains("event: room"))
            #expect(try quiet.written().isEmpty)

            // 4 s on, the stream that heard nothing is sent the comment; the one sent an event 1.5 s ago is not.
            loop.advanceTime(by: .milliseconds(1500))
            #expect(try quiet.written().contains(": heartbeat"))
            #expect(try busy.written().isEmpty)
            // Nor 3 s after its event,
            loop.advanceTime(by: .milliseconds(1500))
            #expect(try busy.written().isEmpty)
            // but within a heartbeat of it.
            loop.advanceTime(by: .milliseconds(1000))
            #expect(try busy.written().contains(": heartbeat"))
            // A silent stream is sent one every heartbeat (4 s after its last, at 8 s).
            #expect(try quiet.written().isEmpty)
            loop.advanceTime(by: .milliseconds(1500))
            #expect(try quiet.written().contains(": heartbeat"))

            try busy.close()
            try quiet.close()
            try await loop.shutdownGracefully()
        }
    }
}
