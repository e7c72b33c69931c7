import Foundation
import Logging
import NIOConcurrencyHelpers
import PostgresKit
import QuadCore
import SQLKit
import ServiceLifecycle

/// A change that clients may want to hear about at once: `room` 42 now has 3 spots.
public struct Event: Sendable, Equatable {
    public let id: Int64
    /// What kind of thing changed: `room`, `special`, `book`, …
    public let type: String
    /// The JSON payload, already encoded.
    public let data: String
    /// Whose it is (a username, lowercased): delivered only to that person's streams. Nil: to everyone.
    public let audience: String?

    public init(id: Int64, type: String, data: String, audience: String? = nil) {
        self.id = id
        self.type = type
        self.data = data
        self.audience = audience
    }

    /// Whether a stream of `person` (nil: a visitor) hears it.
    func reaches(_ person: String?) -> Bool { audience == nil || audience == person }
}

/// Where features publish changes and `/api/events` listens.
///
/// Every event gets an id that only grows, and the hub keeps the most recent ones so a client that
/// reconnects with `Last-Event-ID` is sent what it missed. On PostgreSQL, events travel through
/// `NOTIFY`, so every Quad instance on the database delivers every instance's events.
public final class EventHub: Service, Sendable {
    public struct Subscription: Sendable {
        /// Events after the client's last one, to send first.
        public let replay: [Event]
        /// True when the client's last event is older than the buffer: it may have missed some and should reload.
        public let missedSome: Bool
        public let events: AsyncStream<Event>
        package let cancel: @Sendable () -> Void
    }

    private struct State {
        var recent: [Event] = []
        /// How many events were delivered: each delivery's mark, which a stream opened since compares with.
        var delivered: Int64 = 0
        var nextLocalId: Int64
        /// Every event with a greater id is in `recent`; nil until the hub knows where its history starts.
        var floor: Int64?
        var subscribers: [UUID: Subscriber] = [:]
        package var closed = false
        /// PostgreSQL: whether this instance's LISTEN is up (it hears the other instances).
        package var listening = false
        /// How many times LISTEN has started: what was learnt before a gap may have missed a notice.
        var generation = 0
        /// Handlers of notices between instances, by type (`notice`), never sent to clients.
        var noticeHandlers: [String: [@Sendable (String) -> Void]] = [:]
        /// Called on every event of a type, from any instance, before anyone else hears of it.
        var eventHandlers: [String: [@Sendable () -> Void]] = [:]
        /// Called on every event and notice (with its type), from any instance, after the handlers of its type.
        var changeHandlers: [@Sendable (String) -> Void] = []
    }

    private struct Subscriber {
        var types: Set<String>?
        /// Whose stream it is (a username, lowercased; nil for a visitor): private events go to theirs alone.
        var person: String?
        /// Every event, whoever it is for and whatever its type, to filter itself (`follow`).
        var everything = false
        /// Takes an event as it is delivered, with its mark, on the delivering thread; false when it can take no more.
        var send: @Sendable (Event, _ mark: Int64) -> Bool
        /// Ends the subscriber: the hub closing, or it falling too far behind.
        var finish: @Sendable () -> Void
    }

    /// What a stream opened now is sent first (`opening`), and the mark of the last delivery that accounts for.
    package struct Opening: Sendable {
        /// Events after the client's last one.
        package let replay: [Event]
        /// The client's last event is older than the buffer: it may have missed some and should reload.
        package let missedSome: Bool
        /// Deliveries up to this one are in `replay` or were before the client's last event: a follower hands the
        /// stream only those after it.
        package let mark: Int64
    }

    private let state: NIOLockedValueBox<State>
    private let capacity: Int
    private let database: Database
    private let logger: Logger
    /// Counts what is published, by kind (`/metrics`).
    private let metrics: QuadMetrics?
    /// One channel per schema, so that separate Quads sharing a server do not hear each other.
    private var channel: String { "quad_events_" + database.schema }

