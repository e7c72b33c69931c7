import NIOConcurrencyHelpers

/// A first-come, first-served mutual exclusion for async code (an actor alone would let
/// other calls in at every suspension point).
package final class AsyncLock: Sendable {
    private struct State {
        package var locked = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }
    private let state = NIOLockedValueBox(State())

    package init() {}

    package func withLock<R: Sendable>(_ body: () async throws -> R) async rethrows -> R {
        await acquire()
        defer { release() }
        return try await body()
    }

    private func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let acquired = state.withLockedValue { state -> Bool in
                if state.locked {
                    state.waiters.append(continuation)
                    return false
                }
                state.locked = true
                return true
            }
            if acquired { continuation.resume() }
        }
    }

    private func release() {
        let next = state.withLockedValue { state -> CheckedContinuation<Void, Never>? in
            if state.waiters.isEmpty {
                state.locked = false
                return nil
            }
            return state.waiters.removeFirst()
        }
        next?.resume()
    }
}
