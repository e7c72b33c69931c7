import Foundation
import Logging
import QuadCore
import QuadMail
import ServiceLifecycle

/// Takes the outbox's messages to the relay, on every instance: claims a few due now, hands each over, and records
/// what became of it (sent; put off, to try again later; refused for good). Wakes when a message is queued on this
/// instance (`wake()`) and every `every` otherwise, for retries and other instances' messages. Logs say which message
/// and why, never to whom or what it says.
package final class MailCourier: Service, Sendable {
    let outbox: Outbox
    let client: SMTPClient
    let logger: Logger
    let every: Duration
    private let (wakes, waker) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))

    package init(outbox: Outbox, client: SMTPClient, logger: Logger, every: Duration = .seconds(30)) {
        self.outbox = outbox
        self.client = client
        self.logger = logger
        self.every = every
    }

    /// A message was queued: deliver now rather than at the next round.
    package func wake() { waker.yield() }

    package func run() async throws {
        await cancelWhenGracefulShutdown {
            var lastPrune = Date.distantPast
            while !Task.isCancelled {
                do {
                    while try await self.deliverDue() > 0 {}
                    if self.outbox.clock.now.timeIntervalSince(lastPrune) > 3600 {
                        try await self.outbox.prune()
                        lastPrune = self.outbox.clock.now
                    }
                } catch is CancellationError {
                    // Quad is stopping: what was not sent waits in the outbox for the next start.
                    return
                } catch {
                    self.logger.warning("mail: the outbox could not be read: \(error)")
                }
                await self.waitForWork()
            }
        }
    }

    /// Until woken, or `every` has passed on the server's clock.
    private func waitForWork() async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { [wakes] in for await _ in wakes { return } }
            group.addTask { [every, outbox] in try? await outbox.clock.sleep(for: every) }
            await group.next()
            group.cancelAll()
        }
    }

    /// Delivers the messages due now that it could claim; returns how many it claimed.
    @discardableResult
    package func deliverDue(limit: Int = 20) async throws -> Int {
        let claimed = try await outbox.claim(limit: limit)
        for message in claimed {
            let outcome: Result<Void, SMTPFailure>
            do {
                try await client.send(from: message.sender, to: [message.recipient], message: message.message)
                outcome = .success(())
            } catch {
                outcome = .failure(error)
            }
            switch outcome {
            case .success:
                try await outbox.sent(message.id)
                logger.info("mail: sent \(message.id)")
            case .failure(.temporary(let why)):
                try await outbox.putOff(message, because: why)
                logger.notice("mail: \(message.id) put off: \(Self.withoutAddresses(why))")
            case .failure(.permanent(let why)):
                try await outbox.failed(message.id, because: why)
                logger.warning("mail: \(message.id) refused: \(Self.withoutAddresses(why))")
            }
        }
        return claimed.count
    }

    /// A relay's reply as the logs may show it: relays often repeat the address they refuse.
    static func withoutAddresses(_ text: String) -> String {
        text.replacing(/[^\s<>"]+@[^\s<>"]+/, with: "(an address)")
    }
}
