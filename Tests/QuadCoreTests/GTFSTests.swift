import Foundation
import Testing

@testable import QuadCore

/// A GTFS feed's rules: which days a service runs, what a time past 24:00 means, and times across Melbourne's changes
/// of clock (forward on Sunday 4 October 2026 at 02:00, back on Sunday 5 April 2026 at 03:00).
@Suite struct GTFSTests {
    static let melbourne = TimeZone(identifier: "Australia/Melbourne")!

    /// A campus shuttle: Clayton → Caulfield at 08:00 on weekdays (not on the 2 October holiday, and on Saturday 10
    /// October as well), a night trip leaving at 25:10 (01:10 the next morning), and a daily 08:00 from Caulfield.
    static func tables() -> [String: GTFSSchedule.Table] {
        [
            "agency.txt": [["agency_name": "Campus Shuttle", "agency_timezone": "Australia/Melbourne"]],
            "stops.txt": [
                ["stop_id": "CL", "stop_name": "Clayton"], ["stop_id": "CA", "stop_name": "Caulfield"],
                ["stop_id": "ST", "stop_name": "Station", "location_type": "1"],
            ],
            "routes.txt": [["route_id": "S1", "route_short_name": "601"]],
            "trips.txt": [
                ["route_id": "S1", "service_id": "WD", "trip_id": "morning", "trip_headsign": "Caulfield"],
                ["route_id": "S1", "service_id": "WD", "trip_id": "night", "trip_headsign": ""],
                ["route_id": "S1", "service_id": "DAILY", "trip_id": "back", "trip_headsign": "Clayton"],
            ],
            "stop_times.txt": [
                ["trip_id": "morning", "stop_id": "CL", "stop_sequence": "1", "departure_time": "08:00:00"],
                ["trip_id": "morning", "stop_id": "CA", "stop_sequence": "2", "departure_time": "08:25:00"],
                ["trip_id": "night", "stop_id": "CL", "stop_sequence": "1", "departure_time": "25:10:00"],
                ["trip_id": "night", "stop_id": "CA", "stop_sequence": "2", "departure_time": "25:35:00"],
                ["trip_id": "back", "stop_id": "CA", "stop_sequence": "1", "departure_time": "8:00:00"],
                ["trip_id": "back", "stop_id": "CL", "stop_sequence": "2", "departure_time": "08:25:00"],
            ],
            "calendar.txt": [
                [
                    "service_id": "WD", "monday": "1", "tuesday": "1", "wednesday": "1", "thursday": "1",
                    "friday": "1", "saturday": "0", "sunday": "0", "start_date": "20260101", "end_date": "20261231",
                ],
                [
                    "service_id": "DAILY", "monday": "1", "tuesday": "1", "wednesday": "1", "thursday": "1",
                    "friday": "1", "saturday": "1", "sunday": "1", "start_date": "20260101", "end_date": "20261231",
                ],
            ],
            "calendar_dates.txt": [
                ["service_id": "WD", "date": "20261002", "exception_type": "2"],
                ["service_id": "WD", "date": "20261010", "exception_type": "1"],
            ],
        ]
    }

    static func at(_ wallClock: String) -> Date { CampusClock(timeZone: melbourne).parseWallClock(wallClock)! }

    /// The departures of `feed` leaving on `date` (Melbourne), as "HH:mm trip from → to".
    static func leaving(_ feed: GTFSSchedule, on date: String) -> [String] {
        let clock = CampusClock(timeZone: melbourne)
        return feed.departures(at: at("\(date)T00:00:00"), since: 0).filter {
            clock.date(of: $0.scheduled).description == date
        }.map { "\(clock.time(of: $0.scheduled)) \($0.id.split(separator: "-")[0]) \($0.from) → \($0.to)" }
    }

    @Test func aFeedIsReadWithItsStopsServicesAndCalls() throws {
        let feed = try GTFSSchedule(tables: Self.tables())
        #expect(feed.agency == "Campus Shuttle")
        #expect(feed.timeZone == Self.melbourne)
        // The station is not a stop a bus is boarded at.
        #expect(feed.stops.map(\.name) == ["Caulfield", "Clayton"])
        // The last stop of each trip is nobody's departure; a trip without a headsign goes to its last stop.
        #expect(feed.calls.count == 3)
        #expect(feed.calls.first { $0.tripId == "night" }?.headsign == "Caulfield")
        #expect(feed.calls.first { $0.tripId == "back" }?.seconds == 8 * 3600)
    }

