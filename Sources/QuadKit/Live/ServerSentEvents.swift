import Foundation
import OpenAPIRuntime
import QuadCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One event from `/api/events`.
public struct ServerEvent: Sendable, Equatable {
    public var id: String?
    /// `room`, `special`, `book`, … or `reset` (events were missed: reload), as the frame names it.
    public var type: String
    /// Its kind, when this kit knows it (a newer server may send kinds it does not).
    public var kind: EventKind? { EventKind(rawValue: type) }
    public var data: String

    public init(id: String?, type: String, data: String) {
        self.id = id
        self.type = type
        self.data = data
    }

    /// The JSON payload decoded as `T`.
    public func decode<T: Decodable>(_: T.Type) -> T? {
        try? JSONDecoder().decode(T.self, from: Data(data.utf8))
    }
}

/// What the kit keeps across one connection's events, which OpenAPIRuntime's text/event-stream decoder
/// (`asDecodedServerSentEvents()`) gives one by one with every field reset: the event id carries over to the
/// events after it (as the format says) and the server's `retry:` advice stays until it gives another.
public struct ServerEventState: Sendable {
    private var id: String?
    /// The last id seen: what to send as `Last-Event-ID` on reconnecting.
    public private(set) var lastEventId: String?
    /// The server's `retry:` advice, when it gave one.
    public private(set) var retry: Duration?

    public init(lastEventId: String? = nil) {
        self.lastEventId = lastEventId
    }

    /// The kit's event for a decoded one; nil for one with neither data nor type (the `retry:` head, a
    /// heartbeat's blank line).
    public mutating func take(_ event: ServerSentEvent) -> ServerEvent? {
        if let milliseconds = event.retry { retry = .milliseconds(milliseconds) }
        if let value = event.id, !value.contains("\0") { id = value }
        guard event.data != nil || event.event != nil else { return nil }
        if let id { lastEventId = id }
        return ServerEvent(id: id, type: event.event ?? "message", data: event.data ?? "")
    }
}

/// Bytes of a long-lived response as they arrive, through URLSession's delegate (FoundationNetworking on
/// Linux has no `bytes(for:)`).
final class StreamingDownload: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private let continuation: AsyncThrowingStream<ArraySlice<UInt8>, any Error>.Continuation
    let chunks: AsyncThrowingStream<ArraySlice<UInt8>, any Error>
    private var session: URLSession?
    private var task: URLSessionDataTask?
    private let lock = NSLock()

    init(request: URLRequest) {
        (chunks, continuation) = AsyncThrowingStream<ArraySlice<UInt8>, any Error>.makeStream()
        super.init()
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.timeoutIntervalForRequest = 90
        configuration.timeoutIntervalForResource = 7 * 24 * 3600
        let session = URLSession(configuration: configuration, delegate: self, delegateQueue: nil)
        let task = session.dataTask(with: request)
        lock.withLock {
            self.session = session
            self.task = task
        }
        continuation.onTermination = { [weak self] _ in self?.cancel() }
        task.resume()
    }

    func cancel() {
        let (task, session) = lock.withLock { (self.task, self.session) }
        task?.cancel()
        session?.invalidateAndCancel()
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        if let http = response as? HTTPURLResponse, http.statusCode != 200 {
            continuation.finish(
                throwing: EventStreamError.status(http.statusCode, http.value(forHTTPHeaderField: "Retry-After")))
            completionHandler(.cancel)
            return
        }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        continuation.yield(ArraySlice(data))
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        if let error { continuation.finish(throwing: error) } else { continuation.finish() }
        session.finishTasksAndInvalidate()
    }
}

enum EventStreamError: Error {
    case status(Int, String?)
}

