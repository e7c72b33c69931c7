import Foundation

/// Time, injected: the server, the kit and the command line read the wall clock and wait for instants only
/// through one of these, so that tests choose the instant they run at and move it by hand.
/// (`ContinuousClock` still measures how long something took; that is a duration, not the time of day.)
public protocol QuadClock: Sendable {
    /// The current time.
    var now: Date { get }
    /// Suspends for `duration` of this clock's time (throws `CancellationError` when the task is cancelled).
    func sleep(for duration: Duration) async throws
}

/// The real clock: what production runs on.
public struct SystemClock: QuadClock {
    public init() {}
    public var now: Date { Date() }
    public func sleep(for duration: Duration) async throws { try await Task.sleep(for: duration) }
}

extension Duration {
    /// The duration in seconds, as a Double.
    public var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
