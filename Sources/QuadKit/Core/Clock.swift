import Foundation
import QuadCore

/// Time, injected: the kit never reads the wall clock or sleeps except through one of these, so tests
/// of intervals, backoff and countdowns advance time by hand and run instantly. The same design as the
/// server's: `SystemClock`, `ManualClock` and `OffsetClock` come from QuadCore.
public typealias KitClock = QuadClock

extension ManualClock {
    /// Waits (in real time, briefly) until at least `count` tasks are asleep on this clock.
    public func waitForSleepers(_ count: Int = 1, timeout: Duration = .seconds(10)) async throws {
        let start = ContinuousClock.now
        while sleeperCount < count {
            if ContinuousClock.now - start > timeout { throw KitError.timedOut("waiting for \(count) sleepers") }
            try await Task.sleep(for: .milliseconds(2))
        }
    }
}