/// A live connection to `/api/events` that stays up: it reconnects with backoff after any drop, sending
/// `Last-Event-ID` so nothing published meanwhile is lost (a `reset` event says too much was missed).
public actor EventStreamClient {
    public enum Status: Sendable, Equatable {
        case disconnected
        case connecting
        case connected
    }

    let serverURL: URL
    let types: [EventKind]
    let tokens: TokenBox?
    let clock: any KitClock
    let backoff: Backoff
    let random: @Sendable () -> Double
    public private(set) var lastEventId: String?
    public private(set) var status: Status = .disconnected
    /// Connections opened so far (the first, then each reconnect).
    public private(set) var connections = 0
    private var loop: Task<Void, Never>?
    private var current: StreamingDownload?
    private var subscribers: [UUID: AsyncStream<ServerEvent>.Continuation] = [:]
    private var statusObservers: [UUID: AsyncStream<Status>.Continuation] = [:]

    public init(
        serverURL: URL, types: [EventKind] = [], tokens: TokenBox? = nil, lastEventId: String? = nil,
        clock: any KitClock = SystemClock(), backoff: Backoff = Backoff(base: .milliseconds(500), cap: .seconds(30)),
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) {
        self.random = random
        self.serverURL = serverURL
        self.types = types
        self.tokens = tokens
        self.lastEventId = lastEventId
        self.clock = clock
        self.backoff = backoff
    }

    /// Events as they arrive, for as long as the caller listens.
    public func events() -> AsyncStream<ServerEvent> {
        let (stream, continuation) = AsyncStream<ServerEvent>.makeStream(bufferingPolicy: .bufferingNewest(1024))
        let id = UUID()
        subscribers[id] = continuation
        continuation.onTermination = { [weak self] _ in Task { await self?.unsubscribe(id) } }
        return stream
    }

    /// The connection's status as it changes, starting with the current one.
    public func statusUpdates() -> AsyncStream<Status> {
        let (stream, continuation) = AsyncStream<Status>.makeStream(bufferingPolicy: .bufferingNewest(16))
        let id = UUID()
        statusObservers[id] = continuation
        continuation.yield(status)
        continuation.onTermination = { [weak self] _ in Task { await self?.unobserve(id) } }
        return stream
    }

    private func unsubscribe(_ id: UUID) { subscribers[id] = nil }
    private func unobserve(_ id: UUID) { statusObservers[id] = nil }

    /// Stores that hold the connection: it opens with the first and closes when the last lets go, so one
    /// screen stopping (or the app pausing it) never cuts another's live updates.
    public private(set) var holders = 0

    /// Needs the connection: opens it if nobody held it yet.
    public func hold() {
        holders += 1
        start()
    }

    /// No longer needs it: closes it when nobody else holds it.
    public func release() {
        guard holders > 0 else { return }
        holders -= 1
        if holders == 0 { stop() }
    }

    public func start() {
        guard loop == nil else { return }
        loop = Task { await self.run() }
    }

    /// Closes the connection whoever holds it.
    public func stop() {
        holders = 0
        loop?.cancel()
        loop = nil
        current?.cancel()
        current = nil
        setStatus(.disconnected)
    }

    /// Cuts the current connection as a network drop would; the client reconnects by itself.
    public func dropConnection() {
        current?.cancel()
    }

    private func setStatus(_ status: Status) {
        guard status != self.status else { return }
        self.status = status
        for observer in statusObservers.values { observer.yield(status) }
    }

    private func request() -> URLRequest {
        var components = URLComponents(
            url: serverURL.appendingPathComponent("api/events"), resolvingAgainstBaseURL: false)!
        if !types.isEmpty {
            components.queryItems = [URLQueryItem(name: "types", value: types.map(\.rawValue).joined(separator: ","))]
        }
        var request = URLRequest(url: components.url!)
        request.setValue("text/event-stream", forHTTPHeaderField: "Accept")
        request.cachePolicy = .reloadIgnoringLocalCacheData
        if let lastEventId { request.setValue(lastEventId, forHTTPHeaderField: "Last-Event-ID") }
        if let token = tokens?.token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        return request
    }

    private func run() async {
        var failures = 0
        var serverRetry: Duration?
        while !Task.isCancelled {
            setStatus(.connecting)
            connections += 1
            let download = StreamingDownload(request: request())
            current = download
            var state = ServerEventState(lastEventId: lastEventId)
            var wait: Duration?
            do {
                // The server's first frame (its `retry:` advice) arrives at once: connected from then on.
                for try await decoded in download.chunks.asDecodedServerSentEvents() {
                    if status != .connected {
                        setStatus(.connected)
                        failures = 0
                    }
                    if let event = state.take(decoded) {
                        if let id = event.id { lastEventId = id }
                        for subscriber in subscribers.values { subscriber.yield(event) }
                    }
                    serverRetry = state.retry ?? serverRetry
                }
            } catch EventStreamError.status(_, let retryAfter) {
                wait = parseRetryAfter(retryAfter, now: clock.now)
            } catch {}
            download.cancel()
            if current === download { current = nil }
            if Task.isCancelled { break }
            setStatus(.disconnected)
            // The first reconnect after a working stream waits only the server's advice (or a moment).
            let delay =
                wait
                ?? max(backoff.delay(attempt: failures, random: random), failures == 0 ? (serverRetry ?? .zero) : .zero)
            failures += 1
            do { try await clock.sleep(for: delay) } catch { break }
        }
        setStatus(.disconnected)
    }
}
