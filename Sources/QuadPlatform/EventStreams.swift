import Foundation
import NIOConcurrencyHelpers
import NIOCore
import OpenAPIRuntime
import QuadCore
import ServiceLifecycle

/// `GET /api/events` (`streamEvents`): the event hub as Server-Sent Events, as the body of a generated answer.
///
/// Every event carries its `id:`; a client reconnecting with `Last-Event-ID` (header, or `lastEventId` in the
/// query for clients that cannot set headers) first gets what it missed, or a `reset` event when that is
/// older than the hub remembers. A comment every heartbeat keeps proxies from closing an idle stream, and tells
/// the server when a client has gone.
///
/// A client holds at most `maxPerClient` streams. A stream's slot is taken when it is answered and given back
/// when its body ends however it ends (finished, the client gone, the server stopping) or is dropped unwritten
/// (a HEAD, a connection closed first). It subscribes to the hub only once its body is read.
final class EventStreams: Sendable {
    package let hub: EventHub
    let heartbeat: Duration
    let maxPerClient: Int
    private let open = NIOLockedValueBox<[String: Int]>([:])
    /// How long a client waits before reconnecting, in milliseconds.
    package static let retry = 2000
    /// Frames kept for a reader that is not reading, at most.
    static let backlog = 256

    /// Streams a pass of `LoopStreams` writes at a time (fewer in tests, to see the loop's other work between).
    let passChunk: Int

    package init(hub: EventHub, heartbeat: Duration, maxPerClient: Int, passChunk: Int = LoopStreams.passChunk) {
        self.hub = hub
        self.heartbeat = heartbeat
        self.maxPerClient = maxPerClient
        self.passChunk = passChunk
    }

    /// What a stream's request asks for, read the same way by the router and by `FastPath`.
    struct Asked: Sendable {
        /// The last event the client saw (`Last-Event-ID`, or `lastEventId` in the query).
        var lastEventId: Int64?
        /// The kinds of event it wants; all when nil (a word that names no kind asks for nothing).
        var types: Set<EventKind>?

        init(lastEventId: String?, types: String?) {
            self.lastEventId = lastEventId.flatMap { Int64($0.trimmingCharacters(in: .whitespaces)) }
            self.types = types.map {
                Set(
                    $0.split(separator: ",").compactMap { EventKind(rawValue: $0.trimmingCharacters(in: .whitespaces)) }
                )
            }
        }
    }

    /// A stream for `client`, or a 429 problem when it holds its share already.
    func open(client: String, person: String?, asked: Asked) throws -> HTTPBody {
        guard let slot = slot(for: client) else {
            throw Problem(
                .tooManyRequests, type: "too-many-streams", title: "Too many event streams",
                detail: "This client already has \(maxPerClient) event streams open; close one first.",
                headers: [.retryAfter: "30"])
        }
        let frames = Frames(slot: slot, hub: hub, heartbeat: heartbeat, asked: asked, person: person)
        return HTTPBody(frames, length: .unknown, iterationBehavior: .single)
    }

    /// One of `client`'s stream slots, or nil when it holds them all.
    func slot(for client: String) -> StreamSlot? { StreamSlot(client: client, limit: maxPerClient, open: open) }

    /// A stream's first frames: how long to wait before reconnecting, a `reset` when the client missed more than
    /// the hub remembers, then what it missed.
    static func opening(missedSome: Bool, replay: [Event]) -> String {
        var head = "retry: \(retry)\n\n"
        if missedSome { head += "event: reset\ndata: {}\n\n" }
        for event in replay { head += format(event) }
        return head
    }

    static let heartbeatFrame = ": heartbeat\n\n"

    /// How many streams `client` holds (for tests).
    package func held(by client: String) -> Int { open.withLockedValue { $0[client] ?? 0 } }

    /// Every stream open now, all clients together (`/metrics`).
    var total: Int { open.withLockedValue { $0.values.reduce(0, +) } }

    package static func format(_ event: Event) -> String {
        "id: \(event.id)\nevent: \(event.type)\ndata: \(event.data)\n\n"
    }

    /// The pipeline's streams on each event loop (`LoopStreams`), by loop.
    private let loops = NIOLockedValueBox<[ObjectIdentifier: LoopStreams]>([:])

