/// Whether the database answers, for `GET /health`: one ping at a time however many ask, its answer good for a
/// second.
///
/// Why: `/health` is for load balancers and monitors, so the rate limit lets it through, and on SQLite each ping takes
/// the one writer connection in turn. Measured with `Benchmarks/run` (issue 41), 64 connections asking it got
/// 4,621 answers a second, p99 627 ms, at 286 µs of Quad's CPU each, and every booking meanwhile waited its turn
/// behind their pings. A monitor that polls every few seconds still sees each answer of the database's.
actor HealthCheck {
    private var last: (at: ContinuousClock.Instant, healthy: Bool)?
    private var asking: Task<Bool, Never>?
    /// How long an answer is given again.
    static let goodFor = Duration.seconds(1)

    /// The last answer of `ping`, if it is fresh, or the answer of the ping under way, or of a new one.
    func healthy(_ ping: @escaping @Sendable () async -> Bool) async -> Bool {
        if let last, ContinuousClock.now - last.at < Self.goodFor { return last.healthy }
        if let asking { return await asking.value }
        let task = Task { await ping() }
        asking = task
        let healthy = await task.value
        last = (ContinuousClock.now, healthy)
        asking = nil
        return healthy
    }
}
