import Foundation
import Hummingbird
import HummingbirdTesting
import NIOConcurrencyHelpers
import QuadCore
import QuadTestSupport
import Testing

@testable import QuadPlatform
@testable import QuadServer

@Suite struct RateLimitTests {
    @Test func aBucketRefillsAtItsRate() {
        let clock = ManualClock(now: TestTime.start)
        let limiter = RateLimiter(rate: 2, burst: 3, clock: clock)
        #expect((0..<3).allSatisfy { _ in limiter.take("a").allowed })
        let refused = limiter.take("a")
        #expect(!refused.allowed)
        #expect(refused.seconds == 1)
        #expect(limiter.take("b").allowed)  // buckets are per client
        clock.advance(by: .milliseconds(500))  // half a second at 2/s: one token back
        #expect(limiter.take("a").allowed)
        #expect(!limiter.take("a").allowed)
    }

    @Test func overTheLimitIs429WithRetryAfterAndPolicy() async throws {
        try await TestApp.run(configure: {
            // One request per 100 s: a slow, busy test machine cannot refill the bucket between requests.
            $0.rateLimit = 0.01; $0.rateBurst = 2
        }) { _, client in
            for _ in 0..<2 {
                try await client.execute(uri: "/api/openapi.yaml", method: .get) { response in
                    #expect(response.status == .ok)
                    #expect(response.headers[.rateLimitPolicy] == "\"default\";q=2;w=200")
                    #expect(response.headers[.rateLimit]?.hasPrefix("\"default\";r=") == true)
                }
            }
            try await client.execute(uri: "/api/openapi.yaml", method: .get) { response in
                #expect(response.status == .tooManyRequests)
                #expect(response.headers[.contentType] == "application/problem+json")
                #expect(response.headers[.retryAfter].flatMap { Int($0) }.map { (50...100).contains($0) } == true)
                #expect(response.headers[.rateLimitPolicy] != nil)
            }
            // Health checks are never limited: monitoring must see the truth.
            try await client.execute(uri: "/health", method: .get) { #expect($0.status == .ok) }
        }
    }
}
