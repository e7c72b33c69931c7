import Foundation
import QuadCore

/// Keeps one resource fresh: it refreshes every `interval` (set by the app, never under 5 s), with jitter so
/// many clients do not call in step, backs off after errors, pauses and resumes with the app's activity,
/// refreshes at once on demand, and coalesces concurrent refreshes into one request. While live updates are
/// connected it slows to a safety net.
public actor Refresher {
    /// The shortest interval allowed, whatever the app asks.
    public static let floor: Duration = .seconds(5)

    public struct Settings: Sendable, Equatable {
        public var interval: Duration
        /// The interval while live updates are connected: a safety net for missed events.
        public var liveInterval: Duration
        /// Each wait is the interval ± this fraction, at random.
        public var jitter: Double
        /// After n failures in a row the wait is interval · 2ⁿ, up to this.
        public var maxBackoff: Duration

        public init(
            interval: Duration = .seconds(30), liveInterval: Duration = .seconds(300), jitter: Double = 0.1,
            maxBackoff: Duration = .seconds(300)
        ) {
            self.interval = max(interval, Refresher.floor)
            self.liveInterval = max(liveInterval, self.interval)
            self.jitter = min(max(jitter, 0), 0.5)
            self.maxBackoff = max(maxBackoff, self.interval)
        }
    }

    public private(set) var settings: Settings
    public private(set) var isPaused = false
    public private(set) var isLive = false
    public private(set) var consecutiveFailures = 0
    /// How many refreshes actually ran (coalesced calls count once).
    public private(set) var runs = 0
    private let clock: any KitClock
    private let random: @Sendable () -> Double
    private let action: @Sendable () async throws -> Void
    private var inFlight: Task<Bool, Never>?
    /// A change arrived while a refresh ran: it runs once more.
    private var rerun = false
    private var loop: Task<Void, Never>?

    /// `action` does one refresh and throws when it failed.
    public init(
        settings: Settings = Settings(), clock: any KitClock = SystemClock(),
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
        action: @escaping @Sendable () async throws -> Void
    ) {
        self.settings = settings
        self.clock = clock
        self.random = random
        self.action = action
    }

    /// Sets the interval (at least 5 s) and restarts the wait.
    public func setInterval(_ interval: Duration) {
        settings = Settings(
            interval: interval, liveInterval: settings.liveInterval, jitter: settings.jitter,
            maxBackoff: settings.maxBackoff)
        restartLoop()
    }

    /// Live updates connected (slow to the safety net) or not (back to the interval).
    public func setLive(_ live: Bool) {
        guard live != isLive else { return }
        isLive = live
        restartLoop()
    }

    /// The next wait: the interval (or safety net), doubled per failure up to the cap, ± jitter.
    public func nextDelay() -> Duration {
        var base = (isLive ? settings.liveInterval : settings.interval).seconds
        if consecutiveFailures > 0 {
            base = min(settings.maxBackoff.seconds, base * pow(2, Double(min(consecutiveFailures, 20))))
        }
        let spread = base * settings.jitter
        return .seconds(max(Refresher.floor.seconds, base - spread + 2 * spread * random()))
    }

    /// Starts the periodic refresh (after an immediate one).
    public func start() {
        isPaused = false
        guard loop == nil else { return }
        loop = Task { [weak self] in
            _ = await self?.refreshNow()
            await self?.runLoop()
        }
    }

    /// Stops refreshing (the app went to the background).
    public func pause() {
        isPaused = true
        loop?.cancel()
        loop = nil
    }

    /// Resumes with an immediate refresh (the app is active again).
    public func resume() {
        guard isPaused || loop == nil else { return }
        start()
    }

    public func stop() { pause() }

    /// Refreshes now; if a refresh is already running, waits for that one instead. True when it succeeded.
    @discardableResult
    public func refreshNow() async -> Bool {
        if let inFlight { return await join(inFlight) }
        return await run()
    }

    /// Refreshes because the server announced a change. A refresh already running may have read the data
    /// before that change, so it runs once more when it ends (however many changes arrive meanwhile: they
    /// share that one more run). True when the last run succeeded.
    @discardableResult
    public func refreshAfterChange() async -> Bool {
        if let inFlight {
            rerun = true
            return await join(inFlight)
        }
        return await run()
    }

    /// How many callers are waiting for the refresh in flight rather than starting their own.
    public private(set) var joined = 0

    private func join(_ refresh: Task<Bool, Never>) async -> Bool {
        joined += 1
        defer { joined -= 1 }
        return await refresh.value
    }

    /// A change was applied in place (from a live event): a refresh running now may have read before it and
    /// would put the old data back, so it runs once more when it ends. Nothing happens when none is running.
    public func noteChange() {
        if inFlight != nil { rerun = true }
    }

    private func run() async -> Bool {
        let action = action
        // The task runs on this actor between awaits, so `inFlight` is set before its first step, and the
        // decision to run again or to finish is taken in one step (no change can slip between them).
        let task = Task { () -> Bool in
            while true {
                self.beginRun()
                let ok: Bool
                do {
                    try await action()
                    ok = true
                } catch {
                    ok = false
                }
                if self.finish(ok) { return ok }
            }
        }
        inFlight = task
        return await task.value
    }

    private func beginRun() {
        runs += 1
        rerun = false
    }

    /// After a run: true when done (and no longer in flight), false when a change asks for one more run.
    private func finish(_ ok: Bool) -> Bool {
        if rerun { return false }
        inFlight = nil
        consecutiveFailures = ok ? 0 : consecutiveFailures + 1
        return true
    }

    private func restartLoop() {
        guard loop != nil, !isPaused else { return }
        loop?.cancel()
        loop = Task { [weak self] in await self?.runLoop() }
    }

    private func runLoop() async {
        while !Task.isCancelled {
            do { try await clock.sleep(for: nextDelay()) } catch { return }
            if Task.isCancelled { return }
            _ = await refreshNow()
        }
    }
}