    package init(
        database: Database, capacity: Int, clock: any QuadClock, logger: Logger, metrics: QuadMetrics? = nil
    ) {
        self.metrics = metrics
        // Local ids start from the clock in microseconds, so they keep growing across restarts of a single instance.
        let start = Int64(clock.now.timeIntervalSince1970 * 1_000_000)
        self.state = NIOLockedValueBox(
            State(nextLocalId: start, floor: database.engine == .sqlite ? start - 1 : nil))
        self.capacity = capacity
        self.database = database
        self.logger = logger
    }

    /// Publishes a change as its kind of event (`LiveEvent`). Call it after the change is committed. With `audience`
    /// (a username), only that person's streams hear it: an offer made to them, their place in a line.
    public func publish(_ event: some LiveEvent, to audience: String? = nil) async {
        metrics?.event(kind: type(of: event).kind.rawValue)
        // Each change of a place is published once, to its owner: offers are counted here, whatever line made them.
        if let change = (event as? WaitingEvent)?.change {
            if change == .offered { metrics?.count(.offerMade) }
            if change == .accepted { metrics?.count(.offerTaken) }
        }
        await publish(type(of: event).kind.rawValue, event, to: audience)
    }

    /// Publishes any payload under any type: for tests (a flood of events of no kind, a marker), never a feature,
    /// whose events are `LiveEvent`s.
    package func publishForTesting(
        _ type: String, _ payload: some Encodable & Sendable, to audience: String? = nil
    )
        async
    {
        await publish(type, payload, to: audience)
    }

    private func publish(_ type: String, _ payload: some Encodable & Sendable, to audience: String?) async {
        guard let data = try? JSONEncoder().encode(payload), let json = String(data: data, encoding: .utf8) else {
            return
        }
        switch database.engine {
        case .sqlite:
            let event = state.withLockedValue { state -> Event in
                defer { state.nextLocalId += 1 }
                return Event(id: state.nextLocalId, type: type, data: json, audience: audience)
            }
            deliver(event)
        case .postgres:
            // What this instance keeps of the change's kind goes at once, not when the notification comes back: whoever
            // made the change reads it next (`Kept`). Dropping it again then is harmless.
            for handler in state.withLockedValue({ $0.eventHandlers[type] ?? [] }) { handler() }
            // The id comes from a sequence shared by all instances; every instance (this one too) delivers on LISTEN.
            let message = type + (audience.map { "@" + $0 } ?? "") + " " + json
            do {
                try await database.withConnection { sql in
                    try await sql.raw(
                        "SELECT pg_notify(\(bind: self.channel), nextval('quad_event_ids')::text || ' ' || \(bind: message))"
                    ).run()
                }
            } catch {
                logger.error("Could not publish an event", metadata: ["type": "\(type)", "error": "\(error)"])
            }
        }
    }

    /// Tells every instance (this one too, at once) something that is not for clients: a cache to drop, say.
    /// Notices are not events: no id, no replay, never on `/api/events`.
    package func notice(_ type: String, _ text: String) async {
        switch database.engine {
        case .sqlite:
            deliverNotice(type, text)
        case .postgres:
            deliverNotice(type, text)  // at once here, then the other instances through NOTIFY
            do {
                try await database.withConnection { sql in
                    try await sql.raw(
                        "SELECT pg_notify(\(bind: self.channel), \(bind: Self.noticePrefix + type + " " + text))"
                    ).run()
                }
            } catch {
                logger.error("Could not send a notice", metadata: ["type": "\(type)", "error": "\(error)"])
            }
        }
    }

    /// Calls `handler` with the text of every notice of `type`, from any instance.
    package func onNotice(_ type: String, _ handler: @escaping @Sendable (String) -> Void) {
        state.withLockedValue { $0.noticeHandlers[type, default: []].append(handler) }
    }

    /// Calls `handler` on every event of `type`, from any instance (this one's too, as it is published), before the
    /// change handlers and the subscribers hear of it: what is kept of it is dropped before a page made from it is.
    package func onEvent(_ kind: EventKind, _ handler: @escaping @Sendable () -> Void) {
        let type = kind.rawValue
        state.withLockedValue { $0.eventHandlers[type, default: []].append(handler) }
    }

