import NIOConcurrencyHelpers
import QuadTestSupport
import Testing

@testable import QuadPlatform

/// `GET /health` asks the database once for all who ask at once, and once a second at most.
@Suite struct HealthCheckTests {
    @Test(.timeLimit(.minutes(1))) func manyAskingAtOnceShareOnePingAndItsAnswerServesASecond() async throws {
        let check = HealthCheck()
        let pings = NIOLockedValueBox(0)
        let (answer, answering) = AsyncStream.makeStream(of: Bool.self)
        // The ping under way answers once the test says how.
        let ping: @Sendable () async -> Bool = {
            pings.withLockedValue { $0 += 1 }
            for await healthy in answer { return healthy }
            return false
        }
        let answers = try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<10 { group.addTask { await check.healthy(ping) } }
            do {
                try await eventually("the first ping is under way") { pings.withLockedValue { $0 } == 1 }
            } catch {
                answering.yield(false)
                throw error
            }
            answering.yield(false)
            return try await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(answers == Array(repeating: false, count: 10))
        #expect(pings.withLockedValue { $0 } == 1)
        // Asked again at once: the same answer, without a ping.
        #expect(await check.healthy(ping) == false)
        #expect(pings.withLockedValue { $0 } == 1)
    }
}
