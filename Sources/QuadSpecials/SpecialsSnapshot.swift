import Foundation
import Hummingbird
import NIOConcurrencyHelpers
import QuadCore
import QuadPlatform

/// The specials and settings, loaded once per change, and `GET /api/specials` encoded once per change
/// and per validity window: a poll or a 304 costs no query, no encoding and no hashing.
final class SpecialsSnapshot: Sendable {
    struct Encoded: Sendable {
        let body: ByteBuffer
        let etag: String
        /// The next validity boundary: these bytes are stale from then on.
        let expires: Date?
    }

    private struct State {
        var records: [SpecialRecord]?
        var settings: SpecialsSettings?
        var encoded: [String: Encoded] = [:]
        var generation = 0
    }

    private let state = NIOLockedValueBox(State())
    private let store: SpecialStore
    private static let maxBaseURLs = 8

    init(store: SpecialStore) {
        self.store = store
    }

    func invalidate() {
        state.withLockedValue { state in
            state = State(generation: state.generation + 1)
        }
    }

    /// Every special, in the manager's order, whatever its validity.
    func records() async throws -> [SpecialRecord] {
        try await load().records
    }

    func settings() async throws -> SpecialsSettings {
        try await load().settings
    }

    private func load() async throws -> (records: [SpecialRecord], settings: SpecialsSettings) {
        let (records, settings, generation) = state.withLockedValue { ($0.records, $0.settings, $0.generation) }
        if let records, let settings { return (records, settings) }
        let loadedRecords = try await store.all()
        let loadedSettings = try await store.settings()
        state.withLockedValue { state in
            // A change that landed while loading wins: keep nothing older than it.
            if state.generation == generation {
                state.records = loadedRecords
                state.settings = loadedSettings
            }
        }
        return (loadedRecords, loadedSettings)
    }

    /// The specials valid at `date`, in the manager's order, and when that list next changes by itself.
    func current(at date: Date) async throws -> (records: [SpecialRecord], settings: SpecialsSettings, next: Date?) {
        let (records, settings) = try await load()
        let specials = records.map { ($0, $0.special(baseURL: "")) }
        let next = specials.compactMap { $0.1.nextBoundary(after: date) }.min()
        return (specials.filter { $0.1.isValid(at: date) }.map(\.0), settings, next)
    }

    /// The encoded list valid now, for clients that reach Quad at `baseURL`.
    func encoded(baseURL: String) async throws -> Encoded {
        let now = store.clock.now
        if let hit = state.withLockedValue({ $0.encoded[baseURL] }), hit.expires.map({ now < $0 }) ?? true {
            return hit
        }
        let generation = state.withLockedValue { $0.generation }
        let (records, settings, next) = try await current(at: now)
        let encoded = Self.encode(
            SpecialsList(
                canvasUnit: settings.canvasUnit, currency: settings.currency,
                managerSpecials: records.map { $0.special(baseURL: baseURL) }), expires: next)
        state.withLockedValue { state in
            if state.generation == generation, state.encoded.count < Self.maxBaseURLs || state.encoded[baseURL] != nil {
                state.encoded[baseURL] = encoded
            }
        }
        return encoded
    }

    static func encode(_ list: SpecialsList, expires: Date? = nil) -> Encoded {
        let data = (try? encoder.encode(list)) ?? Data("{\"canvasUnit\":16,\"managerSpecials\":[]}".utf8)
        return Encoded(body: ByteBuffer(data: data), etag: HTTPCache.etag(for: data), expires: expires)
    }

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }()
}
