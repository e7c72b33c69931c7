import HummingbirdBcrypt
import NIOConcurrencyHelpers
import NIOPosix
import QuadPlatform

/// bcrypt, on a thread of its own, with a bounded queue of sign-ins.
///
/// Why: hashing used NIO's shared thread pool, which SQLite's connections use too, so 35 sign-ins with unknown
/// usernames made an unrelated read wait 4–9 s behind them. On a thread of its own, hashes queue among themselves
/// and the database keeps its threads. Past `queueLimit` sign-ins waiting, one more is refused at once (503 with
/// `Retry-After`) rather than kept waiting for minutes. New passwords (an admin's, a sign-up's, which has a budget
/// of its own) wait their turn without a limit.
package final class PasswordHashing: Sendable {
    /// One thread for the process, whatever the number of servers in it (tests run many).
    private static let pool: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: 1)
        pool.start()
        return pool
    }()

    let queueLimit: Int
    private let queued = NIOLockedValueBox(0)

    init(queueLimit: Int = 32) {
        self.queueLimit = queueLimit
    }

    static let busy = Problem(
        .serviceUnavailable, type: "sign-in-busy", title: "Too many sign-ins at once",
        detail: "Quad is checking too many passwords at once: try again in a few seconds.",
        headers: [.retryAfter: "5"])

    /// Takes a place in the queue, or refuses (`busy`) when it is full. Ask before anything costly is spent on
    /// a sign-in, then hash with the place (`run`), which it gives back.
    package func place() throws(Problem) -> Place {
        let taken = queued.withLockedValue { count in
            guard count < queueLimit else { return false }
            count += 1
            return true
        }
        guard taken else { throw Self.busy }
        return Place(owner: self)
    }

    /// A place in the queue: `run` hashes once and gives it back; dropped unused, it is given back too.
    package final class Place: Sendable {
        private let owner: PasswordHashing
        private let used = NIOLockedValueBox(false)

        fileprivate init(owner: PasswordHashing) { self.owner = owner }

        deinit { giveBack() }

        private func giveBack() {
            let first = used.withLockedValue { used in
                defer { used = true }
                return !used
            }
            if first { owner.queued.withLockedValue { $0 -= 1 } }
        }

        func run<T: Sendable>(_ work: @escaping @Sendable () -> T) async throws -> T {
            defer { giveBack() }
            return try await PasswordHashing.pool.runIfActive(work)
        }

        package func verify(_ password: String, hash: String) async throws -> Bool {
            try await run { Bcrypt.verify(password, hash: hash) }
        }

        package func hash(_ password: String, cost: UInt8) async throws -> String {
            try await run { Bcrypt.hash(password, cost: cost) }
        }
    }

    /// Hashes a new password: it waits its turn, outside the sign-ins' limit.
    package static func hash(_ password: String, cost: UInt8) async throws -> String {
        try await pool.runIfActive { Bcrypt.hash(password, cost: cost) }
    }
}
