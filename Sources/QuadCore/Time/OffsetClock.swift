import Foundation

/// Real time from a chosen instant: it reads `start` when made, then runs at the real rate; `advance(by:)` moves it
/// on at once and wakes the sleepers whose time has come. Tests run Quad on it (the instant from `QUAD_TEST_NOW`),
/// and so does `quad serve` in testing mode (`QUAD_NOW`); production runs on `SystemClock`.
public final class OffsetClock: QuadClock, @unchecked Sendable {
    /// A sleeper waits for a wake-up (the real time elapsed, or an `advance`), then looks at the clock again.
    private enum Wake {
        case waiting(CheckedContinuation<Void, any Error>)
        /// Woken before it started waiting.
        case early(Result<Void, any Error>)
    }

    private let lock = NSLock()
    private let origin = ContinuousClock.now
    private let start: Date
    private var moved: TimeInterval = 0
    private var wakes: [UUID: Wake] = [:]

    public init(start: Date) {
        self.start = start
    }

    public var now: Date {
        let elapsed = (ContinuousClock.now - origin).seconds
        return start.addingTimeInterval(elapsed + lock.withLock { moved })
    }

    public func sleep(for duration: Duration) async throws {
        let deadline = now.addingTimeInterval(duration.seconds)
        while true {
            let remaining = deadline.timeIntervalSince(now)
            if remaining <= 0 { return }
            try await wait(upTo: remaining)
        }
    }

    /// How many tasks are sleeping on this clock now.
    public var sleeperCount: Int {
        lock.withLock { wakes.values.filter { if case .waiting = $0 { true } else { false } }.count }
    }

    /// Moves the clock forward by `duration`; sleepers whose deadline has passed return.
    public func advance(by duration: Duration) {
        let waiting = lock.withLock { () -> [CheckedContinuation<Void, any Error>] in
            moved += duration.seconds
            let waiting = wakes.compactMap { entry -> CheckedContinuation<Void, any Error>? in
                if case .waiting(let continuation) = entry.value { return continuation }
                return nil
            }
            wakes = wakes.filter { if case .early = $0.value { true } else { false } }
            return waiting
        }
        for continuation in waiting { continuation.resume() }
    }

    /// Returns after `seconds` of real time, or sooner when the clock is advanced.
    private func wait(upTo seconds: TimeInterval) async throws {
        let id = UUID()
        defer { lock.withLock { wakes[id] = nil } }
        let timer = Task { [weak self] in
            try await Task.sleep(for: .seconds(seconds))
            self?.wake(id, .success(()))
        }
        defer { timer.cancel() }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let early = lock.withLock { () -> Result<Void, any Error>? in
                    if Task.isCancelled { return .failure(CancellationError()) }
                    if case .early(let result) = wakes[id] { return result }
                    wakes[id] = .waiting(continuation)
                    return nil
                }
                if let early { continuation.resume(with: early) }
            }
        } onCancel: {
            wake(id, .failure(CancellationError()))
        }
    }

    private func wake(_ id: UUID, _ result: Result<Void, any Error>) {
        let continuation = lock.withLock { () -> CheckedContinuation<Void, any Error>? in
            if case .waiting(let continuation) = wakes[id] {
                wakes[id] = nil
                return continuation
            }
            wakes[id] = .early(result)
            return nil
        }
        continuation?.resume(with: result)
    }
}
