import Foundation
import NIOConcurrencyHelpers
import QuadCore

/// Values read from the store (or built from it) and kept by key until the hub says what is under them changed, or
/// until they go stale by themselves: the one way Quad keeps anything between requests (a feature's list as loaded,
/// an API answer as sent, the campus's time zone). `KeptAnswer` declares an API answer on top of it.
///
/// - Dropped on every instance by the changes named (`droppedBy`): an event of a kind, which the hub hands this
///   instance at once when it publishes it (`EventHub.onEvent`), or a notice (`changed()` sends it).
/// - Trusted only under the hub's generation it was made in: a LISTEN that restarted may have missed changes.
/// - Built once for all who ask meanwhile (single flight), and a value built while a change landed is not kept.
///   Measured: without single flight, every poll in flight built its own copy at each change (p99 of 93 ms).
/// - On PostgreSQL, nothing is kept while the hub is not listening (every read builds, once for all who ask).
/// - A value built from another `Kept` dropped by the same change (an answer from the list it encodes) is safe when
///   the source is made first: the hub drops them in the order they were made, so a build that read the old source
///   began before its own drop, and is not kept.
package final class Kept<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private struct State {
        var values: [Key: Value] = [:]
        /// What was kept before a feed's reading dropped it, and since when it is behind: whoever asks while one build
        /// is under way for its key is answered with it (`cached`).
        var behind: [Key: (value: Value, since: Date)] = [:]
        var building: [Key: Build] = [:]
        /// Grows with every change: a value built under an older epoch is not kept.
        var epoch = 0
        var generation: Int?
    }

    /// A build under way, with the epoch and the hub's generation it began in: whoever joins it later gets what was
    /// read then, and it is kept only if neither has moved since. `claimed`: someone who asked through `value` waits
    /// for it; a build `cached` started has no one yet, and the next to ask through `value` waits for it rather than
    /// taking the value before.
    private struct Build {
        let task: Task<Value, any Error>
        let epoch: Int
        let generation: Int?
        var claimed: Bool
    }

    private let state = NIOLockedValueBox(State())
    private let hub: EventHub
    private let clock: any QuadClock
    private let changes: [HubChange]
    /// Values at most; past it a new key is not kept until the next change (a key may be the client's to choose: a
    /// Host header).
    private let capacity: Int
    /// When a value goes stale by itself (a loan falling due, the next quarter hour), if ever.
    private let expires: @Sendable (Value) -> Date?
    /// Reads or builds the value for a key.
    private let build: @Sendable (Key) async throws -> Value

    package init(
        hub: EventHub, clock: any QuadClock, droppedBy changes: [HubChange], capacity: Int = 4096,
        expires: @escaping @Sendable (Value) -> Date? = { _ in nil },
        build: @escaping @Sendable (Key) async throws -> Value
    ) {
        self.hub = hub
        self.clock = clock
        self.changes = changes
        self.capacity = capacity
        self.expires = expires
        self.build = build
        for change in changes {
            let feed = change.isFeed
            switch change {
            case .event(let kind): hub.onEvent(kind) { [weak self] in self?.drop(feed: feed) }
            case .notice(let type): hub.onNotice(type) { [weak self] _ in self?.drop(feed: feed) }
            }
        }
    }

    /// The value for `key` if it is kept and fresh, without waiting (for the event loop); or, while it is built again,
    /// the one kept before, when it went stale by itself or through a feed's reading at most `PageCache.staleFor` ago.
    /// When nobody builds it yet, asking starts the build (and answers nil): the next to ask through `value` waits for
    /// it, and everyone else meanwhile gets the one before.
    ///
    /// Why: measured with `Benchmarks/run` (issue 41), a student's `/api/schedules`, built again at every car park's
    /// reading and every second it goes stale, had its p99 at 2.1x nginx's: every poll in flight waited for the build.
    /// A person's own change (an edit, a booking) is never answered from before it: it drops the values behind too.
    /// Why asking starts it: until someone's request reached `value` through the router (a hop of up to a millisecond
    /// under load), every poll found no build under way and went to the router too. Measured at 36,000 polls a second
    /// (`schedules-kier`), each burst of the demo's readings sent 78 to 178 of them there, a few milliseconds of both
    /// cores: the p99 at 1.7-2.0x nginx's.
    package func cached(_ key: Key) -> Value? {
        guard let generation = hub.noticeGeneration else { return nil }
        let now = clock.now
        var started: Build?
        let found = state.withLockedValue { state -> Value? in
            guard state.generation == generation else { return nil }
            let before: Value
            if let hit = state.values[key] {
                guard let expiry = expires(hit), expiry <= now else { return hit }
                guard now.timeIntervalSince(expiry) <= PageCache.staleFor else { return nil }
                before = hit
            } else {
                guard let behind = state.behind[key], now.timeIntervalSince(behind.since) <= PageCache.staleFor
                else { return nil }
                before = behind.value
            }
            if state.building[key] != nil { return before }
            started = start(key, in: &state, generation: generation, claimed: false)
            return nil
        }
        // Kept even if nobody comes to wait for it (the client went away).
        if let started { Task { _ = try? await self.finish(started, key: key) } }
        return found
    }

    /// The value for `key`, built when it is not kept (once, for all who ask while it is built; those who ask
    /// meanwhile may have the one kept before: `cached`).
    package func value(_ key: Key) async throws -> Value {
        let generation = hub.noticeGeneration
        let claimed = state.withLockedValue { state -> Build? in
            guard let running = state.building[key], !running.claimed else { return nil }
            state.building[key]?.claimed = true
            return running
        }
        if let claimed { return try await finish(claimed, key: key) }
        if let hit = cached(key) { return hit }
        let started = state.withLockedValue { state in
            if let running = state.building[key] {
                state.building[key]?.claimed = true
                return running
            }
            return start(key, in: &state, generation: generation, claimed: true)
        }
        return try await finish(started, key: key)
    }

    /// Starts building `key`'s value (the state's lock held).
    private func start(_ key: Key, in state: inout State, generation: Int?, claimed: Bool) -> Build {
        let started = Build(
            task: Task { [build] in try await build(key) }, epoch: state.epoch, generation: generation,
            claimed: claimed)
        state.building[key] = started
        return started
    }

    /// Waits for a build and keeps what it built, unless a change came meanwhile.
    private func finish(_ started: Build, key: Key) async throws -> Value {
        let built: Value
        do {
            built = try await started.task.value
        } catch {
            state.withLockedValue { state in
                if state.building[key]?.task == started.task { state.building[key] = nil }
            }
            throw error
        }
        state.withLockedValue { state in
            // Kept by the first of those who wait for it, once.
            guard state.building[key]?.task == started.task else { return }
            state.building[key] = nil
            guard state.epoch == started.epoch, let generation = started.generation else { return }
            if state.generation != generation {
                state.values.removeAll(keepingCapacity: true)
                state.generation = generation
            }
            // Full: what is kept stays, and a new key waits for the next change (a client that sends many Host
            // headers does not push out everyone else's answer).
            if state.values.count < capacity || state.values[key] != nil { state.values[key] = built }
            state.behind[key] = nil
        }
        return built
    }

    /// Drops every value here, at once. A feed's reading (`feed`) keeps them as the values behind (`cached`).
    package func drop(feed: Bool = false) {
        let now = clock.now
        state.withLockedValue { state in
            state.epoch += 1
            if feed {
                // Behind since the first change it missed: this one, or its own staleness.
                for (key, value) in state.values where state.behind[key] == nil {
                    state.behind[key] = (value, min(now, expires(value) ?? now))
                }
            } else {
                state.behind.removeAll(keepingCapacity: true)
            }
            state.values.removeAll(keepingCapacity: true)
            // A build begun before the change may show what it changed: who asks from now on waits for a new one.
            state.building.removeAll()
        }
    }

    /// Something under the values changed (call after it is stored): dropped here at once, and on every instance
    /// through the notices among its changes. (Its events drop it when they are published.)
    package func changed() async {
        drop()
        for case .notice(let type) in changes { await hub.notice(type, "changed") }
    }

    /// As `changed()`, announced by the notice `change` alone (one of its changes): a feed's reading rather than an
    /// edit (`HubChange.fed`).
    package func changed(by change: HubChange) async {
        drop(feed: change.isFeed)
        if case .notice(let type) = change, changes.contains(change) { await hub.notice(type, "changed") }
    }
}

