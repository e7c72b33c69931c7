import Foundation
import Logging
import QuadCore
import QuadPlatform
import QuadWaitingLines

/// Passes on the offers nobody took, without a cron job: on every minute of the server's clock, each line whose offer
/// ended, or that holds none, is settled by the feature that keeps it (under its lock, so several instances settle a
/// line one after the other, and the second finds nothing left to do).
enum WaitingKeeper {
    static func every(minute waiting: WaitingLists, logger: Logger) -> MarkKeeper {
        MarkKeeper(every: 60, clock: waiting.clock) {
            do {
                try await waiting.settleDue()
            } catch {
                logger.error("Settling waiting lines failed: \(error)")
            }
        }
    }
}
