import Foundation
import QuadCore
import Testing

@Suite struct ClockTests {
    @Test func anOffsetClockStartsAtItsInstantAndRunsOn() async throws {
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let clock = OffsetClock(start: start)
        #expect(clock.now >= start && clock.now < start.addingTimeInterval(5))
        clock.advance(by: .seconds(3600))
        #expect(clock.now >= start.addingTimeInterval(3600))
    }

    @Test func advancingWakesTheSleepersWhoseTimeHasCome() async throws {
        let clock = OffsetClock(start: Date(timeIntervalSince1970: 1_800_000_000))
        let hour = Task { try await clock.sleep(for: .seconds(3600)) }
        let day = Task { try await clock.sleep(for: .seconds(86_400)) }
        while clock.sleeperCount < 2 { await Task.yield() }
        clock.advance(by: .seconds(3601))
        try await hour.value
        // The day-long sleeper woke, looked at the clock and sleeps on.
        while clock.sleeperCount < 1 { await Task.yield() }
        day.cancel()
        await #expect(throws: CancellationError.self) { try await day.value }
        #expect(clock.sleeperCount == 0)
    }

    @Test func aShortSleepEndsInRealTime() async throws {
        let clock = OffsetClock(start: Date(timeIntervalSince1970: 1_800_000_000))
        let before = clock.now
        try await clock.sleep(for: .milliseconds(20))
        #expect(clock.now.timeIntervalSince(before) >= 0.02)
    }
}
