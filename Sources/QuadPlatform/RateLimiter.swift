import Foundation
import HTTPTypes
import Hummingbird
import NIOConcurrencyHelpers
import QuadCore

/// A token bucket per client: `rate` requests a second on average, up to `burst` at once.
/// This is what keeps a fleet of clients with a bad refresh setting from taking the service down.
package final class RateLimiter: Sendable {
    package struct Decision: Equatable {
        package var allowed: Bool
        var remaining: Int
        /// Seconds until one request is allowed again (when refused) or the bucket is full (when allowed).
        package var seconds: Int

        /// Where the client stands, as the `RateLimit` header says it.
        package var header: String { "\"default\";r=\(remaining);t=\(seconds)" }
    }

    private struct Bucket {
        package var tokens: Double
        package var updated: Double
    }

    package let rate: Double
    package let burst: Double
    private let clock: any QuadClock
    private let buckets = NIOLockedValueBox<[String: Bucket]>([:])
    /// Above this many clients, full (idle) buckets are dropped: they hold nothing worth keeping.
    private let pruneAbove = 10_000

    package init(rate: Double, burst: Int, clock: any QuadClock) {
        self.rate = rate
        self.burst = Double(burst)
        self.clock = clock
        policyHeader = "\"default\";q=\(burst);w=\(max(1, Int((Double(burst) / rate).rounded(.up))))"
    }

    package func take(_ key: String) -> Decision {
        let now = clock.now.timeIntervalSince1970
        return buckets.withLockedValue { buckets in
            if buckets.count > pruneAbove {
                buckets = buckets.filter { min(burst, $0.value.tokens + max(0, now - $0.value.updated) * rate) < burst }
            }
            var bucket = buckets[key] ?? Bucket(tokens: burst, updated: now)
            bucket.tokens = min(burst, bucket.tokens + max(0, now - bucket.updated) * rate)
            bucket.updated = now
            let allowed = bucket.tokens >= 1
            if allowed { bucket.tokens -= 1 }
            buckets[key] = bucket
            let seconds = allowed ? (burst - bucket.tokens) / rate : (1 - bucket.tokens) / rate
            return Decision(
                allowed: allowed, remaining: Int(bucket.tokens),
                seconds: max(allowed ? 0 : 1, Int(seconds.rounded(.up))))
        }
    }

    /// The policy, as the IETF RateLimit header fields draft spells it: a quota of `burst` per window it takes to refill.
    /// The same for every answer, so made once.
    let policyHeader: String
}

/// Answers 429 with `Retry-After` once a client has spent its bucket; tells every client where it stands.
struct RateLimitMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    let limiter: RateLimiter

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    )
        async throws -> Response
    {
        // The health check (the matched route, not the raw path) answers load balancers whatever the load.
        guard context.endpointPath != "/health" else { return try await next(request, context) }
        let decision = limiter.take(context.clientKey)
        let state = decision.header
        guard decision.allowed else { throw Self.refusal(decision, limiter: limiter) }
        var response = try await next(request, context)
        response.headers[.rateLimitPolicy] = limiter.policyHeader
        response.headers[.rateLimit] = state
        return response
    }
}

extension RateLimitMiddleware {
    /// The 429 for a spent bucket, saying when to come back.
    package static func refusal(_ decision: RateLimiter.Decision, limiter: RateLimiter) -> Problem {
        Problem(
            .tooManyRequests, type: "rate-limited", title: "Too many requests",
            detail: "Slow down: try again in \(decision.seconds) s.",
            headers: [
                .retryAfter: String(decision.seconds), .rateLimitPolicy: limiter.policyHeader,
                .rateLimit: decision.header,
            ])
    }
}

extension HTTPField.Name {
    static let rateLimitPolicy = HTTPField.Name("RateLimit-Policy")!
    package static let rateLimit = HTTPField.Name("RateLimit")!
    package static let idempotencyKey = HTTPField.Name("Idempotency-Key")!
    static let lastEventID = HTTPField.Name("Last-Event-ID")!
}
