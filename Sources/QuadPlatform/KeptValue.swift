import NIOConcurrencyHelpers

/// A value read from the store and kept until a notice of `type` says it changed (from this instance or another):
/// what many requests read and few change (the campus's time zone, the buildings' rules). Nothing is kept while
/// the hub may be missing notices (`EventHub.noticeGeneration`), and a load that a change overtook is not kept.
package final class KeptValue<Value: Sendable>: Sendable {
    private struct State {
        var value: Value?
        var generation = 0
        var hubGeneration: Int?
    }

    private let state = NIOLockedValueBox(State())
    private let events: EventHub
    package let type: String

    package init(events: EventHub, type: String) {
        self.events = events
        self.type = type
        events.onNotice(type) { [weak self] _ in self?.drop() }
    }

    /// The kept value, else `load()`'s (kept for next time when nothing changed meanwhile).
    package func value(_ load: () async throws -> Value) async throws -> Value {
        let hub = events.noticeGeneration
        let (kept, generation) = state.withLockedValue { state in
            (hub != nil && state.hubGeneration == hub ? state.value : nil, state.generation)
        }
        if let kept { return kept }
        let loaded = try await load()
        state.withLockedValue { state in
            if state.generation == generation, hub != nil {
                state.value = loaded
                state.hubGeneration = hub
            }
        }
        return loaded
    }

    /// Drops the value here.
    package func drop() {
        state.withLockedValue { state in state = State(generation: state.generation + 1) }
    }

    /// Drops it on every instance: call after a change is stored.
    package func changed() async {
        drop()
        await events.notice(type, "")
    }
}
