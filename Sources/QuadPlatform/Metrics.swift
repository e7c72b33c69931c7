import Foundation
import Hummingbird
import NIOConcurrencyHelpers
import Prometheus

/// What Quad counts for a monitoring system, scraped at `GET /metrics` in Prometheus's text format: requests by
/// operation and status with their latency (the router's and the fast path's), events published by kind, bookings made
/// and released, offers made and taken, sign-in failures, and at each scrape the event streams open, the mail outbox's
/// depth and failures, and the database's connections waited for.
///
/// swift-prometheus's registry, one per server and handed in (no process-wide `MetricsSystem`): every server a test
/// process starts counts its own.
package final class QuadMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()

    /// Latency buckets: from a kept answer (well under a millisecond) to a slow write.
    static let buckets: [Duration] = [
        .microseconds(250), .milliseconds(1), .milliseconds(2.5), .milliseconds(5), .milliseconds(10),
        .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500),
        .seconds(1), .seconds(2.5), .seconds(5),
    ]

    /// Made once: a query asks for a connection many times a request, and a lookup in the registry costs a lock.
    private let connectionWaits: DurationHistogram

    package init() {
        connectionWaits = registry.makeDurationHistogram(
            name: "quad_database_connection_wait_seconds", buckets: Self.buckets,
            help: "How long a query waited for a database connection (SQLite's writer, or PostgreSQL's pool).")
    }

    package func connectionWait(_ duration: Duration) { connectionWaits.record(duration) }

    /// One answered request: `operation` is the contract's operationId, or the route (`GET /rooms/{roomId}`).
    package func request(operation: String, status: Int, duration: Duration) {
        let (counter, histogram) = requestMetrics(operation: operation, status: status)
        counter.increment()
        histogram.record(duration)
    }

    /// Each (operation, status)'s counter and each operation's histogram, made once: the registry's `make…` checks
    /// the name, labels and help text under its lock, which cost about 5 % of a kept answer (`perf`, #41). The keys
    /// are bounded: the contract's operations and the router's routes, and the statuses Quad answers.
    private let requests = NIOLockedValueBox([RequestKey: (Counter, DurationHistogram)]())

    private struct RequestKey: Hashable {
        let operation: String
        let status: Int
    }

    private func requestMetrics(operation: String, status: Int) -> (Counter, DurationHistogram) {
        let key = RequestKey(operation: operation, status: status)
        if let made = requests.withLockedValue({ $0[key] }) { return made }
        let made = (
            registry.makeCounter(
                name: "quad_http_requests_total", labels: [("operation", operation), ("status", String(status))],
                help: "Requests answered, by operation and status."
            ),
            registry.makeDurationHistogram(
                name: "quad_http_request_duration_seconds", labels: [("operation", operation)], buckets: Self.buckets,
                help: "How long answering took, by operation."
            )
        )
        requests.withLockedValue { $0[key] = made }
        return made
    }

    /// An event published (a room's spots, an offer made, a book's holds…), by kind.
    package func event(kind: String) {
        registry.makeCounter(
            name: "quad_events_total", labels: [("kind", kind)], help: "Live events published, by kind."
        ).increment()
    }

    /// What people do that an operator watches: bookings made and released, offers made and taken.
    package enum Activity: Sendable {
        case booked
        /// `reason`: `cancelled` (by its owner or an admin) or `no-check-in` (its check-in missed).
        case released(reason: String)
        case offerMade
        case offerTaken
    }

    package func count(_ activity: Activity, _ times: Int = 1) {
        guard times > 0 else { return }
        let counter =
            switch activity {
            case .booked:
                registry.makeCounter(name: "quad_bookings_total", help: "Room bookings made (each date of a series).")
            case .released(let reason):
                registry.makeCounter(
                    name: "quad_releases_total", labels: [("reason", reason)],
                    help: "Room bookings released before their end, by why.")
            case .offerMade:
                registry.makeCounter(
                    name: "quad_offers_made_total", help: "Offers made to the first in a waiting line.")
            case .offerTaken:
                registry.makeCounter(
                    name: "quad_offers_taken_total", help: "Offers taken (a booking or a loan from a line).")
            }
        counter.increment(by: Int64(times))
    }

    package func signInFailure() {
        registry.makeCounter(name: "quad_sign_in_failures_total", help: "Sign-ins refused (a wrong password).")
            .increment()
    }

    /// The text a scrape gets, with the gauges read now.
    package func scrape(platform: Platform) async -> String {
        registry.makeGauge(name: "quad_event_streams_open", help: "Event streams open now.")
            .set(Double(platform.eventStreams.total))
        registry.makeGauge(
            name: "quad_log_lines_dropped", help: "Log lines dropped since start: the log was not read fast enough."
        ).set(Double(LogWriter.standardError.dropped + LogWriter.standardOutput.dropped))
        if let (pending, failed) = try? await platform.outbox.counts() {
            registry.makeGauge(name: "quad_mail_outbox_depth", help: "Messages waiting to go.").set(Double(pending))
            registry.makeGauge(name: "quad_mail_outbox_failed", help: "Messages given up on (kept 90 days).")
                .set(Double(failed))
        }
        return registry.emitToString()
    }
}

/// Counts every answer the router gives, by the contract's operation (or the route) and status.
struct MetricsMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    let metrics: QuadMetrics
    let table: AccessTable

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws
        -> Response
    {
        let start = ContinuousClock.now
        let response = try await next(request, context)
        let operation = context.endpointPath.map { table.operationName(request.method, endpoint: $0) } ?? "unmatched"
        metrics.request(operation: operation, status: Int(response.status.code), duration: ContinuousClock.now - start)
        return response
    }
}
