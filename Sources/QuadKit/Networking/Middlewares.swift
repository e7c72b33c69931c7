import Foundation
import HTTPTypes
import OpenAPIRuntime
import QuadCore

/// Adds `Authorization: Bearer <token>` when a token is known.
public struct AuthMiddleware: ClientMiddleware {
    let token: @Sendable () -> String?

    public init(token: @escaping @Sendable () -> String?) {
        self.token = token
    }

    public func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        if request.headerFields[.authorization] == nil, let token = token() {
            request.headerFields[.authorization] = "Bearer \(token)"
        }
        return try await next(request, body, baseURL)
    }
}

/// Gives every write in `operations` an `Idempotency-Key` when the caller did not (callers that know the
/// user's intent pass their own, reused across attempts). Sits outside the retry middleware, so every
/// attempt of one call carries the same key.
public struct IdempotencyMiddleware: ClientMiddleware {
    /// The operations that change state and must not happen twice: bookings (and, later, checkouts).
    public static let defaultOperations: Set<String> = ["bookRoom", "checkOutBook"]
    let operations: Set<String>

    public init(operations: Set<String> = IdempotencyMiddleware.defaultOperations) {
        self.operations = operations
    }

    public func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        if operations.contains(operationID), request.headerFields[.idempotencyKey] == nil {
            request.headerFields[.idempotencyKey] = UUID().uuidString
        }
        return try await next(request, body, baseURL)
    }
}

extension HTTPField.Name {
    static let idempotencyKey = HTTPField.Name("Idempotency-Key")!
    /// Set on a response the ETag cache served after a 304.
    public static let quadKitCache = HTTPField.Name("X-QuadKit-Cache")!
}

/// Retries what is safe to repeat (reads, and writes that carry an `Idempotency-Key`) after a network
/// failure, a 429 or a 502/503/504, waiting with exponential backoff and full jitter, or as long as
/// `Retry-After` says when the server says.
public struct RetryMiddleware: ClientMiddleware {
    public var maxAttempts: Int
    public var backoff: Backoff
    /// The longest `Retry-After` honoured; a longer one is returned to the caller instead.
    public var maxRetryAfter: Duration
    let clock: any KitClock
    let random: @Sendable () -> Double

    public init(
        maxAttempts: Int = 4, backoff: Backoff = Backoff(), maxRetryAfter: Duration = .seconds(60),
        clock: any KitClock = SystemClock(), random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) {
        self.maxAttempts = maxAttempts
        self.backoff = backoff
        self.maxRetryAfter = maxRetryAfter
        self.clock = clock
        self.random = random
    }

    static let retryableStatuses: Set<Int> = [429, 502, 503, 504]

    public func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        let safe =
            [.get, .head, .put, .delete, .options].contains(request.method)
            || request.headerFields[.idempotencyKey] != nil
        guard safe, maxAttempts > 1 else { return try await next(request, body, baseURL) }
        // Bodies are replayed on each attempt, so hold them in memory (requests here are small).
        let bytes: Data? = if let body { try await Data(collecting: body, upTo: 16 * 1024 * 1024) } else { nil }
        var attempt = 0
        while true {
            let wait: Duration
            do {
                let (response, responseBody) = try await next(request, bytes.map { HTTPBody($0) }, baseURL)
                guard Self.retryableStatuses.contains(response.status.code), attempt + 1 < maxAttempts else {
                    return (response, responseBody)
                }
                let retryAfter = parseRetryAfter(response.headerFields[.retryAfter], now: clock.now)
                if let retryAfter, retryAfter > maxRetryAfter { return (response, responseBody) }
                wait = retryAfter ?? backoff.delay(attempt: attempt, random: random)
            } catch {
                try Task.checkCancellation()
                guard attempt + 1 < maxAttempts, error is CancellationError == false else { throw error }
                wait = backoff.delay(attempt: attempt, random: random)
            }
            attempt += 1
            try await clock.sleep(for: wait)
        }
    }
}

