import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import QuadCore
import QuadTestSupport
import Testing

@testable import QuadPlatform

/// `GET /metrics`: for the monitoring system the operator names, never anyone else; a booking moves its counters, a
/// cancellation its release's.
/// (Its text passes `promtool check metrics` after a browser has used Quad: e2e/test_metrics.py.)
@Suite struct MetricsTests {
    static let token = "a metrics token of this test"

    static func scrape(_ client: any TestClientProtocol) async throws -> String {
        let answer = try await client.execute(
            uri: "/metrics", method: .get, headers: [.authorization: "Bearer \(Self.token)"])
        #expect(answer.status == .ok)
        #expect(answer.headers[.contentType]?.hasPrefix("text/plain") == true)
        return String(buffer: answer.body)
    }

    /// The value of the series `line` begins (`name{labels}`), or 0 when it is not there yet.
    static func value(_ text: String, _ series: String) -> Double {
        text.split(separator: "\n").first { $0.hasPrefix(series + " ") }.flatMap { Double($0.split(separator: " ")[1]) }
            ?? 0
    }

    @Test func aBookingMovesItsCounterAndOnlyTheMonitoringSystemReadsThem() async throws {
        try await TestApp.run(
            at: TestTime.weekdayMorning,
            configure: {
                $0.loadDemoData = true
                $0.metricsToken = Self.token
            }
        ) { app, client in
            let ada = try await app.signedIn("ada")
            let booked = #"quad_http_requests_total{operation="bookRoom",status="201"}"#
            let before = try await Self.scrape(client)
            let made = try await client.book("yana", as: ada)
            #expect(made.status == .created)
            let after = try await Self.scrape(client)
            #expect(Self.value(after, booked) == Self.value(before, booked) + 1)
            #expect(
                Self.value(after, #"quad_events_total{kind="room"}"#)
                    > Self.value(before, #"quad_events_total{kind="room"}"#))
            #expect(after.contains(#"quad_http_request_duration_seconds_count{operation="bookRoom"}"#))
            #expect(Self.value(after, "quad_bookings_total") == Self.value(before, "quad_bookings_total") + 1)
            // Every query waited for its connection, however briefly: the waits are counted.
            #expect(
                Self.value(after, "quad_database_connection_wait_seconds_count")
                    > Self.value(before, "quad_database_connection_wait_seconds_count"))

            // Cancelled: a release, by why.
            let answer = try JSONSerialization.jsonObject(with: Data(made.text.utf8)) as? [String: Any]
            let id = try #require((answer?["booking"] as? [String: Any])?["id"] as? String)
            let cancelled = try await client.execute(
                uri: "/api/rooms/yana/bookings/\(id)", method: .delete, headers: ada)
            #expect(cancelled.status == .noContent, "\(cancelled.text)")
            let released = #"quad_releases_total{reason="cancelled"}"#
            #expect(Self.value(try await Self.scrape(client), released) == Self.value(after, released) + 1)

            // Not to a person, even an admin, nor with another token.
            for headers: HTTPFields in [
                [:], ada, [.authorization: "Bearer \(TestApp.adminToken)"], [.authorization: "Bearer not the token"],
            ] {
                #expect(try await client.execute(uri: "/metrics", method: .get, headers: headers).status == .forbidden)
            }
        }
    }

    @Test func withNeitherAddressesNorATokenNoOneReadsThem() async throws {
        try await TestApp.run(at: TestTime.weekdayMorning) { _, client in
            let answer = try await client.execute(uri: "/metrics", method: .get)
            #expect(answer.status == .forbidden)
        }
    }
}
