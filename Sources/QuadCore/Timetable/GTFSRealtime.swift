import Foundation

/// A GTFS-Realtime TripUpdates feed (https://gtfs.org/documentation/realtime/reference/) as Quad reads it: for each
/// trip it speaks of, whether the run is cancelled, and its predicted times or delays at its stops. The server decodes
/// the operator's protobuf into this; the rules that turn it into each departure's prediction are here
/// (`GTFSSchedule.departures(at:since:window:realtime:)`).
public struct TripUpdates: Sendable, Equatable {
    /// When the feed's data was made: its header's timestamp, never later than when it was read (nor earlier than a
    /// clock that is off by a day would make it).
    public var madeAt: Date
    /// How long after `madeAt` its predictions are believed: past that, the departures read "Scheduled" again.
    public var liveFor: TimeInterval
    public var trips: [Trip]

    public init(madeAt: Date, liveFor: TimeInterval, trips: [Trip]) {
        self.madeAt = madeAt
        self.liveFor = liveFor
        self.trips = trips
    }

    /// One run of a trip.
    public struct Trip: Sendable, Equatable {
        public var tripId: String
        /// The service day of the run (`start_date`); nil: the run whose day is nearest `madeAt`.
        public var startDate: LocalDate?
        /// The whole run is cancelled (`CANCELED`).
        public var cancelled: Bool
        /// The run's delay in seconds, where no stop's update says otherwise.
        public var delay: Int?
        /// In the feed's order, which the spec says is by stop sequence.
        public var stops: [StopUpdate]

        public init(
            tripId: String, startDate: LocalDate? = nil, cancelled: Bool = false, delay: Int? = nil,
            stops: [StopUpdate] = []
        ) {
            self.tripId = tripId
            self.startDate = startDate
            self.cancelled = cancelled
            self.delay = delay
            self.stops = stops
        }
    }

    /// What the feed says of one stop of a run: its sequence or its stop (one at least), and either a time or a delay
    /// (`departure` before `arrival`; a time before a delay), or that the bus will not stop, or that nothing is known.
    public struct StopUpdate: Sendable, Equatable {
        public enum Relationship: Sendable, Equatable {
            case scheduled
            /// The bus does not call at this stop.
            case skipped
            /// Nothing is known of this stop and, until the next update, of those after it.
            case noData
        }

        public var stopSequence: Int?
        public var stopId: String?
        public var relationship: Relationship
        public var departure: Event?
        public var arrival: Event?

        public init(
            stopSequence: Int? = nil, stopId: String? = nil, relationship: Relationship = .scheduled,
            departure: Event? = nil, arrival: Event? = nil
        ) {
            self.stopSequence = stopSequence
            self.stopId = stopId
            self.relationship = relationship
            self.departure = departure
            self.arrival = arrival
        }
    }

    /// A predicted event: a delay in seconds from the schedule, or the time itself (which wins when both are given).
    public struct Event: Sendable, Equatable {
        public var delay: Int?
        public var time: Date?

        public init(delay: Int? = nil, time: Date? = nil) {
            self.delay = delay
            self.time = time
        }
    }

    /// A feed whose header says it was made after it was read has a clock running fast: it counts from when it was
    /// read. One with no timestamp counts from then too.
    public static func madeAt(header: Date?, readAt: Date) -> Date {
        guard let header else { return readAt }
        return min(header, readAt)
    }

    /// Whether its predictions are still believed at `now`.
    public func isLive(now: Date) -> Bool { now.timeIntervalSince(madeAt) <= liveFor }
}

extension GTFSSchedule {
    /// What a realtime feed says of one call of one run: a predicted time (nil: none known), or that it is cancelled.
    struct RealtimeCall: Equatable {
        var predicted: Date?
        var cancelled: Bool
    }

    /// A prediction further than this from the schedule is a feed's error, as for a feed account's (`Departure`).
    static let realtimeReach: TimeInterval = 6 * 3600

    /// The realtime feed's word on `call` of the run on service day `day` (which leaves at `scheduled`), given the
    /// run's calls where riders board (`calls`, by sequence); nil when the feed says nothing of it. An update for an
    /// earlier stop carries its delay on to the stops after it (the spec's propagation); one saying "no data" stops
    /// it; a stop skipped is cancelled there alone.
    static func realtime(
        _ trip: TripUpdates.Trip, call: Call, scheduled: Date, day: LocalDate, calls: [Call], timeZone: TimeZone
    ) -> RealtimeCall? {
        if trip.cancelled { return RealtimeCall(predicted: nil, cancelled: true) }
        func sequence(_ update: TripUpdates.StopUpdate) -> Int? {
            update.stopSequence ?? calls.first { $0.stopId == update.stopId }?.stopSequence
        }
        func shifted(_ delay: Int?) -> RealtimeCall? {
            guard let delay else { return nil }
            return RealtimeCall(predicted: scheduled.addingTimeInterval(Double(delay)), cancelled: false)
        }
        let before = trip.stops.compactMap { update in sequence(update).map { (sequence: $0, update: update) } }
            .filter { $0.sequence <= call.stopSequence }
        let answer: RealtimeCall?
        if let here = before.last(where: { $0.sequence == call.stopSequence }) {
            let update = here.update
            switch update.relationship {
            case .skipped: return RealtimeCall(predicted: nil, cancelled: true)
            case .noData: return nil
            case .scheduled:
                if let time = update.departure?.time ?? update.arrival?.time {
                    answer = RealtimeCall(predicted: time, cancelled: false)
                } else {
                    answer = shifted(update.departure?.delay ?? update.arrival?.delay)
                }
            }
        } else if let earlier = before.last(where: { $0.update.relationship != .skipped }) {
            let update = earlier.update
            guard update.relationship == .scheduled else { return nil }
            var delay = update.departure?.delay ?? update.arrival?.delay
            if let time = update.departure?.time ?? update.arrival?.time,
                let there = calls.first(where: { $0.stopSequence == earlier.sequence })
            {
                delay = Int(time.timeIntervalSince(instant(day: day, seconds: there.seconds, timeZone: timeZone)))
            }
            answer = shifted(delay)
        } else {
            answer = shifted(trip.delay)
        }
        guard let answer, let predicted = answer.predicted,
            abs(predicted.timeIntervalSince(scheduled)) <= realtimeReach
        else { return nil }
        return answer
    }

    /// The service day of `tripId`'s run nearest `instant` (for an update that names no day), among the days given.
    func nearestRun(of tripId: String, calls: [Call], days: [LocalDate], to instant: Date) -> LocalDate? {
        guard let first = calls.first, let service = services[first.serviceId] else { return nil }
        return days.filter { service.runs(on: $0) }.min { a, b in
            abs(Self.instant(day: a, seconds: first.seconds, timeZone: timeZone).timeIntervalSince(instant))
                < abs(Self.instant(day: b, seconds: first.seconds, timeZone: timeZone).timeIntervalSince(instant))
        }
    }
}
