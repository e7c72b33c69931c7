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
    /// What writes the messages queued unwritten (`LetterKind`); nil for a courier of written messages only (tests).
    let desk: MailDesk?
    let logger: Logger
    let every: Duration
    private let (wakes, waker) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))

    package init(
        outbox: Outbox, client: SMTPClient, desk: MailDesk? = nil, logger: Logger, every: Duration = .seconds(30)
    ) {
        self.outbox = outbox
        self.client = client
        self.desk = desk
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
    package func deliverDue(limit: Int = 50) async throws -> Int {
        let claimed = try await outbox.claim(limit: limit)
        let ready = try await write(claimed)
        // The round on one connection to the relay.
        let outcomes = await client.send(
            ready.map { SMTPEnvelope(sender: $0.sender, recipients: [$0.recipient], message: $0.message) })
        var sent: [String] = []
        for (message, outcome) in zip(ready, outcomes) {
            switch outcome {
            case .success:
                sent.append(message.id)
                logger.info("mail: sent \(message.id)")
            case .failure(.temporary(let why)):
                try await outbox.putOff(message, because: why)
                logger.notice("mail: \(message.id) put off: \(Self.withoutAddresses(why))")
            case .failure(.permanent(let why)):
                try await outbox.failed(message.id, because: why)
                logger.warning("mail: \(message.id) refused: \(Self.withoutAddresses(why))")
            }
        }
        // The relay's acceptances recorded together, one write for the round rather than one per message (the writer
        // is the bookings' too): a crash before this sends the round's again, each with its same Message-ID.
        try await outbox.sent(sent)
        return claimed.count
    }

    /// `claimed` with every message still to be written written, now, outside any change's transaction: to the
    /// address its person has now, in their language, with a new one-click link; a message whose person has no
    /// address, or turned its kind off, by now is dropped. What cannot be written (a letter this build does not know)
    /// is given up, and the logs say why.
    func write(_ claimed: [Outbox.Claimed]) async throws -> [Outbox.Claimed] {
        let unwritten = claimed.filter { $0.letter != nil }
        guard !unwritten.isEmpty else { return claimed }
        guard let desk else {
            for message in unwritten { try await outbox.failed(message.id, because: "no letters to write it with") }
            return claimed.filter { $0.letter == nil }
        }
        // Who each goes to now (beside the writer: a read).
        let found = try await outbox.database.read { sql in
            var found: [String: MailRecipient] = [:]
            for message in unwritten {
                guard let owner = message.owner, let kind = MailKind(rawValue: message.kind) else { continue }
                found[message.id] = try await desk.recipients.recipient(owner, choice: kind.choice, sql)
            }
            return found
        }
        let going = unwritten.filter { found[$0.id] != nil }
        let choices = going.compactMap { message in
            MailKind(rawValue: message.kind)?.choice.map { (message.id, found[message.id]!.username, $0) }
        }
        let tokens = try await outbox.database.transaction { sql in
            try await desk.recipients.unsubscribeTokens(choices.map { ($0.1, $0.2) }, sql)
        }
        let tokenOf = Dictionary(uniqueKeysWithValues: zip(choices.map(\.0), tokens))
        var written: [Outbox.Claimed] = []
        for var message in going {
            let to = found[message.id]!
            do {
                let mail = try desk.write(
                    id: message.id, letter: message.letter!, input: message.input ?? "{}", to: to,
                    token: tokenOf[message.id], date: message.createdAt)
                message.message = mail.rendered()
                message.recipient = to.address
                message.sender = desk.from.address
                message.subject = mail.subject
                message.letter = nil
                message.input = nil
                written.append(message)
            } catch {
                try await outbox.failed(message.id, because: "could not be written: \(error)")
                logger.error("mail: \(message.id) could not be written: \(error)")
            }
        }
        try await outbox.written(written, dropped: unwritten.filter { found[$0.id] == nil }.map(\.id))
        let ready = Dictionary(uniqueKeysWithValues: written.map { ($0.id, $0) })
        return claimed.compactMap { $0.letter == nil ? $0 : ready[$0.id] }
    }

    /// A relay's reply as the logs may show it: relays often repeat the address they refuse.
    static func withoutAddresses(_ text: String) -> String {
        text.replacing(/[^\s<>"]+@[^\s<>"]+/, with: "(an address)")
    }
}
