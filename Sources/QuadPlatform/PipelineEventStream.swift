import NIOCore
import NIOHTTP1

/// One `GET /api/events` stream answered in the channel pipeline (`SnapshotFastPath`): the same frames as the
/// router's stream (`EventStreams`), written by the connection's event loop as the hub delivers them, without a
/// task, an async sequence or a router request held open for the stream's life.
///
/// Why: measured with `Benchmarks/run streams-10k`, a stream through the router held about 70 kB (most of it the
/// connection task's frames, grown through the middleware chain and the router and kept while the stream lasts,
/// then the stream's two tasks and buffers): 740 MB for 10,000 streams, where the issue asks for at most 200 MB.
///
/// It lives on its channel's event loop. It ends, and gives everything back (the hub subscription, the heartbeat,
/// the client's slot), when the connection closes, when the server stops (`ChannelShouldQuiesceEvent`, or the hub
/// closing), and when the client stops reading: past `EventStreams.backlog` frames written while the connection
/// could take no more, it is closed, as the router's stream is cut off, and the client reconnects with its last id.
final class PipelineEventStream {
    private var context: ChannelHandlerContext?
    private let slot: StreamSlot
    private var cancel: (@Sendable () -> Void)?
    private var heartbeat: RepeatedTask?
    /// Frames written since the connection last could take more.
    private var behind = 0

    /// Answers on `context` with `head`, then the stream's frames: what the client missed, and each event from
    /// now on, with a heartbeat comment between.
    init(
        context: ChannelHandlerContext, head: HTTPResponseHead, slot: StreamSlot, streams: EventStreams,
        asked: EventStreams.Asked
    ) {
        self.context = context
        self.slot = slot
        let loop = context.eventLoop
        let this = NIOLoopBound(self, eventLoop: loop)
        let listening = streams.hub.listen(
            after: asked.lastEventId, types: asked.types,
            send: { event in
                let frame = streams.frame(event)
                loop.execute { this.value.write(frame) }
                return true
            },
            finish: { loop.execute { this.value.end() } })
        cancel = listening.cancel
        context.write(NIOAny(HTTPServerResponsePart.head(head)), promise: nil)
        write(ByteBuffer(string: EventStreams.opening(missedSome: listening.missedSome, replay: listening.replay)))
        let every = TimeAmount(streams.heartbeat)
        heartbeat = loop.scheduleRepeatedTask(initialDelay: every, delay: every) { _ in
            this.value.write(Self.heartbeatFrame)
        }
    }

    private static let heartbeatFrame = ByteBuffer(string: EventStreams.heartbeatFrame)

    private func write(_ frame: ByteBuffer) {
        guard let context else { return }
        if context.channel.isWritable {
            behind = 0
        } else {
            behind += 1
            if behind > EventStreams.backlog {
                stop()
                context.close(promise: nil)
                return
            }
        }
        context.writeAndFlush(NIOAny(HTTPServerResponsePart.body(.byteBuffer(frame))), promise: nil)
    }

    /// Ends the stream (the server stopping): its last chunk, then the connection closes, without waiting for a
    /// client that no longer reads.
    func end() {
        guard let context else { return }
        stop()
        context.writeAndFlush(NIOAny(HTTPServerResponsePart.end(nil)), promise: nil)
        context.close(promise: nil)
    }

    /// Gives everything back; nothing more is written. Safe to call more than once.
    func stop() {
        guard context != nil else { return }
        context = nil
        heartbeat?.cancel()
        heartbeat = nil
        cancel?()
        cancel = nil
        slot.release()
    }
}
