import Foundation
import QuadCore

/// An answer of the API that every open page and app polls (`GET /api/rooms`, a student's own `/api/schedules`),
/// declared once by its feature: the operation and path it answers, the changes that drop it, whose answer a caller
/// reads (its key) and how that answer is built. Its bytes say until when they hold by themselves
/// (`EncodedAnswer.expires`). Everything else is derived from this declaration (`Feature.keptAnswers`):
/// - the fast path answers the path from what is kept, before the router (`FastPath`);
/// - the generated interface answers the operation from it, building it when it is not kept
///   (`KeptAnswerMiddleware`);
/// - the changes drop it on every instance, with single flight and the hub's generation check (`Kept`).
package protocol AnyKeptAnswer: Sendable {
    /// The contract's operation id (`Operations.ListBooks.id`).
    var operation: String { get }
    /// Its path, as the request's target reads when the answer is the kept one (no query).
    var path: String { get }
    /// The kept answer for a caller (a visitor: nil) who reached Quad at `baseURL`, without waiting; nil when it
    /// must be built first or the operation's handler answers.
    func cached(baseURL: String, person: Person?) -> EncodedAnswer?
    /// The answer for that caller, built when it is not kept; nil when the operation's handler answers.
    func answer(baseURL: String, person: Person?) async throws -> EncodedAnswer?
}

/// Its key is text (a base URL, a student's id, an audience's name) rather than any `Hashable`: every poll answered
/// before the router looks its answer up here, and a generic key made that lookup generic code, unspecialized (the
/// features' key types are theirs): measured with `perf` on `rooms-304` (issue 41), it looked up type metadata at run
/// time for each poll, about 5 % of Quad's CPU for each, in `Kept.cached`.
package final class KeptAnswer: AnyKeptAnswer {
    package let operation: String
    package let path: String
    private let kept: Kept<String, EncodedAnswer>
    private let key: @Sendable (_ baseURL: String, _ person: Person?) -> String?

    /// Built from the store for the key; `key` says whose answer a caller reads (nil: the handler answers them),
    /// `build` may throw `HandlerAnswers` when there is nothing to keep for that key (no such student).
    /// `capacity`: answers at most, as a key may be the client's to choose (the base URL is its Host header).
    package init(
        operation: String, path: String, platform: Platform, droppedBy changes: [HubChange], capacity: Int = 4096,
        key: @escaping @Sendable (_ baseURL: String, _ person: Person?) -> String?,
        build: @escaping @Sendable (String) async throws -> EncodedAnswer
    ) {
        self.operation = operation
        self.path = path
        self.kept = Kept(
            hub: platform.events, clock: platform.clock, droppedBy: changes, capacity: capacity,
            expires: { $0.expires }, build: build)
        self.key = key
    }

    package func cached(baseURL: String, person: Person?) -> EncodedAnswer? {
        key(baseURL, person).flatMap(kept.cached)
    }

    package func answer(baseURL: String, person: Person?) async throws -> EncodedAnswer? {
        guard let key = key(baseURL, person) else { return nil }
        return try await answer(key)
    }

    /// The answer kept for `key`, if any.
    package func cached(_ key: String) -> EncodedAnswer? { kept.cached(key) }

    /// The answer for `key`, built when it is not kept; nil when its build says the handler answers.
    package func answer(_ key: String) async throws -> EncodedAnswer? {
        do {
            return try await kept.value(key)
        } catch is HandlerAnswers {
            return nil
        }
    }

    /// Something under it changed (call after it is stored): dropped here at once, and on every instance through
    /// the notices among its changes. (Its events drop it when they are published.)
    package func changed() async { await kept.changed() }

    /// As `changed()`, announced by the notice `change` alone (`Kept.changed(by:)`).
    package func changed(by change: HubChange) async { await kept.changed(by: change) }
}

/// Thrown by a kept answer's build when there is nothing to keep for the key: the operation's handler answers (a
/// student id that is nobody's gets its 404 there).
package struct HandlerAnswers: Error {
    package init() {}
}

extension KeptAnswer {
    /// An answer the same for everyone but for its absolute URLs (images): one per base URL, a few at most, as the
    /// Host header is the client's to choose.
    package convenience init(
        operation: String, path: String, platform: Platform, droppedBy changes: [HubChange],
        byBaseURL build: @escaping @Sendable (_ baseURL: String) async throws -> EncodedAnswer
    ) {
        self.init(
            operation: operation, path: path, platform: platform, droppedBy: changes, capacity: 8,
            key: { baseURL, _ in baseURL }, build: build)
    }
}
