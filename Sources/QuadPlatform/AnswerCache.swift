import Foundation
import NIOConcurrencyHelpers
import QuadCore

/// Answers built per key (a student's week) and kept, encoded, until the data under them changes or they go stale
/// by themselves (`EncodedAnswer.expires`), so that a poll costs a lookup: a 304 is a comparison, a 200 a copy.
///
/// A change drops every answer at once, on every instance: `changed()` sends the hub's notice of `type`, which
/// reaches this instance at once and the others through PostgreSQL. Answers are trusted only under the hub's
/// generation they were made in (a LISTEN that restarted may have missed notices), and one built while a change
/// landed is not kept.
package final class AnswerCache<Key: Hashable & Sendable>: Sendable {
    private struct State {
        var answers: [Key: EncodedAnswer] = [:]
        /// Answers being built since the last change: who asks meanwhile waits for that one build, rather than
        /// every poll in flight building its own copy at the same moment (measured: p99 of 93 ms at each change).
        var building: [Key: Task<EncodedAnswer, any Error>] = [:]
        /// Grows with every change: an answer built under an older epoch is not kept.
        var epoch = 0
        var generation: Int?
    }

    private let state = NIOLockedValueBox(State())
    private let hub: EventHub
    private let clock: any QuadClock
    private let type: String
    /// Answers at most; past it the cache starts again.
    private let capacity: Int

    package init(hub: EventHub, clock: any QuadClock, type: String, capacity: Int = 4096) {
        self.hub = hub
        self.clock = clock
        self.type = type
        self.capacity = capacity
        hub.onNotice(type) { [weak self] _ in self?.dropAll() }
    }

    /// The answer for `key` if it is kept and fresh, without waiting (for the event loop).
    package func cached(_ key: Key) -> EncodedAnswer? {
        guard let generation = hub.noticeGeneration else { return nil }
        let now = clock.now
        return state.withLockedValue { state in
            guard state.generation == generation, let hit = state.answers[key] else { return nil }
            return hit.expires.map { now < $0 } ?? true ? hit : nil
        }
    }

    /// The answer for `key`, built by `build` when it is not kept (once, for all who ask while it is built).
    package func answer(
        _ key: Key, build: @escaping @Sendable () async throws -> EncodedAnswer
    ) async throws -> EncodedAnswer {
        if let hit = cached(key) { return hit }
        let generation = hub.noticeGeneration
        let (task, epoch) = state.withLockedValue { state in
            if let running = state.building[key] { return (running, state.epoch) }
            let task = Task { try await build() }
            state.building[key] = task
            return (task, state.epoch)
        }
        let built: EncodedAnswer
        do {
            built = try await task.value
        } catch {
            state.withLockedValue { state in if state.building[key] == task { state.building[key] = nil } }
            throw error
        }
        state.withLockedValue { state in
            if state.building[key] == task { state.building[key] = nil }
            guard state.epoch == epoch, let generation else { return }
            if state.generation != generation || state.answers.count >= capacity {
                state.answers.removeAll(keepingCapacity: true)
                state.generation = generation
            }
            state.answers[key] = built
        }
        return built
    }

    /// Something under the answers changed (call after it is committed): every instance drops them.
    package func changed() async { await hub.notice(type, "changed") }

    private func dropAll() {
        state.withLockedValue { state in
            state.epoch += 1
            state.answers.removeAll(keepingCapacity: true)
            // A build begun before the change may show what it changed: who asks from now on waits for a new one.
            state.building.removeAll()
        }
    }
}
