import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import QuadCore
import QuadTestSupport
import Testing

@testable import QuadPlatform
@testable import QuadServer
@testable import QuadTimetable

/// `/timetable` counts down to the next shuttles in whole minutes: a kept copy of it (`PageCache`) is answered only
/// until the first countdown would read one minute less.
@Suite struct TimetableKeptPageTests {
    @Test func aKeptTimetableGoesWhenACountdownTicks() async throws {
        let logs = LogLines()
        // 10:05:30 on campus: the next shuttles leave at 10:15 (CBD) and 10:20 (Caulfield), 9 and 14 whole minutes
        // away, until 10:06:00.
        // A clock that stands still: a slow machine must not cross 10:06 by itself.
        let clock = ManualClock(now: TestTime.next(LocalTime(hour: 10, minute: 5)).addingTimeInterval(30))
        try await TestApp.run(
            configure: {
                $0.loadDemoData = true
                $0.clock = clock
            },
            // Without the demo's simulator, which moves shuttles' predictions at random (a "9 min" of another bus).
            live: true, services: false, logger: logs.logger
        ) { _, client in
            let kept = { logs.all.split(separator: "\n").filter { $0.contains(#""page": kept"#) }.count }
            // A visitor with a CSRF cookie (without one, the answer sets it and is not kept).
            let visitor: HTTPFields = [.cookie: "quad_csrf=abcdefghijklmnopqrstuvwxyz0123456789ABCD"]
            let rendered = try await client.execute(uri: "/timetable", method: .get, headers: visitor)
            #expect(rendered.status == .ok && rendered.text.contains("in 9\u{a0}min"))
            clock.advance(by: .seconds(20))
            #expect(try await client.execute(uri: "/timetable", method: .get, headers: visitor).body == rendered.body)
            #expect(kept() == 1)
            // Past 10:06: drawn again, one minute less.
            clock.advance(by: .seconds(15))
            let later = try await client.execute(uri: "/timetable", method: .get, headers: visitor)
            #expect(kept() == 1)
            #expect(later.text.contains("in 8\u{a0}min") && !later.text.contains("in 9\u{a0}min"))
        }
    }

    /// The instant a page's countdowns, classes or readings next read otherwise.
    @Test func aPageChangesAtItsFirstCountdownTick() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        var page = TimetablePage(refreshSeconds: 30, generatedAt: now)
        #expect(page.changes(after: now) == nil)
        let ms = { (date: Date) in Int(date.timeIntervalSince1970 * 1000) }
        let stop = { (id: String, leaves: Date) in
            ScheduleResponse.Stop(
                departure: "", arrival: "", predictedArrivalDate: "", id: id, scheduledDate: "",
                expectedAt: leaves.formatted(.iso8601), live: false)
        }
        page.stops =
            TimetableRoutes.live(
                parkings: [], stops: [stop("a", now.addingTimeInterval(150)), stop("b", now.addingTimeInterval(200))],
                now: now, clock: CampusClock(timeZone: .gmt), t: Localizer(language: .english)
            ).stops
        // 2.5 minutes (2 whole) until 30 s from now; 3m20s (3 whole) until 20 s from now.
        #expect(page.changes(after: now) == now.addingTimeInterval(20))
        page.changesAt = ms(now.addingTimeInterval(5))
        #expect(page.changes(after: now) == now.addingTimeInterval(5))
    }
}
