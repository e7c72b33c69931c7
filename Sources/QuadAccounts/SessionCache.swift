import NIOConcurrencyHelpers
import QuadCore
import QuadPlatform

/// Who each session token signs in, kept in memory so that a signed-in request does not read the database.
///
/// What may change who a token signs in drops entries at once on every instance, through the event hub's
/// notices: a sign-out (that token), a person changed, their password reset or removed (every token of theirs).
/// An entry is trusted only while the hub hears every instance, and only under the hub's generation it was
/// made in (on PostgreSQL a LISTEN that restarted may have missed notices). An entry read from the database
/// is not stored when anything was dropped meanwhile: it may be what the drop was about.
final class SessionCache: Sendable {
    struct Entry: Sendable {
        let person: Person
        let usernameKey: String
        let lastSeen: Int64
        /// When a session made through the organisation's provider ends.
        let endsAt: Int64?
        let generation: Int
    }

    private struct State {
        var entries: [String: Entry] = [:]
        /// Grows with every drop: a read that began under an older epoch is not stored.
        var epoch = 0
    }

    /// Entries at most; past it the cache starts again (a few thousand people fit many times over).
    static let capacity = 50_000
    static let noticeType = "sessions"

    private let state = NIOLockedValueBox(State())
    private let hub: EventHub

    init(hub: EventHub) {
        self.hub = hub
        hub.onNotice(Self.noticeType) { [weak self] text in self?.apply(text) }
    }

    var epoch: Int { state.withLockedValue { $0.epoch } }

    /// The entry for a token's hash, if it can be trusted now.
    func entry(_ hash: String) -> Entry? {
        guard let generation = hub.noticeGeneration else { return nil }
        return state.withLockedValue { $0.entries[hash] }.flatMap { $0.generation == generation ? $0 : nil }
    }

    /// Keeps what the database said, unless something was dropped since `epoch` (read before asking it).
    func store(_ hash: String, person: Person, lastSeen: Int64, endsAt: Int64?, epoch: Int) {
        guard let generation = hub.noticeGeneration else { return }
        let entry = Entry(
            person: person, usernameKey: person.username.lowercased(), lastSeen: lastSeen, endsAt: endsAt,
            generation: generation)
        state.withLockedValue { state in
            guard state.epoch == epoch else { return }
            if state.entries.count >= Self.capacity { state.entries.removeAll(keepingCapacity: true) }
            state.entries[hash] = entry
        }
    }

    /// Drops a session (by its token's hash) on every instance.
    func forget(token hash: String) async { await hub.notice(Self.noticeType, "token " + hash) }

    /// Drops every session of a person on every instance.
    func forget(username: String) async { await hub.notice(Self.noticeType, "person " + username.lowercased()) }

    private func apply(_ text: String) {
        let parts = text.split(separator: " ", maxSplits: 1).map(String.init)
        guard parts.count == 2 else { return }
        state.withLockedValue { state in
            state.epoch += 1
            switch parts[0] {
            case "token": state.entries[parts[1]] = nil
            case "person": state.entries = state.entries.filter { $0.value.usernameKey != parts[1] }
            default: state.entries.removeAll()
            }
        }
    }
}