    func loopStreams(on loop: any EventLoop) -> LoopStreams {
        loops.withLockedValue { loops in
            if let found = loops[ObjectIdentifier(loop)] { return found }
            let made = LoopStreams(loop: loop, heartbeat: heartbeat, hub: hub, chunk: passChunk)
            loops[ObjectIdentifier(loop)] = made
            return made
        }
    }

    /// The stream's frames; the subscription and the heartbeat start when it is first read.
    struct Frames: AsyncSequence, Sendable {
        package typealias Element = ArraySlice<UInt8>
        package let slot: StreamSlot
        package let hub: EventHub
        let heartbeat: Duration
        let asked: Asked
        /// Whose stream it is (a username, lowercased): their private events come on it too.
        let person: String?

        /// Reads the frames; dropping it (the body no longer read) ends the stream, since the tasks that feed it
        /// would otherwise keep it alive.
        struct Iterator: AsyncIteratorProtocol {
            var frames: AsyncStream<ArraySlice<UInt8>>.Iterator
            package let end: End

            package mutating func next() async -> ArraySlice<UInt8>? { await frames.next() }
        }

        final class End: Sendable {
            package let continuation: AsyncStream<ArraySlice<UInt8>>.Continuation
            package init(_ continuation: AsyncStream<ArraySlice<UInt8>>.Continuation) {
                self.continuation = continuation
            }
            deinit { continuation.finish() }
        }

        func makeAsyncIterator() -> Iterator {
            // A reader that falls this far behind (it stopped reading) is cut off rather than buffered without
            // end: it reconnects with its last id and resumes from the hub's memory.
            let (frames, continuation) = AsyncStream<ArraySlice<UInt8>>.makeStream(
                bufferingPolicy: .bufferingOldest(EventStreams.backlog))
            let subscription = hub.subscribe(after: asked.lastEventId, types: asked.types, person: person)
            let opening = EventStreams.opening(missedSome: subscription.missedSome, replay: subscription.replay)
            continuation.yield(ArraySlice(opening.utf8))
            // The server stopping ends the stream, so draining connections does not wait on it; so does the hub
            // closing every subscription. The handler is registered once a stream (the task inherits the
            // connection's shutdown context), not once a frame: each registration is a turn of one lock shared by
            // every stream, and removing one shifts an array as long as the streams open.
            let forward = Task {
                await withGracefulShutdownHandler {
                    for await event in subscription.events {
                        if case .dropped = continuation.yield(ArraySlice(EventStreams.format(event).utf8)) { break }
                    }
                } onGracefulShutdown: {
                    continuation.finish()
                }
                continuation.finish()
            }
            let heartbeat = heartbeat
            let beat = Task {
                while !Task.isCancelled {
                    try await Task.sleep(for: heartbeat)
                    if case .dropped = continuation.yield(ArraySlice(EventStreams.heartbeatFrame.utf8)) {
                        continuation.finish()
                    }
                }
            }
            let slot = slot
            // Finished, cancelled, or no longer read (the client gone, a write failed): all is given back.
            continuation.onTermination = { _ in
                forward.cancel()
                beat.cancel()
                subscription.cancel()
                slot.release()
            }
            return Iterator(frames: frames.makeAsyncIterator(), end: End(continuation))
        }
    }
}

/// One of a client's event-stream slots. Given back once, by `release()` or when the last holder lets go.
///
/// `released` is read and written only under `open`'s lock (hence unchecked): a lock of its own was one more
/// allocation for each of 10,000 open streams.
final class StreamSlot: @unchecked Sendable {
    private let client: String
    private let open: NIOLockedValueBox<[String: Int]>
    private var released = false

    init?(client: String, limit: Int, open: NIOLockedValueBox<[String: Int]>) {
        let admitted = open.withLockedValue { open -> Bool in
            guard open[client, default: 0] < limit else { return false }
            open[client, default: 0] += 1
            return true
        }
        guard admitted else { return nil }
        self.client = client
        self.open = open
    }

    package func release() {
        open.withLockedValue { open in
            guard !released else { return }
            released = true
            open[client, default: 1] -= 1
            if open[client] == 0 { open[client] = nil }
        }
    }

    deinit { release() }
}