    /// Calls `handler` on every event and every notice, from any instance (this one's too): a cache of anything.
    package func onChange(_ handler: @escaping @Sendable (_ type: String) -> Void) {
        state.withLockedValue { $0.changeHandlers.append(handler) }
    }

    /// Changes when this hub may have missed notices (its LISTEN restarted on PostgreSQL): what a cache learnt
    /// under another generation is not to be trusted. `nil` while it is not listening at all.
    package var noticeGeneration: Int? {
        database.engine == .sqlite ? 0 : state.withLockedValue { $0.listening ? $0.generation : nil }
    }

    private static let noticePrefix = "notice "

    private func deliverNotice(_ type: String, _ text: String) {
        let (handlers, changed) = state.withLockedValue { ($0.noticeHandlers[type] ?? [], $0.changeHandlers) }
        for handler in handlers { handler(text) }
        for handler in changed { handler(type) }
    }

    /// Subscribes to events after `lastEventId` (all new ones when nil), optionally of some types only.
    public func subscribe(
        after lastEventId: Int64?, types: Set<EventKind>? = nil, person: String? = nil
    ) -> Subscription {
        // A subscriber that falls more than `capacity` events behind is cut off rather than silently skipped:
        // it reconnects with its last id and resumes from the buffer.
        let (stream, continuation) = AsyncStream<Event>.makeStream(bufferingPolicy: .bufferingOldest(capacity))
        let id = UUID()
        let subscriber = Subscriber(
            types: types.map { Set($0.map(\.rawValue)) }, person: person,
            send: { event, _ in
                if case .dropped = continuation.yield(event) { return false }
                return true
            },
            finish: { continuation.finish() })
        let opening = state.withLockedValue { state -> Opening? in
            guard let opening = Self.opening(state, after: lastEventId, types: subscriber.types, person: person) else {
                return nil
            }
            state.subscribers[id] = subscriber
            return opening
        }
        guard let opening else {
            continuation.finish()
            return Subscription(replay: [], missedSome: false, events: stream, cancel: {})
        }
        return Subscription(
            replay: opening.replay, missedSome: opening.missedSome, events: stream,
            cancel: { [weak self] in
                self?.unsubscribe(id)
                continuation.finish()
            })
    }

    /// Hands `send` every event as it is delivered, on the delivering thread, whoever it is for and whatever its type,
    /// with its mark: for the streams of one event loop answered in the channel pipeline (`LoopStreams`), which filter
    /// for each stream themselves and open each with `opening`, for the server's life. `finish` is called once, when
    /// the hub closes (at once when it is closed already).
    ///
    /// Why one follower a loop, not a subscriber a stream: measured with `Benchmarks/run streams-10k`, handing 10,000
    /// subscribers each event one by one cost the publishing thread as much CPU as a loop's writing it (`LoopStreams`).
    package func follow(
        send: @escaping @Sendable (Event, _ mark: Int64) -> Void, finish: @escaping @Sendable () -> Void
    ) {
        let closed = state.withLockedValue { state -> Bool in
            if state.closed { return true }
            state.subscribers[UUID()] = Subscriber(
                types: nil, person: nil, everything: true,
                send: { event, mark in
                    send(event, mark)
                    return true
                }, finish: finish)
            return false
        }
        if closed { finish() }
    }

    /// What a stream of `person` opened now (of `types` only, when given) is sent first: the events after
    /// `lastEventId`, and the mark of the last delivery; nil once the hub is closed.
    package func opening(after lastEventId: Int64?, types kinds: Set<EventKind>?, person: String?) -> Opening? {
        let types = kinds.map { Set($0.map(\.rawValue)) }
        return state.withLockedValue { Self.opening($0, after: lastEventId, types: types, person: person) }
    }

    private static func opening(
        _ state: State, after lastEventId: Int64?, types: Set<String>?, person: String?
    ) -> Opening? {
        if state.closed { return nil }
        guard let lastEventId else { return Opening(replay: [], missedSome: false, mark: state.delivered) }
        let replay = state.recent.filter {
            $0.id > lastEventId && types?.contains($0.type) != false && $0.reaches(person)
        }
        return Opening(replay: replay, missedSome: state.floor.map { lastEventId < $0 } ?? true, mark: state.delivered)
    }

