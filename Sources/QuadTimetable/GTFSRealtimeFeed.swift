import Foundation
import Logging
import QuadCore
import QuadPlatform
import ServiceLifecycle
import SwiftProtobuf

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A GTFS-Realtime feed's bytes (a protobuf `FeedMessage`, decoded by SwiftProtobuf with the Swift generated from the
/// official `.proto`) as QuadCore's `TripUpdates`: its trip updates only (vehicle positions and alerts are not shown).
enum GTFSRealtimeMessage {
    /// More trips than a feed of a whole city's buses holds: past this, the feed is refused.
    static let maximumTrips = 50_000

    struct Refused: Error, CustomStringConvertible {
        var description: String
    }

    static func tripUpdates(_ data: Data, readAt: Date, liveFor: TimeInterval) throws -> TripUpdates {
        let message: TransitRealtime_FeedMessage
        do {
            message = try TransitRealtime_FeedMessage(serializedBytes: data)
        } catch {
            throw Refused(description: "it is not a GTFS-Realtime feed (\(error))")
        }
        guard message.header.incrementality == .fullDataset else {
            throw Refused(description: "it is a DIFFERENTIAL feed, which Quad does not read")
        }
        let updates = message.entity.filter { $0.hasTripUpdate && !$0.isDeleted }.map(\.tripUpdate)
        guard updates.count <= maximumTrips else {
            throw Refused(description: "it has \(updates.count) trip updates, more than \(maximumTrips)")
        }
        let header = message.header.hasTimestamp ? Date(timeIntervalSince1970: Double(message.header.timestamp)) : nil
        return TripUpdates(
            madeAt: TripUpdates.madeAt(header: header, readAt: readAt), liveFor: liveFor,
            trips: updates.compactMap(trip))
    }

    /// A run of a trip in the schedule; nil for one added to it or running without one (nothing to match).
    static func trip(_ update: TransitRealtime_TripUpdate) -> TripUpdates.Trip? {
        let descriptor = update.trip
        guard descriptor.hasTripID, [.scheduled, .canceled].contains(descriptor.scheduleRelationship) else {
            return nil
        }
        return TripUpdates.Trip(
            tripId: descriptor.tripID, startDate: descriptor.hasStartDate ? day(descriptor.startDate) : nil,
            cancelled: descriptor.scheduleRelationship == .canceled,
            delay: update.hasDelay ? Int(update.delay) : nil,
            stops: update.stopTimeUpdate.map { stop in
                TripUpdates.StopUpdate(
                    stopSequence: stop.hasStopSequence ? Int(stop.stopSequence) : nil,
                    stopId: stop.hasStopID ? stop.stopID : nil,
                    relationship: stop.scheduleRelationship == .skipped
                        ? .skipped : stop.scheduleRelationship == .noData ? .noData : .scheduled,
                    departure: stop.hasDeparture ? event(stop.departure) : nil,
                    arrival: stop.hasArrival ? event(stop.arrival) : nil)
            })
    }

    static func event(_ event: TransitRealtime_TripUpdate.StopTimeEvent) -> TripUpdates.Event {
        TripUpdates.Event(
            delay: event.hasDelay ? Int(event.delay) : nil,
            time: event.hasTime ? Date(timeIntervalSince1970: Double(event.time)) : nil)
    }

    /// `20261130` → 2026-11-30.
    static func day(_ text: String) -> LocalDate? {
        guard text.count == 8, text.allSatisfy(\.isASCII) else { return nil }
        return LocalDate("\(text.prefix(4))-\(text.dropFirst(4).prefix(2))-\(text.suffix(2))")
    }
}

/// Reads the operator's GTFS-Realtime TripUpdates (`QUAD_GTFS_RT_URL`) every `every` seconds and hands them to the
/// timetable, whose departures then show each run's prediction or cancellation. When the feed stops answering, or
/// answers with data no newer than before, its predictions grow old and the departures read "Scheduled" again
/// `staleAfter` after the data was made. Every instance polls for itself and keeps what it read in memory.
struct GTFSRealtimePoller: Service {
    let timetable: Timetable
    let settings: GTFSRealtimeSettings
    /// The most an answer may hold.
    static let answerLimit = 32 * 1024 * 1024

    func run() async throws {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 10
        configuration.timeoutIntervalForResource = 30
        configuration.httpCookieStorage = nil
        configuration.urlCache = nil
        let session = URLSession(configuration: configuration)
        await cancelWhenGracefulShutdown { await poll(session) }
        session.invalidateAndCancel()
    }

    private func poll(_ session: URLSession) async {
        let logger = Logger(label: "quad.timetable.gtfs-rt")
        var failing: String?
        while !Task.isCancelled {
            do {
                await timetable.setRealtime(try await read(session))
                if failing != nil { logger.notice("The GTFS-Realtime feed answers again") }
                failing = nil
            } catch {
                // URLSession's own words may repeat the address, and with it the operator's key.
                let reason =
                    (error as? URLError).map { "it did not answer (URLError \($0.code.rawValue))" }
                    ?? String(describing: error)
                // Once per failure, not every read: the feed may be down for hours.
                if failing != reason {
                    logger.warning(
                        "The GTFS-Realtime feed cannot be read; the shuttles read \"Scheduled\" until it can",
                        metadata: ["reason": "\(reason)"])
                }
                failing = reason
            }
            try? await timetable.platform.clock.sleep(for: .seconds(settings.every))
        }
    }

    private func read(_ session: URLSession) async throws -> TripUpdates {
        var request = URLRequest(url: settings.url)
        request.setValue("application/x-protobuf, application/octet-stream", forHTTPHeaderField: "Accept")
        let (data, response) = try await session.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard status == 200 else { throw GTFSRealtimeMessage.Refused(description: "it answered \(status)") }
        guard data.count <= Self.answerLimit else {
            throw GTFSRealtimeMessage.Refused(description: "its answer is larger than 32 MiB")
        }
        return try GTFSRealtimeMessage.tripUpdates(
            data, readAt: timetable.now, liveFor: TimeInterval(settings.staleAfter))
    }
}
