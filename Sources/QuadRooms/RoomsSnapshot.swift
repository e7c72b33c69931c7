import Foundation
import Hummingbird
import NIOConcurrencyHelpers
import QuadCore
import QuadPlatform

/// The rooms list, encoded once per change rather than once per request: `GET /api/rooms` answers from
/// these bytes and their ETag, so a poll or a 304 costs no query, no encoding and no hashing.
final class RoomsSnapshot: Sendable {
    struct Encoded: Sendable {
        let body: ByteBuffer
        let etag: String
    }

    private struct State {
        var rooms: [RoomRecord]?
        /// By base URL, since thumbnails are absolute; bounded, as the Host header is the client's to choose.
        var encoded: [String: Encoded] = [:]
        var generation = 0
    }

    private let state = NIOLockedValueBox(State())
    private let store: RoomStore
    private static let maxBaseURLs = 8

    init(store: RoomStore) {
        self.store = store
    }

    func invalidate() {
        state.withLockedValue { state in
            state = State(generation: state.generation + 1)
        }
    }

    /// The rooms, in booking order.
    func rooms() async throws -> [RoomRecord] {
        let (cached, generation) = state.withLockedValue { ($0.rooms, $0.generation) }
        if let cached { return cached }
        let loaded = try await store.all()
        let byId = Dictionary(uniqueKeysWithValues: loaded.map { ($0.id, $0) })
        let sorted = Room.sortedForBooking(loaded.map { $0.room(baseURL: "") }).compactMap { byId[$0.id] }
        state.withLockedValue { state in
            // A change that landed while loading wins: keep nothing older than it.
            if state.generation == generation { state.rooms = sorted }
        }
        return sorted
    }

    /// The encoded full list for `baseURL` if it is ready, without waiting (for the event loop).
    func cached(baseURL: String) -> Encoded? {
        state.withLockedValue { $0.encoded[baseURL] }
    }

    /// The encoded full list for clients that reach Quad at `baseURL`.
    func encoded(baseURL: String) async throws -> Encoded {
        if let hit = cached(baseURL: baseURL) { return hit }
        let generation = state.withLockedValue { $0.generation }
        let encoded = Self.encode(try await rooms().map { $0.room(baseURL: baseURL) })
        state.withLockedValue { state in
            if state.generation == generation, state.encoded.count < Self.maxBaseURLs {
                state.encoded[baseURL] = encoded
            }
        }
        return encoded
    }

    static func encode(_ rooms: [Room]) -> Encoded {
        let data = (try? encoder.encode(RoomList(rooms: rooms))) ?? Data("{\"rooms\":[]}".utf8)
        return Encoded(body: ByteBuffer(data: data), etag: HTTPCache.etag(for: data))
    }

    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()
}

struct RoomList: Codable, Sendable {
    var rooms: [Room]
}
