import Foundation
import Testing

@testable import QuadCore

/// What a GTFS-Realtime TripUpdates feed does to the departures: a delay carried on to the stops after it, a time
/// winning over a delay, a stop skipped, "no data", a run cancelled on its own day only, and the schedule again once the
/// feed is too old to believe.
@Suite struct GTFSRealtimeTests {
    static let melbourne = TimeZone(identifier: "Australia/Melbourne")!
    static let clock = CampusClock(timeZone: melbourne)

    /// A daily loop calling at A 08:00, B 08:10, C 08:20 and D 08:30 (boarding at each), and a daily 09:00 from A.
    static let schedule = GTFSSchedule(
        agency: "Loop", timeZone: melbourne,
        stops: ["A", "B", "C", "D"].map { GTFSSchedule.Stop(id: $0, name: "Stop \($0)") },
        services: [
            "DAILY": .init(
                weekdays: Set(1...7), start: LocalDate("2026-01-01"), end: LocalDate("2026-12-31"))
        ],
        calls: ["A", "B", "C", "D"].enumerated().map { index, stop in
            GTFSSchedule.Call(
                tripId: "loop", serviceId: "DAILY", stopId: stop, stopSequence: index + 1,
                seconds: 8 * 3600 + index * 600, route: "L", headsign: "Around")
        } + [
            GTFSSchedule.Call(
                tripId: "nine", serviceId: "DAILY", stopId: "A", stopSequence: 1, seconds: 9 * 3600, route: "L",
                headsign: "Around")
        ])

    static func at(_ wallClock: String) -> Date { clock.parseWallClock(wallClock)! }

    /// Each departure of the day at `now` + `later`, as "stop HH:mm live|scheduled|cancelled".
    static func shown(_ updates: TripUpdates, now: Date, later: TimeInterval = 0) -> [String] {
        schedule.departures(at: now, since: 3600, window: 3 * 3600, realtime: updates).filter {
            clock.date(of: $0.scheduled) == clock.date(of: now)
        }.map { departure in
            let seen = now.addingTimeInterval(later)
            let expected = departure.expected(now: seen)
            let word = departure.isCancelled(now: seen) ? "cancelled" : expected.live ? "live" : "scheduled"
            return "\(departure.stopId ?? "?")\(departure.id.hasPrefix("nine") ? "9" : "") "
                + "\(clock.time(of: expected.time)) \(word)"
        }
    }

    static let now = at("2026-11-30T07:50:00")

    static func feed(_ trips: [TripUpdates.Trip], madeAt: Date = now) -> TripUpdates {
        TripUpdates(madeAt: madeAt, liveFor: 90, trips: trips)
    }

    @Test func aDelayCarriesOnToTheStopsAfterItUntilTheNextUpdate() {
        let updates = Self.feed([
            .init(
                tripId: "loop",
                stops: [
                    .init(stopSequence: 2, departure: .init(delay: 180)),
                    .init(stopSequence: 3, arrival: .init(delay: 60)),
                ])
        ])
        #expect(
            Self.shown(updates, now: Self.now) == [
                "A 08:00 scheduled", "B 08:13 live", "C 08:21 live", "D 08:31 live", "A9 09:00 scheduled",
            ])
    }

    @Test func aTimeWinsOverADelayAndCarriesOnAsTheDifference() {
        let updates = Self.feed([
            .init(
                tripId: "loop",
                stops: [.init(stopSequence: 2, departure: .init(delay: 60, time: Self.at("2026-11-30T08:15:00")))])
        ])
        #expect(
            Self.shown(updates, now: Self.now) == [
                "A 08:00 scheduled", "B 08:15 live", "C 08:25 live", "D 08:35 live", "A9 09:00 scheduled",
            ])
    }

    @Test func aStopSkippedIsCancelledThereAloneAndNoDataStopsTheDelay() {
        let updates = Self.feed([
            .init(
                tripId: "loop",
                stops: [
                    .init(stopSequence: 1, departure: .init(delay: 120)),
                    .init(stopId: "B", relationship: .skipped),
                    .init(stopSequence: 3, relationship: .noData),
                ])
        ])
        #expect(
            Self.shown(updates, now: Self.now) == [
                "A 08:02 live", "B 08:10 cancelled", "C 08:20 scheduled", "D 08:30 scheduled", "A9 09:00 scheduled",
            ])
        // Without the skip, B carries A's delay on.
        let carried = Self.feed([.init(tripId: "loop", stops: [.init(stopId: "A", departure: .init(delay: 120))])])
        #expect(Self.shown(carried, now: Self.now).prefix(2) == ["A 08:02 live", "B 08:12 live"])
    }

    @Test func aRunCancelledIsCancelledOnItsDayAloneAndTheTripsDelayCountsWhereNoStopSpeaks() {
        let tomorrow = Self.feed([.init(tripId: "loop", startDate: LocalDate("2026-12-01"), cancelled: true)])
        #expect(Self.shown(tomorrow, now: Self.now).allSatisfy { $0.hasSuffix("scheduled") })
        let next = Self.schedule.departures(at: Self.at("2026-12-01T07:50:00"), realtime: tomorrow)
        #expect(next.filter { $0.id.hasPrefix("loop") && $0.isCancelled(now: Self.now) }.count == 4)

        // With no day named, the run nearest when the feed was made: today's, at 07:50.
        let today = Self.feed([.init(tripId: "loop", cancelled: true), .init(tripId: "nine", delay: 300)])
        #expect(
            Self.shown(today, now: Self.now) == [
                "A 08:00 cancelled", "B 08:10 cancelled", "C 08:20 cancelled", "D 08:30 cancelled", "A9 09:05 live",
            ])
    }

    @Test func aFeedTooOldIsTheScheduleAgainAndSaysWhenThatHappens() {
        let updates = Self.feed([
            .init(tripId: "loop", cancelled: true),
            .init(tripId: "nine", stops: [.init(stopSequence: 1, departure: .init(delay: 240))]),
        ])
        #expect(Self.shown(updates, now: Self.now, later: 90).last == "A9 09:04 live")
        #expect(Self.shown(updates, now: Self.now, later: 90.5).allSatisfy { $0.hasSuffix("scheduled") })
        let nine = Self.schedule.departures(at: Self.now, realtime: updates).first { $0.id.hasPrefix("nine") }!
        #expect(nine.nextChange(after: Self.now)! > Self.now.addingTimeInterval(90))
        #expect(nine.nextChange(after: Self.now)! < Self.now.addingTimeInterval(90.01))
        #expect(!updates.isLive(now: Self.now.addingTimeInterval(91)))
    }

    @Test func aPredictionHoursAwayFromTheScheduleIsAFeedsError() {
        let updates = Self.feed([.init(tripId: "nine", delay: 7 * 3600)])
        #expect(Self.shown(updates, now: Self.now).last == "A9 09:00 scheduled")
    }

    @Test func aFeedsClockRunningFastCountsFromWhenItWasRead() {
        let read = Self.now
        #expect(TripUpdates.madeAt(header: read.addingTimeInterval(600), readAt: read) == read)
        #expect(TripUpdates.madeAt(header: read.addingTimeInterval(-30), readAt: read) == read.addingTimeInterval(-30))
        #expect(TripUpdates.madeAt(header: nil, readAt: read) == read)
    }
}