    @Test func servicesRunOnTheirDaysWithTheirExceptions() throws {
        let feed = try GTFSSchedule(tables: Self.tables())
        // Thursday 1 October: Wednesday's night trip at 01:10, the daily trip back and the morning trip.
        #expect(
            Self.leaving(feed, on: "2026-10-01") == [
                "01:10 night Clayton → Caulfield", "08:00 back Caulfield → Clayton",
                "08:00 morning Clayton → Caulfield",
            ])
        // Friday 2 October, a holiday: no weekday trips; the night trip of Thursday's service still leaves at 01:10.
        #expect(
            Self.leaving(feed, on: "2026-10-02") == [
                "01:10 night Clayton → Caulfield", "08:00 back Caulfield → Clayton",
            ])
        // Saturday 3 October: the daily trip only (and no night trip of Friday's, which did not run).
        #expect(Self.leaving(feed, on: "2026-10-03") == ["08:00 back Caulfield → Clayton"])
        // Saturday 10 October, added: the weekday trips run.
        // (Friday's night trip leaves at 01:10 that morning, and the Saturday's own at 01:10 on Sunday.)
        #expect(
            Self.leaving(feed, on: "2026-10-10") == [
                "01:10 night Clayton → Caulfield", "08:00 back Caulfield → Clayton",
                "08:00 morning Clayton → Caulfield",
            ])
        #expect(
            Self.leaving(feed, on: "2026-10-11") == [
                "01:10 night Clayton → Caulfield", "08:00 back Caulfield → Clayton",
            ])
    }

    @Test func timesStayRightAcrossTheChangesOfClock() throws {
        let feed = try GTFSSchedule(tables: Self.tables())
        let clock = CampusClock(timeZone: Self.melbourne)
        func back(_ date: String) -> Date {
            feed.departures(at: Self.at("\(date)T00:00:00"), since: 0).first {
                $0.id.hasPrefix("back-") && clock.date(of: $0.scheduled).description == date
            }!.scheduled
        }
        // 08:00 each day on the wall clock, whichever side of a change: 23 hours apart when the clocks go forward,
        // 25 when they go back.
        for date in ["2026-10-03", "2026-10-04", "2026-10-05", "2026-04-04", "2026-04-05", "2026-04-06"] {
            #expect(clock.time(of: back(date)).description == "08:00", "\(date)")
        }
        #expect(back("2026-10-04").timeIntervalSince(back("2026-10-03")) == 23 * 3600)
        #expect(back("2026-04-05").timeIntervalSince(back("2026-04-04")) == 25 * 3600)
        // The spec's rule itself: noon less 12 hours on a day the clocks go forward is 23:00 the evening before.
        #expect(
            GTFSSchedule.instant(day: LocalDate("2026-10-04")!, seconds: 0, timeZone: Self.melbourne)
                == Self.at("2026-10-03T23:00:00"))
    }

    @Test func gtfsTimesParse() {
        #expect(GTFSSchedule.seconds("25:10:00") == 90600)
        #expect(GTFSSchedule.seconds("8:05:30") == 29130)
        #expect(GTFSSchedule.seconds("08:5:30") == nil)
        #expect(GTFSSchedule.seconds("08:60:00") == nil)
        #expect(GTFSSchedule.seconds("") == nil)
        #expect(GTFSSchedule.seconds("tomorrow") == nil)
    }

    @Test func aFeedAtFaultNamesEachFileRowAndColumn() {
        var tables = Self.tables()
        tables["stop_times.txt"]?.append([
            "trip_id": "ghost", "stop_id": "CL", "stop_sequence": "1", "departure_time": "09:00:00",
        ])
        tables["stop_times.txt"]?.append([
            "trip_id": "morning", "stop_id": "XX", "stop_sequence": "3", "departure_time": "09:00:00",
        ])
        tables["stop_times.txt"]?.append([
            "trip_id": "morning", "stop_id": "CL", "stop_sequence": "4", "departure_time": "9am",
        ])
        tables["calendar_dates.txt"]?.append(["service_id": "WD", "date": "2026-10-02", "exception_type": "3"])
        tables["agency.txt"] = [["agency_name": "Campus Shuttle", "agency_timezone": "Melbourne"]]
        tables["routes.txt"] = nil
        #expect(throws: ValidationFailure.self) { try GTFSSchedule(tables: tables) }
        do {
            _ = try GTFSSchedule(tables: tables)
        } catch {
            #expect(error.errors.map(\.field) == ["routes.txt"])
        }
        tables["routes.txt"] = Self.tables()["routes.txt"]
        do {
            _ = try GTFSSchedule(tables: tables)
        } catch {
            #expect(
                error.errors.map { "\($0.field) \($0.row ?? 0)" } == [
                    "agency.txt agency_timezone 2", "calendar_dates.txt date 4",
                    "stop_times.txt trip_id 8", "stop_times.txt stop_id 9", "stop_times.txt departure_time 10",
                ])
        }
    }
}
