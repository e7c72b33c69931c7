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
    /// The kinds of event it wants (all when nil), and whose stream it is (a username, lowercased; nil: a visitor).
    private let types: Set<String>?
    private let person: String?
    /// The hub's deliveries up to this mark were accounted for when it opened (`EventHub.Opening`).
    private var seen = Int64.max
    /// Frames written since the connection last could take more.
    private var behind = 0
    /// The loop's heartbeat tick (`LoopStreams.ticksPerBeat` a heartbeat) when it was last written a frame.
    private(set) var writtenAtTick = 0
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
        self.types = asked.types.map { Set($0.map(\.rawValue)) }
        self.person = person
        let loopStreams = streams.loopStreams(on: context.eventLoop)
        self.loopStreams = loopStreams
        // Joined first, so what the hub delivers from now on is kept for it; what it delivered before `seen` is in
        // the replay, or was before the client's last event.
        loopStreams.join(self)
        let opening = streams.hub.opening(after: asked.lastEventId, types: asked.types, person: person)
        seen = opening?.mark ?? .max
        context.write(NIOAny(HTTPServerResponsePart.head(head)), promise: nil)
        write(
            Self.chunk(
                EventStreams.opening(missedSome: opening?.missedSome ?? false, replay: opening?.replay ?? [])),
            tick: loopStreams.tick)
        flush()
        if opening == nil { end() }  // the hub closed: the server is stopping
    }

    /// Whether the hub's delivery `mark` of `event` is for this stream.
    func wants(_ event: Event, mark: Int64) -> Bool {
        mark > seen && types?.contains(event.type) != false && event.reaches(person)
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

    /// Writes `frame` without flushing it, at the loop's heartbeat `tick`; true when the stream now has something to
    /// flush that it had not.
    @discardableResult
    func write(_ frame: ByteBuffer, tick: Int) -> Bool {
        guard let context, let wire else { return false }
        writtenAtTick = tick
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
        loopStreams.leave(self)
        slot.release()
    }
}

/// The pipeline's event streams on one event loop: it follows the hub for all of them (`EventHub.follow`), writes
/// what the hub delivers in passes over the streams, each event framed once and each stream flushed once a pass, and one
/// heartbeat timer serves them all: a stream is sent the heartbeat's comment only once it has been silent for
/// between three quarters of a heartbeat and a whole one (the timer ticks four times a heartbeat).
///
/// Why: measured with `Benchmarks/run streams-10k`, a subscriber and an `execute` a stream cost the publishing thread
/// about 20 µs a stream: a booking took 220 ms to reach the last stream, and 630 ms while the demo's readings were
/// being delivered too. With a subscriber a stream and one `execute` a turn, the hub's pass over 10,000 subscribers,
/// on a third thread beside the two loops, still cost as much as a loop's writing: the booking took 0.19 s of Quad's
/// CPU and 154 ms to reach the last stream (p99). One follower a loop: 0.13-0.14 s and 95-135 ms (nine runs).
///
/// Why only the silent ones: a stream that was sent an event is as alive to a proxy as one sent a comment. On a
/// server whose events come more often than the heartbeat (the demo's readings every 3 s), a heartbeat to every
/// stream was a pass of one write a stream over each loop's streams every 15 s, all of it wasted, and a booking's
/// event that came during one waited behind it: the likeliest cause of the one fan-out of `Benchmarks/run
/// streams-10k` (issue 41) with a step in its deciles and a pass's worth of Quad's CPU more (see its README).
///
/// Why a pass goes `chunk` streams at a time, the loop's other work between: a pass over 5,000 streams is 40-80 ms of
/// the loop's time, and every request on the loop waited behind it. Measured with `Benchmarks/stream_fanout.py` (10,000
/// streams, three runs on each database): the booking whose event went out was answered (its 201) in 67-149 ms after
/// its event's pass, and in 5-22 ms with the pass in chunks; the event reached the streams as fast as before (p99
/// 65-99 ms before, 67-84 ms after). Only one pass is under way at a time, so every stream gets the events in the order
/// the hub delivered them.
final class LoopStreams: Sendable {
    private let loop: any EventLoop
    private let heartbeat: Duration
    /// How many streams a pass writes before letting the loop do anything else.
    private let chunk: Int
    /// What the hub delivered and the loop has not written yet, in the order it came, with each delivery's mark; how
    /// many streams are open on the loop (none: nothing is kept); and whether a pass is under way.
    private let shared = NIOLockedValueBox<Shared>(Shared())
    private let members: NIOLoopBound<Members>

    private struct Shared {
        var pending: [(event: Event, mark: Int64)] = []
        var open = 0
        /// A pass is under way, or about to start: what comes meanwhile waits for the one after.
        var passing = false
    }

    /// The streams open on the loop, and their heartbeat while there are any.
    private final class Members {
        var streams: [ObjectIdentifier: PipelineEventStream] = [:]
        var beat: RepeatedTask?
        /// The heartbeat timer's ticks so far.
        var ticks = 0
    }