/// The key of a `Kept` that holds one value.
package enum One: Hashable, Sendable {
    case value
}

extension Kept where Key == One {
    /// Keeps the one value `load` reads.
    package convenience init(
        hub: EventHub, clock: any QuadClock, droppedBy changes: [HubChange],
        expires: @escaping @Sendable (Value) -> Date? = { _ in nil }, load: @escaping @Sendable () async throws -> Value
    ) {
        self.init(hub: hub, clock: clock, droppedBy: changes, expires: expires) { _ in try await load() }
    }

    /// The kept value, else the one read now (kept for next time when nothing changed meanwhile).
    package func value() async throws -> Value { try await value(.value) }
}

/// What the hub announces a change by: an event of a kind (it goes on the stream too) or a notice of a type (between
/// instances only). What is kept names the changes that drop it (`Kept`, `KeptAnswer`, a page's
/// `WebShell.page(…, keptUntilChangeOf:)`).
package enum HubChange: Hashable, Sendable {
    case event(EventKind)
    case notice(String)

    /// The notice that a feed's reading (a car park's, a departure's prediction) changed what is kept: sent instead of
    /// a feature's own notice, so that a page kept before it may still be shown while it is drawn again
    /// (`PageCache.feeds`).
    package static let fed = HubChange.notice("fed")

    /// A feed's reading (`PageCache.feeds`): what was kept before it may still be shown while it is built again.
    package var isFeed: Bool { PageCache.feeds.contains(name) }

    /// Its name on the hub (`EventHub.onChange` hands it over).
    package var name: String {
        switch self {
        case .event(let kind): kind.rawValue
        case .notice(let type): type
        }
    }
}
