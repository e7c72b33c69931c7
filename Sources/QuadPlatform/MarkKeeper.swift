import Foundation
import QuadCore
import ServiceLifecycle

/// Work done on every mark of the server's clock (each minute, each five minutes), without a cron job. Every instance
/// runs it, so the work claims what it does in the database and finds nothing left when another did it first.
package struct MarkKeeper: Service {
    let mark: TimeInterval
    let clock: any QuadClock
    let work: @Sendable () async -> Void

    /// `work` on every multiple of `mark` seconds since the epoch, as the clock tells it.
    package init(every mark: TimeInterval, clock: any QuadClock, work: @escaping @Sendable () async -> Void) {
        self.mark = mark
        self.clock = clock
        self.work = work
    }

    package func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                let now = clock.now.timeIntervalSince1970
                let next = ((now / mark).rounded(.down) + 1) * mark
                do {
                    try await clock.sleep(for: .seconds(next - now))
                } catch {
                    return
                }
                await work()
            }
        }
    }
}
