import Foundation
import HTTPTypes
import OpenAPIRuntime

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

/// A cache of the last 200 response (body and ETag) per URL, for revalidation.
public actor ETagCache {
    public struct Entry: Sendable, Codable {
        public var etag: String
        public var body: Data
        public var contentType: String?
    }

    private var entries: [String: Entry] = [:]
    private let limit: Int

    public init(limit: Int = 256) {
        self.limit = limit
    }

    public func entry(for key: String) -> Entry? { entries[key] }

    public func store(_ entry: Entry, for key: String) {
        if entries.count >= limit, entries[key] == nil, let first = entries.keys.first { entries[first] = nil }
        entries[key] = entry
    }

    public func removeAll() { entries = [:] }
}

/// ETag revalidation: a GET for a URL the cache holds sends `If-None-Match`; a 304 is answered with the
/// cached body as a 200 (marked `X-QuadKit-Cache: revalidated`), so callers never see a 304. Needed because
/// URLSession's cache on Linux ignores `Cache-Control: no-cache`, and the kit's sessions run without one.
public struct ETagMiddleware: ClientMiddleware {
    let cache: ETagCache

    public init(cache: ETagCache) {
        self.cache = cache
    }

    public func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        // Images live at content-hash URLs and have their own cache (`ImageCache`).
        guard request.method == .get, operationID != "getImage" else { return try await next(request, body, baseURL) }
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