    /// One pass: the events it writes, each framed once when a stream first wants it (the loop's own bytes, that no
    /// other thread retains), and the streams open when it started. One opened since had those events accounted for
    /// when it opened (`EventHub.Opening`); one gone since is written nothing (`PipelineEventStream.write`).
    private final class Pass {
        let batch: [(event: Event, mark: Int64)]
        var frames: [ByteBuffer?]
        let streams: [PipelineEventStream]

        init(batch: [(event: Event, mark: Int64)], streams: [PipelineEventStream]) {
            self.batch = batch
            self.frames = [ByteBuffer?](repeating: nil, count: batch.count)
            self.streams = streams
        }
    }

    /// The heartbeat timer's ticks in a heartbeat: a stream silent for this many ticks is sent the comment.
    static let ticksPerBeat = 4

    /// Streams a pass writes at a time: about 3 ms of the loop's time (10-15 µs a stream, most of it the write's
    /// system call).
    static let passChunk = 256

    /// On the loop: the heartbeat timer's ticks so far, to write a frame at.
    var tick: Int { members.value.ticks }

    init(loop: any EventLoop, heartbeat: Duration, hub: EventHub, chunk: Int = LoopStreams.passChunk) {
        self.loop = loop
        self.heartbeat = heartbeat
        self.chunk = max(1, chunk)
        self.members = NIOLoopBound(Members(), eventLoop: loop)
        // For the server's life: the hub closes as it stops, and then ends every stream.
        hub.follow(
            send: { [weak self] event, mark in self?.deliver(event, mark: mark) },
            finish: { [weak self] in
                guard let self else { return }
                loop.execute {
                    for stream in self.members.value.streams.values { stream.end() }
                }
            })
    }

    /// From any thread: `event` is written to the streams that want it by the next pass, with whatever else came
    /// meanwhile.
    private func deliver(_ event: Event, mark: Int64) {
        let start = shared.withLockedValue { shared -> Bool in
            guard shared.open > 0 else { return false }
            shared.pending.append((event, mark))
            if shared.passing { return false }
            shared.passing = true
            return true
        }
        if start { loop.execute { self.nextPass() } }
    }

    /// On the loop: a pass with what is pending, or none when nothing is (and the next delivery starts one).
    private func nextPass() {
        let batch = shared.withLockedValue { shared in
            defer { shared.pending.removeAll(keepingCapacity: false) }
            if shared.pending.isEmpty { shared.passing = false }
            return shared.pending
        }
        guard !batch.isEmpty else { return }
        write(NIOLoopBound(Pass(batch: batch, streams: Array(members.value.streams.values)), eventLoop: loop), from: 0)
    }

    /// Each stream of the pass from `start` on, `chunk` of them, is written what it wants of the batch, then flushed:
    /// one pass over the streams, since touching 10,000 streams' objects is itself part of the work (perf during
    /// `Benchmarks/run streams-10k` has cache-missing reads of the stream, its channel and its contexts among the
    /// loop's leading costs). Then the rest, once the loop has done what waited meanwhile.
    private func write(_ bound: NIOLoopBound<Pass>, from start: Int) {
        let pass = bound.value
        let end = min(start + chunk, pass.streams.count)
        let tick = members.value.ticks
        for stream in pass.streams[start..<end] {
            var wrote = false
            for (index, (event, mark)) in pass.batch.enumerated() where stream.wants(event, mark: mark) {
                let frame = pass.frames[index] ?? PipelineEventStream.chunk(EventStreams.format(event))
                pass.frames[index] = frame
                wrote = stream.write(frame, tick: tick) || wrote
            }
            if wrote { stream.flush() }
        }
        if end < pass.streams.count {
            loop.execute { self.write(bound, from: end) }
        } else {
            nextPass()
        }
    }

    /// On the loop, before the stream asks the hub for its opening.
    func join(_ stream: PipelineEventStream) {
        let members = members.value
        members.streams[ObjectIdentifier(stream)] = stream
        shared.withLockedValue { $0.open += 1 }
        guard members.beat == nil else { return }
        let every = TimeAmount.nanoseconds(TimeAmount(heartbeat).nanoseconds / Int64(Self.ticksPerBeat))
        members.beat = loop.scheduleRepeatedTask(initialDelay: every, delay: every) { [self] _ in
            let members = self.members.value
            members.ticks += 1
            for stream in members.streams.values
            where members.ticks - stream.writtenAtTick >= Self.ticksPerBeat
                && stream.write(Self.heartbeatFrame, tick: members.ticks)
            {
                stream.flush()
            }
        }
    }

    /// On the loop.
    func leave(_ stream: PipelineEventStream) {
        let members = members.value
        guard members.streams.removeValue(forKey: ObjectIdentifier(stream)) != nil else { return }
        shared.withLockedValue { $0.open -= 1 }
        if members.streams.isEmpty {
            members.beat?.cancel()
            members.beat = nil
        }
    }

    private static let heartbeatFrame = PipelineEventStream.chunk(EventStreams.heartbeatFrame)
}
