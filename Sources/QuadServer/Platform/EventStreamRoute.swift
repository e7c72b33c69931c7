import Foundation
import HTTPTypes
import Hummingbird
import NIOConcurrencyHelpers
import ServiceLifecycle

/// `GET /api/events`: the event hub as Server-Sent Events.
///
/// Every event carries its `id:`; a client reconnecting with `Last-Event-ID` (header, or `lastEventId` in the
/// query for clients that cannot set headers) first gets what it missed, or a `reset` event when that is
/// older than the hub remembers. A comment every heartbeat keeps proxies from closing an idle stream.
struct EventStreamRoute: Sendable {
    let hub: EventHub
    let heartbeat: Duration
    let maxStreamsPerClient: Int
    private let open = NIOLockedValueBox<[String: Int]>([:])
    /// How long a client waits before reconnecting, in milliseconds.
    static let retry = 2000

    init(hub: EventHub, heartbeat: Duration, maxStreamsPerClient: Int) {
        self.hub = hub
        self.heartbeat = heartbeat
        self.maxStreamsPerClient = maxStreamsPerClient
    }

    private enum Frame: Sendable {
        case event(Event)
        case heartbeat
    }

    func register(on routes: Routes) {
        routes.api(.get, "/api/events") { request, context in try self.stream(request, context) }
    }

    func stream(_ request: Request, _ context: AppRequestContext) throws -> Response {
        let headers: HTTPFields = [
            .contentType: "text/event-stream; charset=utf-8", .cacheControl: "no-cache",
            HTTPField.Name("X-Accel-Buffering")!: "no",
        ]
        // A HEAD has no body to stream: it takes no slot and subscribes to nothing.
        guard request.method == .get else { return Response(status: .ok, headers: headers) }
        guard let slot = StreamSlot(client: context.clientKey, limit: maxStreamsPerClient, open: open) else {
            throw Problem(
                .tooManyRequests, type: "too-many-streams", title: "Too many event streams",
                detail: "This client already has \(maxStreamsPerClient) event streams open; close one first.",
                headers: [.retryAfter: "30"])
        }
        let lastEventId = (request.headers[.lastEventID] ?? request.uri.queryParameters.get("lastEventId"))
            .flatMap { Int64($0.trimmingCharacters(in: .whitespaces)) }
        let types = request.uri.queryParameters.get("types").map {
            Set($0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
        }
        let heartbeat = heartbeat
        let hub = hub

        return Response(
            status: .ok, headers: headers,
            body: .init { writer in
                // Subscribed only once the body is written, so an answer never written holds no subscriber.
                let subscription = hub.subscribe(after: lastEventId, types: types)
                defer {
                    subscription.cancel()
                    slot.release()
                }
                var head = "retry: \(Self.retry)\n\n"
                if subscription.missedSome { head += "event: reset\ndata: {}\n\n" }
                for event in subscription.replay { head += Self.format(event) }
                try await writer.write(ByteBuffer(string: head))

                let (frames, continuation) = AsyncStream<Frame>.makeStream()
                let forward = Task {
                    for await event in subscription.events { continuation.yield(.event(event)) }
                    continuation.finish()
                }
                let beat = Task {
                    while !Task.isCancelled {
                        try await Task.sleep(for: heartbeat)
                        continuation.yield(.heartbeat)
                    }
                }
                defer {
                    forward.cancel()
                    beat.cancel()
                }
                // Shutdown ends the stream, so draining connections does not wait on it.
                try await withGracefulShutdownHandler {
                    for await frame in frames {
                        switch frame {
                        case .event(let event): try await writer.write(ByteBuffer(string: Self.format(event)))
                        case .heartbeat: try await writer.write(ByteBuffer(string: ": heartbeat\n\n"))
                        }
                    }
                } onGracefulShutdown: {
                    continuation.finish()
                }
                try await writer.finish(nil)
            })
    }

    static func format(_ event: Event) -> String {
        "id: \(event.id)\nevent: \(event.type)\ndata: \(event.data)\n\n"
    }
}

/// One of a client's event-stream slots, taken when the stream is answered. The stream gives it back when it
/// ends (finished, disconnected, cancelled); an answer whose body is never written (the connection closed
/// first) gives it back when it is dropped.
private final class StreamSlot: Sendable {
    private let client: String
    private let open: NIOLockedValueBox<[String: Int]>
    private let released = NIOLockedValueBox(false)

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

    func release() {
        guard
            released.withLockedValue({ done in
                defer { done = true }; return !done
            })
        else { return }
        open.withLockedValue { open in
            open[client, default: 1] -= 1
            if open[client] == 0 { open[client] = nil }
        }
    }

    deinit { release() }
}
