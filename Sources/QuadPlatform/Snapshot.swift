import Foundation
import NIOConcurrencyHelpers
import NIOCore
import QuadCore
import ServiceLifecycle

/// An answer's bytes as sent, with their ETag (made once, when encoded).
package struct EncodedAnswer: Sendable {
    package let body: ByteBuffer
    package let etag: String
    /// When these bytes go stale by themselves (a special's validity starts or ends), if ever.
    package let expires: Date?
    /// The same bytes gzipped, made once here for the clients that accept it; nil when not worth it (`Gzip`).
    package let gzipped: ByteBuffer?

    package init(body: ByteBuffer, etag: String, expires: Date?) {
        self.body = body
        self.etag = etag
        self.expires = expires
        self.gzipped = Gzip.compress(body)
    }

    /// What to send a client whose `Accept-Encoding` is `acceptEncoding`: the gzipped bytes (with the weak ETag)
    /// when it takes them; `varies` when the answer depends on that header.
    package func representation(
        acceptEncoding: String?
    ) -> (body: ByteBuffer, etag: String, gzip: Bool, varies: Bool) {
        guard let gzipped else { return (body, etag, false, false) }
        return Gzip.accepted(acceptEncoding) ? (gzipped, Gzip.etag(etag), true, true) : (body, etag, false, true)
    }
}

/// A feature's list kept between changes: loaded once per change, and encoded once per change and base URL (and,
/// for a list that changes by itself at known instants, until the next of them), so a poll or a 304 costs no
/// query, no encoding and no hashing. The feature calls `invalidate()` after a change it commits;
/// `SnapshotInvalidation` does for changes other instances commit.
package final class Snapshot<Loaded: Sendable>: Sendable {
    package typealias Encoded = EncodedAnswer

    private struct State {
        var loaded: Loaded?
        /// By base URL, since image URLs are absolute; bounded, as the Host header is the client's to choose.
        var encoded: [String: Encoded] = [:]
        var generation = 0
    }

    private let state = NIOLockedValueBox(State())
    private let load: @Sendable () async throws -> Loaded
    private let encode: @Sendable (_ loaded: Loaded, _ baseURL: String, _ now: Date) throws -> Encoded
    private let clock: any QuadClock
    private let isStale: @Sendable (_ loaded: Loaded, _ now: Date) -> Bool
    private static var maxBaseURLs: Int { 8 }

    /// `load` reads the list from the store; `encode` writes it for a base URL at an instant (`Self.json`);
    /// `isStale` says when what was loaded no longer holds by itself (the time it was read for is over).
    package init(
        clock: any QuadClock, load: @escaping @Sendable () async throws -> Loaded,
        isStale: @escaping @Sendable (_ loaded: Loaded, _ now: Date) -> Bool = { _, _ in false },
        encode: @escaping @Sendable (_ loaded: Loaded, _ baseURL: String, _ now: Date) throws -> Encoded
    ) {
        self.clock = clock
        self.load = load
        self.isStale = isStale
        self.encode = encode
    }

    package func invalidate() {
        state.withLockedValue { state in state = State(generation: state.generation + 1) }
    }

    /// The list as loaded.
    package func loaded() async throws -> Loaded {
        let (cached, generation) = state.withLockedValue { ($0.loaded, $0.generation) }
        if let cached, !isStale(cached, clock.now) { return cached }
        let loaded = try await load()
        state.withLockedValue { state in
            // A change that landed while loading wins: keep nothing older than it.
            if state.generation == generation { state.loaded = loaded }
        }
        return loaded
    }

    /// The encoded list for `baseURL` if it is ready and fresh, without waiting (for the event loop).
    package func cached(baseURL: String) -> Encoded? {
        let now = clock.now
        return state.withLockedValue { $0.encoded[baseURL] }.flatMap { hit in
            hit.expires.map { now < $0 } ?? true ? hit : nil
        }
    }

    /// The encoded list for clients that reach Quad at `baseURL`.
    package func encoded(baseURL: String) async throws -> Encoded {
        if let hit = cached(baseURL: baseURL) { return hit }
        let generation = state.withLockedValue { $0.generation }
        let encoded = try encode(try await loaded(), baseURL, clock.now)
        state.withLockedValue { state in
            if state.generation == generation,
                state.encoded.count < Self.maxBaseURLs || state.encoded[baseURL] != nil
            {
                state.encoded[baseURL] = encoded
            }
        }
        return encoded
    }

    /// How `SnapshotAnswers` answers the operation that lists it.
    package var answer: SnapshotAnswers.Source {
        { baseURL in try await self.encoded(baseURL: baseURL) }
    }

    /// How the fast path (`SnapshotFastPath`) finds the list ready, before the router: the same for everyone.
    package var lookup: SnapshotFastPath.Lookup {
        { baseURL, _ in self.cached(baseURL: baseURL) }
    }

    /// `value` as the API writes it (`EncodedAnswer.json`).
    package static func json(_ value: some Encodable, expires: Date? = nil) throws -> Encoded {
        try EncodedAnswer.json(value, expires: expires)
    }
}

extension EncodedAnswer {
    /// `value` as the API writes it (sorted keys, unescaped slashes, ISO 8601 dates), with its ETag.
    package static func json(_ value: some Encodable, expires: Date? = nil) throws -> EncodedAnswer {
        let data = try encoder.encode(value)
        return EncodedAnswer(body: ByteBuffer(data: data), etag: HTTPCache.etag(for: data), expires: expires)
    }

    private static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }
}

/// Drops a snapshot when another instance changes its list: their events (of `type`) arrive through the hub, which
/// calls this at once, before the kept pages are dropped (`PageCache`): a page made after that reads the new list.
package struct SnapshotInvalidation: Service {
    package let events: EventHub
    package let type: EventKind
    package let invalidate: @Sendable () -> Void

    package init<Loaded>(events: EventHub, type: EventKind, snapshot: Snapshot<Loaded>) {
        self.events = events
        self.type = type
        self.invalidate = { snapshot.invalidate() }
    }

    package func run() async throws {
        events.onEvent(type, invalidate)
        try? await gracefulShutdown()
    }
}
