import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

/// One `GET /api/events` stream answered in the channel pipeline (`FastPath`): the same frames as the
/// router's stream (`EventStreams`), written by the connection's event loop as the hub delivers them, without a
/// task, an async sequence or a router request held open for the stream's life.
///
/// Why: measured with `Benchmarks/run streams-10k`, a stream through the router held about 70 kB (most of it the
/// connection task's frames, grown through the middleware chain and the router and kept while the stream lasts,
/// then the stream's two tasks and buffers): 740 MB for 10,000 streams, where the issue asks for at most 200 MB.
///
/// It lives on its channel's event loop. It ends, and gives everything back (the hub subscription, its place among
/// the loop's streams, the client's slot), when the connection closes, when the server stops
/// (`ChannelShouldQuiesceEvent`, or the hub closing), and when the client stops reading: past
/// `EventStreams.backlog` frames written while the connection could take no more, it is closed, as the router's
/// stream is cut off, and the client reconnects with its last id.
final class PipelineEventStream {
    private var context: ChannelHandlerContext?
    /// Where frames are written: the response encoder's place, past it (`chunk`).
    private var wire: ChannelHandlerContext?
    private let slot: StreamSlot
    private let loopStreams: LoopStreams
    private var cancel: (@Sendable () -> Void)?
    /// Frames written since the connection last could take more.
    private var behind = 0
    private var unflushed = false

    /// Answers on `context` with `head` (through `wire`, the response encoder, which makes the answer chunked), then
    /// the stream's frames, written past the encoder: what the client missed, and each event from now on, with a
    /// heartbeat comment between.
    init(
        context: ChannelHandlerContext, wire: ChannelHandlerContext, head: HTTPResponseHead, slot: StreamSlot,
        streams: EventStreams, asked: EventStreams.Asked, person: String?
    ) {
        self.context = context
        self.wire = wire
        self.slot = slot
        let loop = context.eventLoop
        let loopStreams = streams.loopStreams(on: loop)
        self.loopStreams = loopStreams
        let this = NIOLoopBound(self, eventLoop: loop)
        let listening = streams.hub.listen(
            after: asked.lastEventId, types: asked.types, person: person,
            send: { event in
                loopStreams.deliver(streams.frame(event), to: this)
                return true
            },
            finish: { loop.execute { this.value.end() } })
        cancel = listening.cancel
        loopStreams.join(self)
        context.write(NIOAny(HTTPServerResponsePart.head(head)), promise: nil)
        write(Self.chunk(EventStreams.opening(missedSome: listening.missedSome, replay: listening.replay)))
        flush()
    }

    /// `text` framed as one chunk of a chunked answer, as the response encoder frames a body part, in one buffer.
    ///
    /// Why: the encoder writes a part as three writes (size, bytes, end of line), each an entry in the channel's
    /// pending writes; measured with `Benchmarks/run streams-10k` (heaptrack), those entries grew every stream's
    /// queue to 900 bytes. Framed once per event here, each stream queues one shared buffer.
    static func chunk(_ text: String) -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.reserveCapacity(text.utf8.count + 12)
        buffer.writeString(String(text.utf8.count, radix: 16))
        buffer.writeStaticString("\r\n")
        buffer.writeString(text)
        buffer.writeStaticString("\r\n")
        return buffer
    }

    /// Writes `frame` without flushing it; true when the stream now has something to flush that it had not.
    @discardableResult
    func write(_ frame: ByteBuffer) -> Bool {
        guard let context, let wire else { return false }
        if context.channel.isWritable {
            behind = 0
        } else {
            behind += 1
            if behind > EventStreams.backlog {
                stop()
                context.close(promise: nil)
                return false
            }
        }
        wire.write(NIOAny(frame), promise: nil)
        defer { unflushed = true }
        return !unflushed
    }

    func flush() {
        guard let context, unflushed else { return }
        unflushed = false
        context.flush()
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
        wire = nil
        cancel?()
        cancel = nil
        loopStreams.leave(self)
        slot.release()
    }
}

/// The pipeline's event streams on one event loop: the hub's deliveries to them are written in one turn of the
/// loop, each stream flushed once, and one heartbeat timer serves them all.
///
/// Why: measured with `Benchmarks/run streams-10k`, handing each stream its event with an `execute` of its own cost
/// the publishing thread about 20 µs a stream (the loop woken and its queue locked 10,000 times): a booking took
/// 220 ms to reach the last stream, and 630 ms while the demo's readings were being delivered too.
final class LoopStreams: Sendable {
    private let loop: any EventLoop
    private let heartbeat: Duration
    /// Frames delivered and not yet written, with their streams, in the order the hub delivered them.
    private let pending = NIOLockedValueBox<[(frame: ByteBuffer, stream: NIOLoopBound<PipelineEventStream>)]>([])
    private let members: NIOLoopBound<Members>

    /// The streams open on the loop, and their heartbeat while there are any.
    private final class Members {
        var streams: [ObjectIdentifier: PipelineEventStream] = [:]
        var beat: RepeatedTask?
    }

    init(loop: any EventLoop, heartbeat: Duration) {
        self.loop = loop
        self.heartbeat = heartbeat
        self.members = NIOLoopBound(Members(), eventLoop: loop)
    }

    /// From any thread: `frame` is written to `stream` at the loop's next turn, with whatever else came meanwhile.
    func deliver(_ frame: ByteBuffer, to stream: NIOLoopBound<PipelineEventStream>) {
        let first = pending.withLockedValue { pending in
            pending.append((frame, stream))
            return pending.count == 1
        }
        if first { loop.execute { self.writePending() } }
    }

    private func writePending() {
        let batch = pending.withLockedValue { pending in
            defer { pending.removeAll(keepingCapacity: false) }
            return pending
        }
        var touched: [PipelineEventStream] = []
        for (frame, stream) in batch where stream.value.write(frame) { touched.append(stream.value) }
        for stream in touched { stream.flush() }
    }

    /// On the loop.
    func join(_ stream: PipelineEventStream) {
        let members = members.value
        members.streams[ObjectIdentifier(stream)] = stream
        guard members.beat == nil else { return }
        let every = TimeAmount(heartbeat)
        members.beat = loop.scheduleRepeatedTask(initialDelay: every, delay: every) { [self] _ in
            for stream in self.members.value.streams.values where stream.write(Self.heartbeatFrame) {
                stream.flush()
            }
        }
    }

    /// On the loop.
    func leave(_ stream: PipelineEventStream) {
        let members = members.value
        members.streams[ObjectIdentifier(stream)] = nil
        if members.streams.isEmpty {
            members.beat?.cancel()
            members.beat = nil
        }
    }

    private static let heartbeatFrame = PipelineEventStream.chunk(EventStreams.heartbeatFrame)
}
