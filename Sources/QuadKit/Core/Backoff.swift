import Foundation

/// Exponential backoff with full jitter: attempt n waits a random time in [0, min(cap, base·2ⁿ)].
public struct Backoff: Sendable, Equatable {
    public var base: Duration
    public var cap: Duration

    public init(base: Duration = .milliseconds(250), cap: Duration = .seconds(30)) {
        self.base = base
        self.cap = cap
    }

    /// The ceiling for attempt `attempt` (0-based).
    public func ceiling(attempt: Int) -> Duration {
        let factor = pow(2.0, Double(min(attempt, 30)))
        return .seconds(min(cap.seconds, base.seconds * factor))
    }

    /// A delay for `attempt`, drawn uniformly from [0, ceiling] by `random` (a number in [0, 1)).
    public func delay(attempt: Int, random: @Sendable () -> Double = { Double.random(in: 0..<1) }) -> Duration {
        .seconds(ceiling(attempt: attempt).seconds * random())
    }
}

/// `Retry-After`: seconds, or an HTTP date, as a duration from `now` (nil when absent or unreadable).
public func parseRetryAfter(_ value: String?, now: Date) -> Duration? {
    guard let value = value?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
    if let seconds = Double(value), seconds >= 0 { return .seconds(seconds) }
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "GMT")
    formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
    guard let date = formatter.date(from: value) else { return nil }
    return .seconds(max(0, date.timeIntervalSince(now)))
}