    private func unsubscribe(_ id: UUID) {
        state.withLockedValue { _ = $0.subscribers.removeValue(forKey: id) }
    }

    /// Ends a subscriber that could take no more.
    private func cutOff(_ id: UUID) {
        let subscriber = state.withLockedValue { $0.subscribers.removeValue(forKey: id) }
        subscriber?.finish()
    }

    func deliver(_ event: Event) {
        let (mark, subscribers, handlers, changed) = state.withLockedValue {
            state -> (Int64, [(UUID, Subscriber)], [@Sendable () -> Void], [@Sendable (String) -> Void]) in
            state.delivered += 1
            if state.floor == nil { state.floor = event.id - 1 }
            state.recent.append(event)
            if state.recent.count > capacity {
                state.floor = state.recent[state.recent.count - capacity - 1].id
                state.recent.removeFirst(state.recent.count - capacity)
            }
            return (
                state.delivered, state.subscribers.map { ($0.key, $0.value) }, state.eventHandlers[event.type] ?? [],
                state.changeHandlers
            )
        }
        for handler in handlers { handler() }
        for handler in changed { handler(event.type) }
        for (id, subscriber) in subscribers
        where subscriber.everything
            || (subscriber.types?.contains(event.type) != false && event.reaches(subscriber.person))
        {
            if !subscriber.send(event, mark) { cutOff(id) }
        }
    }

    /// Ends every open stream: on shutdown, so that draining connections does not wait for them.
    func closeAll() {
        let subscribers = state.withLockedValue { state -> [Subscriber] in
            state.closed = true
            defer { state.subscribers = [:] }
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers { subscriber.finish() }
    }

    /// Whether this hub hears every instance's events: always on SQLite (one instance); on PostgreSQL once its
    /// LISTEN is up. Tests wait for it rather than for a while.
    public var isListening: Bool {
        database.engine == .sqlite || state.withLockedValue { $0.listening }
    }

    public func run() async throws {
        if database.engine == .postgres, let configuration = database.postgresConfiguration {
            await cancelWhenGracefulShutdown {
                await self.listen(configuration)
            }
        } else {
            try? await gracefulShutdown()
        }
        closeAll()
    }

    /// Keeps a dedicated connection listening, reconnecting with backoff when it drops.
    private func listen(_ configuration: SQLPostgresConfiguration) async {
        var delay = Duration.milliseconds(200)
        while !Task.isCancelled {
            do {
                let connection = try await PostgresConnection.connect(
                    configuration: configuration.coreConfiguration, id: 0, logger: logger)
                delay = .milliseconds(200)
                defer { Task { try? await connection.close() } }
                try await connection.listen(on: channel) { notifications in
                    state.withLockedValue {
                        $0.listening = true
                        $0.generation += 1
                    }
                    defer { state.withLockedValue { $0.listening = false } }
                    for try await notification in notifications {
                        let payload = notification.payload
                        if payload.hasPrefix(Self.noticePrefix) {
                            let notice = payload.dropFirst(Self.noticePrefix.count).split(separator: " ", maxSplits: 1)
                            // This instance's own come back too: a cache dropped twice is no harm.
                            if notice.count == 2 { deliverNotice(String(notice[0]), String(notice[1])) }
                        } else if let event = Self.parse(payload) {
                            deliver(event)
                        }
                    }
                }
            } catch {
                if Task.isCancelled { return }
                logger.warning("Event listener lost its connection; reconnecting", metadata: ["error": "\(error)"])
            }
            try? await Task.sleep(for: delay)
            delay = min(delay * 2, .seconds(5))
        }
    }

    /// `"<id> <type> <json>"`, or `"<id> <type>@<username> <json>"` for one person's, as `publish` sends it.
    static func parse(_ payload: String) -> Event? {
        let parts = payload.split(separator: " ", maxSplits: 2)
        guard parts.count == 3, let id = Int64(parts[0]) else { return nil }
        let typed = parts[1].split(separator: "@", maxSplits: 1)
        return Event(
            id: id, type: String(typed[0]), data: String(parts[2]), audience: typed.count == 2 ? String(typed[1]) : nil)
    }
}
