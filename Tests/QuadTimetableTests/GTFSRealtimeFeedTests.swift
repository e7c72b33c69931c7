import Foundation
import QuadCore
import SwiftProtobuf
import Testing

@testable import QuadTimetable

/// A GTFS-Realtime feed's bytes as Quad reads them (the messages as the official `.proto` defines them), and how its
/// word meets a feed account's on one departure. The feed from the operators' own bindings is in
/// e2e/test_gtfs_realtime.py.
@Suite struct GTFSRealtimeFeedTests {
    static let readAt = Date(timeIntervalSince1970: 1_796_000_000)

    static func message(_ build: (inout TransitRealtime_FeedMessage) -> Void) throws -> Data {
        var message = TransitRealtime_FeedMessage()
        message.header.gtfsRealtimeVersion = "2.0"
        message.header.timestamp = UInt64(readAt.timeIntervalSince1970) - 20
        build(&message)
        return try message.serializedData()
    }

    @Test func aFeedsTripUpdatesAreReadAndTheRestLeftAside() throws {
        let data = try Self.message { message in
            var late = TransitRealtime_FeedEntity()
            late.id = "1"
            late.tripUpdate.trip.tripID = "morning"
            late.tripUpdate.trip.startDate = "20261130"
            var stop = TransitRealtime_TripUpdate.StopTimeUpdate()
            stop.stopSequence = 2
            stop.departure.delay = 180
            var skipped = TransitRealtime_TripUpdate.StopTimeUpdate()
            skipped.stopID = "CA"
            skipped.scheduleRelationship = .skipped
            late.tripUpdate.stopTimeUpdate = [stop, skipped]
            var cancelled = TransitRealtime_FeedEntity()
            cancelled.id = "2"
            cancelled.tripUpdate.trip.tripID = "back"
            cancelled.tripUpdate.trip.scheduleRelationship = .canceled
            cancelled.tripUpdate.delay = 60
            // An extra run has no schedule to meet; a vehicle's position is not shown; a deleted entity is gone.
            var added = TransitRealtime_FeedEntity()
            added.id = "3"
            added.tripUpdate.trip.tripID = "extra"
            added.tripUpdate.trip.scheduleRelationship = .added
            var vehicle = TransitRealtime_FeedEntity()
            vehicle.id = "4"
            vehicle.vehicle.trip.tripID = "morning"
            var deleted = TransitRealtime_FeedEntity()
            deleted.id = "5"
            deleted.isDeleted = true
            deleted.tripUpdate.trip.tripID = "evening"
            message.entity = [late, cancelled, added, vehicle, deleted]
        }
        let updates = try GTFSRealtimeMessage.tripUpdates(data, readAt: Self.readAt, liveFor: 90)
        #expect(updates.madeAt == Self.readAt.addingTimeInterval(-20))
        #expect(updates.liveFor == 90)
        #expect(
            updates.trips == [
                .init(
                    tripId: "morning", startDate: LocalDate("2026-11-30"),
                    stops: [
                        .init(stopSequence: 2, departure: .init(delay: 180)),
                        .init(stopId: "CA", relationship: .skipped),
                    ]),
                .init(tripId: "back", cancelled: true, delay: 60),
            ])
    }

    @Test func whatIsNotAFullFeedIsRefused() throws {
        #expect(throws: GTFSRealtimeMessage.Refused.self) {
            try GTFSRealtimeMessage.tripUpdates(
                Data("<html>Service unavailable</html>".utf8), readAt: Self.readAt, liveFor: 90)
        }
        let differential = try Self.message { $0.header.incrementality = .differential }
        #expect(throws: GTFSRealtimeMessage.Refused.self) {
            try GTFSRealtimeMessage.tripUpdates(differential, readAt: Self.readAt, liveFor: 90)
        }
        // Without a timestamp, the feed is as new as when it was read.
        let plain = try TransitRealtime_FeedMessage.with { $0.header.gtfsRealtimeVersion = "2.0" }.serializedData()
        #expect(try GTFSRealtimeMessage.tripUpdates(plain, readAt: Self.readAt, liveFor: 90).madeAt == Self.readAt)
    }

    /// The realtime feed and a feed account both speak of a departure: the newer word wins.
    @Test func theNewerOfTheRealtimeFeedAndAFeedAccountWins() throws {
        let zone = TimeZone(identifier: "Australia/Melbourne")!
        let clock = CampusClock(timeZone: zone)
        let schedule = GTFSSchedule(
            agency: "Shuttle", timeZone: zone, stops: [.init(id: "CL", name: "Clayton")],
            services: ["D": .init(weekdays: Set(1...7), start: LocalDate("2026-01-01"), end: LocalDate("2026-12-31"))],
            calls: [
                .init(
                    tripId: "t", serviceId: "D", stopId: "CL", stopSequence: 1, seconds: 8 * 3600, route: "601",
                    headsign: "Caulfield")
            ])
        let now = clock.parseWallClock("2026-11-30T07:50:00")!
        let settings = CampusSettings(
            name: "Clayton", timeZone: zone, semesterStart: LocalDate("2026-07-27")!, teachingWeeks: 12, breaks: [])
        let realtime = TripUpdates(
            madeAt: now.addingTimeInterval(-10), liveFor: 90, trips: [.init(tripId: "t", cancelled: true)])
        let id = "t-cl-20261130-0800"
        func departure(predictionMadeAt: Date) -> Departure? {
            Timetable.departures(
                routes: [], predictions: [id: (now.addingTimeInterval(15 * 60), predictionMadeAt)], settings: settings,
                at: now, gtfs: schedule, realtime: realtime
            ).first { $0.id == id }
        }
        let older = try #require(departure(predictionMadeAt: now.addingTimeInterval(-30)))
        #expect(older.isCancelled(now: now))
        let newer = try #require(departure(predictionMadeAt: now.addingTimeInterval(-5)))
        #expect(!newer.isCancelled(now: now))
        #expect(clock.time(of: newer.expected(now: now).time) == LocalTime(hour: 8, minute: 5))
    }
}
