import Foundation
import Hummingbird
import HummingbirdTesting
import QuadCore
import QuadTestSupport
import Testing

@testable import QuadPlatform
@testable import QuadServer

/// The one clock: `QUAD_NOW` only in testing mode, and what a server on another clock tells its clients.
@Suite struct ClockTests {
    @Test func aStartingInstantIsATestingSettingOnly() throws {
        let refused = try #require(throws: ConfigurationError.self) {
            try ServerConfiguration(environment: ["QUAD_NOW": "2026-11-24T16:30:00Z"])
        }
        #expect(refused.setting == "QUAD_NOW" && refused.description.contains("QUAD_TESTING=on"))
        #expect(throws: ConfigurationError.self) {
            try ServerConfiguration(environment: [:], flags: [.now: "2026-11-24T16:30:00Z"])
        }
        #expect(try ServerConfiguration(environment: [:]).clock is SystemClock)
        let bad = try #require(throws: ConfigurationError.self) {
            try ServerConfiguration(environment: ["QUAD_TESTING": "on", "QUAD_NOW": "tuesday"])
        }
        #expect(bad.setting == "QUAD_NOW")

        let start = try Date("2026-11-24T16:30:00Z", strategy: .iso8601)
        let testing = try ServerConfiguration(
            environment: ["QUAD_TESTING": "on"], flags: [.now: "2026-11-24T16:30:00Z"])
        #expect(testing.clock.now >= start && testing.clock.now < start.addingTimeInterval(60))
        #expect(try ServerConfiguration.testingClock(environment: [:]) == nil)
        #expect(throws: ConfigurationError.self) {
            try ServerConfiguration.testingClock(environment: ["QUAD_NOW": "2026-11-24T16:30:00Z"])
        }
    }

    @Test func answersTellTheServersTimeInTheirDateHeader() async throws {
        // Saturday afternoon on the demo campus, whatever the time of the run.
        let instant = TestTime.next(LocalTime(hour: 14, minute: 0)) { $0.weekday == 6 }
        try await TestApp.run(at: instant, live: true) { app, client in
            for uri in ["/health", "/api/rooms", "/rooms"] {
                try await client.execute(uri: uri, method: .get) { response in
                    let text = try #require(response.headers[.date])
                    let formatter = DateFormatter()
                    formatter.locale = Locale(identifier: "en_US_POSIX")
                    formatter.timeZone = .gmt
                    formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
                    let date = try #require(formatter.date(from: text))
                    #expect(abs(date.timeIntervalSince(app.clock.now)) < 5, "\(uri): \(text)")
                }
            }
        }
    }
}
