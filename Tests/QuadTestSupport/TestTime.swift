import Foundation
import QuadCore

/// The instant tests run at: `QUAD_TEST_NOW` (an ISO 8601 instant, e.g. `2026-11-24T16:00:00Z`) when set, so a run
/// can be repeated at any hour of any day; the real time otherwise. Every clock a test makes starts from here,
/// unless the test needs a particular instant (`TestTime.next`).
public enum TestTime {
    public static let start: Date = {
        guard let text = ProcessInfo.processInfo.environment["QUAD_TEST_NOW"], !text.isEmpty else {
            return SystemClock().now
        }
        guard let date = try? Date(text, strategy: .iso8601) else {
            fatalError("QUAD_TEST_NOW=\(text) is not an ISO 8601 instant such as 2026-11-24T16:00:00Z")
        }
        return date
    }()

    /// A clock that reads `start` (or `at`) now and runs at the real rate; tests move it on with `advance(by:)`.
    public static func clock(at instant: Date? = nil) -> OffsetClock {
        OffsetClock(start: instant ?? start)
    }

    /// The demo campus's time zone (Clayton, Melbourne).
    public static let melbourne = TimeZone(identifier: "Australia/Melbourne")!

    /// 10:00 on the first weekday at or after the test's start, on the demo campus: every demo building is open then
    /// (the Library Wing and Engineering keep hours), for a test that books the demo's rooms now.
    public static let weekdayMorning = next(LocalTime(hour: 10), where: { (1...5).contains($0.weekday) })

    /// The date `instant` falls on in Melbourne.
    public static func melbourneDate(_ instant: Date) -> LocalDate {
        CampusClock(timeZone: melbourne).date(of: instant)
    }

    /// The first instant at or after `after` (the test's start) that reads `time` on a campus wall clock in
    /// `zone`, on a day for which `day` holds (any day by default): a weekday morning, the minute before a
    /// departure. The date still follows `QUAD_TEST_NOW`; only the time of day is chosen.
    public static func next(
        _ time: LocalTime, in zone: TimeZone = melbourne, after: Date = start,
        where day: (LocalDate) -> Bool = { _ in true }
    ) -> Date {
        let campus = CampusClock(timeZone: zone)
        var date = campus.date(of: after)
        while true {
            let instant = campus.instant(date, time)
            if instant >= after && day(date) { return instant }
            date = date.adding(days: 1)
        }
    }
}
