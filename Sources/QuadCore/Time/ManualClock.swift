import Foundation

/// A clock that only moves when told: `advance(by:)` wakes the sleepers whose time has come.
/// Every requested sleep is recorded in `sleeps`, so tests can check intervals and backoff.
public final class ManualClock: QuadClock, @unchecked Sendable {
    private struct Sleeper {
        let id: UUID
        let deadline: Date
        let continuation: CheckedContinuation<Void, any Error>
    }

    private let lock = NSLock()
    private var current: Date
    private var sleepers: [Sleeper] = []
    private var recorded: [Duration] = []

    public init(now: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
        current = now
    }

    public var now: Date { lock.withLock { current } }

    /// Every duration passed to `sleep(for:)`, in order.
    public var sleeps: [Duration] { lock.withLock { recorded } }

    /// How many tasks are sleeping now.
    public var sleeperCount: Int { lock.withLock { sleepers.count } }

    public func sleep(for duration: Duration) async throws {
        let id = UUID()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                lock.withLock {
                    recorded.append(duration)
                    if Task.isCancelled {
                        continuation.resume(throwing: CancellationError())
                        return
                    }
                    let deadline = current.addingTimeInterval(duration.seconds)
                    if deadline <= current {
                        continuation.resume()
                    } else {
                        sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
                    }
                }
            }
        } onCancel: {
            let sleeper = lock.withLock { () -> Sleeper? in
                guard let index = sleepers.firstIndex(where: { $0.id == id }) else { return nil }
                return sleepers.remove(at: index)
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves time forward and wakes every sleeper whose deadline has passed.
    public func advance(by duration: Duration) {
        let due = lock.withLock { () -> [Sleeper] in
            current = current.addingTimeInterval(duration.seconds)
            let due = sleepers.filter { $0.deadline <= current }
            sleepers.removeAll { $0.deadline <= current }
            return due
        }
        for sleeper in due { sleeper.continuation.resume() }
    }
}
