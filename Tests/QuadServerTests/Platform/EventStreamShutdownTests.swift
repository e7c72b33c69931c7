import Foundation
import NIOCore
import NIOPosix
import QuadTestSupport
import Testing

/// A server that stops ends its open event streams at once: draining connections does not wait for clients that
/// would otherwise hold them for ever.
@Suite struct EventStreamShutdownTests {
    @Test(.timeLimit(.minutes(2)))
    func stoppingTheServerEndsOpenStreams() async throws {
        let server = try await LiveServer.start()
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: server.port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        let received = try await channel.executeThenClose { inbound, outbound in
            try await outbound.write(
                ByteBuffer(string: "GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n"))
            var received = ""
            var iterator = inbound.makeAsyncIterator()
            while !received.contains("retry:"), let chunk = try await iterator.next() {
                received += String(buffer: chunk)
            }
            #expect(received.hasPrefix("HTTP/1.1 200"), "the stream is open: \(received.prefix(80))")
            let stopping = Task { await server.stop() }
            // The server closes the connection: the read ends, well before any heartbeat.
            while let chunk = try await iterator.next() { received += String(buffer: chunk) }
            await stopping.value
            return received
        }
        #expect(received.contains("retry:"))
    }
}
