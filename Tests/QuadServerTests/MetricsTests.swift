import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import QuadCore
import QuadTestSupport
import Testing

@testable import QuadPlatform

/// `GET /metrics`: for the monitoring system the operator names, never anyone else; a booking moves its counter.
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
            #expect(try await client.book("yana", as: ada).status == .created)
            let after = try await Self.scrape(client)
            #expect(Self.value(after, booked) == Self.value(before, booked) + 1)
            #expect(
                Self.value(after, #"quad_events_total{kind="room"}"#)
                    > Self.value(before, #"quad_events_total{kind="room"}"#))
            #expect(after.contains(#"quad_http_request_duration_seconds_count{operation="bookRoom"}"#))

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