/// A cache of the last 200 response (body and ETag) per URL, for revalidation. With a `directory` the
/// entries are also kept on disk (each written atomically), so an app that relaunches revalidates what it
/// already has (a 304, nothing downloaded again) instead of starting cold, as URLCache does on Apple
/// platforms. At most `limit` entries are kept, the least recently used going first.
public actor ETagCache {
    public struct Entry: Sendable, Codable {
        public var etag: String
        public var body: Data
        public var contentType: String?
    }

    /// What one file holds: the key too, so a file-name collision is never mistaken for a hit.
    private struct Stored: Codable {
        var key: String
        var entry: Entry
    }

    private var entries: [String: (entry: Entry, used: UInt64)] = [:]
    private var useCounter: UInt64 = 0
    private let limit: Int
    /// Where entries outlive the process (nil: memory only).
    public let directory: URL?

    public init(limit: Int = 256, directory: URL? = nil) {
        self.limit = max(limit, 1)
        self.directory = directory
    }

    public func entry(for key: String) -> Entry? {
        if let found = entries[key] {
            remember(found.entry, for: key)
            return found.entry
        }
        guard let file = file(key), let data = try? Data(contentsOf: file),
            let stored = try? JSONDecoder().decode(Stored.self, from: data), stored.key == key
        else { return nil }
        remember(stored.entry, for: key)
        return stored.entry
    }

    public func store(_ entry: Entry, for key: String) {
        remember(entry, for: key)
        guard let directory, let file = file(key), let data = try? JSONEncoder().encode(Stored(key: key, entry: entry))
        else { return }
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try data.write(to: file, options: .atomic)
        } catch {
            return
        }
        pruneDisk(directory)
    }

    public func removeAll() {
        entries = [:]
        if let directory { try? FileManager.default.removeItem(at: directory) }
    }

    private func remember(_ entry: Entry, for key: String) {
        useCounter += 1
        entries[key] = (entry, useCounter)
        if entries.count > limit, let oldest = entries.min(by: { $0.value.used < $1.value.used }) {
            entries[oldest.key] = nil
        }
    }

    private func file(_ key: String) -> URL? {
        guard let directory else { return nil }
        // A stable name from the key (FNV-1a, 64 bits).
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in key.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return directory.appendingPathComponent(String(hash, radix: 16) + ".json")
    }

    /// Keeps at most `limit` files, removing the least recently written.
    private func pruneDisk(_ directory: URL) {
        let manager = FileManager.default
        guard
            let files = try? manager.contentsOfDirectory(
                at: directory, includingPropertiesForKeys: [.contentModificationDateKey]),
            files.count > limit
        else { return }
        let dated = files.filter { $0.pathExtension == "json" }.map { file in
            (
                file,
                (try? file.resourceValues(forKeys: [.contentModificationDateKey]).contentModificationDate)
                    ?? .distantPast
            )
        }
        for (file, _) in dated.sorted(by: { $0.1 < $1.1 }).prefix(max(0, dated.count - limit)) {
            try? manager.removeItem(at: file)
        }
    }
}

/// ETag revalidation: a GET for a URL the cache holds sends `If-None-Match`; a 304 is answered with the
/// cached body as a 200 (marked `X-QuadKit-Cache: revalidated`), so callers never see a 304. Needed because
/// URLSession's cache on Linux ignores `Cache-Control: no-cache`, and the kit's sessions run without one.
public struct ETagMiddleware: ClientMiddleware {
    let cache: ETagCache
    /// Operations whose ETag does not identify the body sent.
    static let uncached: Set<String> = ["getImage", "getBook"]

    public init(cache: ETagCache) {
        self.cache = cache
    }

    public func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        // Images live at content-hash URLs and have their own cache (`ImageCache`). A book's ETag versions its
        // fields for `If-Match`, not the body (its loans, and its status as time passes), so it is never
        // revalidated: a 304 could keep a stale loan list or miss that the book became overdue.
        guard request.method == .get, !Self.uncached.contains(operationID) else {
            return try await next(request, body, baseURL)
        }
        let key = baseURL.absoluteString + (request.path ?? "")
        let cached = await cache.entry(for: key)
        var request = request
        if let cached, request.headerFields[.ifNoneMatch] == nil {
            request.headerFields[.ifNoneMatch] = cached.etag
        }
        let (response, responseBody) = try await next(request, body, baseURL)
        if response.status.code == 304, let cached {
            var fields = HTTPFields()
            fields[.eTag] = cached.etag
            if let type = cached.contentType { fields[.contentType] = type }
            fields[.quadKitCache] = "revalidated"
            return (HTTPResponse(status: .ok, headerFields: fields), HTTPBody(cached.body))
        }
        guard response.status.code == 200, let etag = response.headerFields[.eTag], let responseBody else {
            return (response, responseBody)
        }
        let data = try await Data(collecting: responseBody, upTo: 32 * 1024 * 1024)
        await cache.store(.init(etag: etag, body: data, contentType: response.headerFields[.contentType]), for: key)
        return (response, HTTPBody(data))
    }
}
