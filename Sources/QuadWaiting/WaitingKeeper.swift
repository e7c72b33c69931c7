import Foundation
import Logging
import QuadCore
import QuadWaitingLines
import ServiceLifecycle

/// Passes on the offers nobody took, without a cron job: on every minute of the server's clock, each line whose offer
/// ended, or that holds none, is settled by the feature that keeps it (under its lock, so several instances settle a
/// line one after the other, and the second finds nothing left to do).
package struct WaitingKeeper: Service {
    let waiting: WaitingLists
    let logger: Logger
    static let mark: TimeInterval = 60

    package init(waiting: WaitingLists, logger: Logger) {
        self.waiting = waiting
        self.logger = logger
    }

    package func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                let now = waiting.clock.now.timeIntervalSince1970
                let next = ((now / Self.mark).rounded(.down) + 1) * Self.mark
                do {
                    try await waiting.clock.sleep(for: .seconds(next - now))
                } catch {
                    return
                }
                do {
                    try await waiting.settleDue()
                } catch {
                    logger.error("Settling waiting lines failed: \(error)")
                }
            }
        }
    }
}
