import Foundation

/// A transit operator's timetable as GTFS publishes it (https://gtfs.org/documentation/schedule/reference/), reduced
/// to what a campus shows: the stops, the days each service runs, and every trip's calls where people may board.
/// Read from the feed's tables (`GTFSSchedule.init(tables:)`), which the server unpacks from the ZIP.
public struct GTFSSchedule: Sendable, Equatable, Codable {
    public var agency: String
    /// The agency's time zone: every time in the feed is on its clock.
    public var timeZone: TimeZone
    public var stops: [Stop]
    public var services: [String: Service]
    /// Every call where people may board (not a trip's last stop, not a stop marked "no pickup"), in no order.
    public var calls: [Call]

    public struct Stop: Sendable, Equatable, Codable {
        public var id: String
        public var name: String

        public init(id: String, name: String) {
            self.id = id
            self.name = name
        }
    }

    /// When a service runs: on its weekdays between its first and last dates, plus the dates added, less those
    /// removed (`calendar.txt` and `calendar_dates.txt`; a service may have only the latter).
    public struct Service: Sendable, Equatable, Codable {
        /// 1 Monday … 7 Sunday.
        public var weekdays: Set<Int>
        public var start: LocalDate?
        public var end: LocalDate?
        public var added: Set<LocalDate>
        public var removed: Set<LocalDate>

        public init(
            weekdays: Set<Int>, start: LocalDate?, end: LocalDate?, added: Set<LocalDate> = [],
            removed: Set<LocalDate> = []
        ) {
            self.weekdays = weekdays
            self.start = start
            self.end = end
            self.added = added
            self.removed = removed
        }

        public func runs(on date: LocalDate) -> Bool {
            if removed.contains(date) { return false }
            if added.contains(date) { return true }
            guard let start, let end else { return false }
            return start <= date && date <= end && weekdays.contains(date.weekday)
        }
    }

    /// A trip calling at a stop: when it leaves, in seconds from its service day's "noon less 12 hours" (past 24:00
    /// for a trip that runs past midnight).
    public struct Call: Sendable, Equatable, Codable {
        public var tripId: String
        public var serviceId: String
        public var stopId: String
        public var stopSequence: Int
        public var seconds: Int
        /// The route as riders know it ("601"), and where the trip goes.
        public var route: String
        public var headsign: String

        public init(
            tripId: String, serviceId: String, stopId: String, stopSequence: Int, seconds: Int, route: String,
            headsign: String
        ) {
            self.tripId = tripId
            self.serviceId = serviceId
            self.stopId = stopId
            self.stopSequence = stopSequence
            self.seconds = seconds
            self.route = route
            self.headsign = headsign
        }
    }

    public init(agency: String, timeZone: TimeZone, stops: [Stop], services: [String: Service], calls: [Call]) {
        self.agency = agency
        self.timeZone = timeZone
        self.stops = stops
        self.services = services
        self.calls = calls
    }

    /// The stops where riders board, by name: the ones a student may choose as theirs.
    public var boardingStops: [Stop] {
        let boarding = Set(calls.map(\.stopId))
        return stops.filter { boarding.contains($0.id) }.sorted { ($0.name, $0.id) < ($1.name, $1.id) }
    }

    /// A departure's id, in the shape of every departure's (`{route}-{yyyyMMdd}-{HHmm}`, which a feed account's
    /// `PUT /api/departures/{id}` names): the trip and the stop, then the day and time it leaves on the agency's clock
    /// (`clayton-caulfield-0600-clayton-20260330-0600`).
    public static func departureId(trip: String, stop: String, leaves: Date, timeZone: TimeZone) -> String {
        let clock = CampusClock(timeZone: timeZone)
        let day = clock.date(of: leaves).description.replacingOccurrences(of: "-", with: "")
        let time = clock.time(of: leaves)
        return "\(slug(trip))-\(slug(stop))-\(day)-" + String(format: "%02d%02d", time.hour, time.minute)
    }

    /// An id as lowercase letters and digits between dashes ("Trip 7/B" → "trip-7-b"), at most 40 characters.
    static func slug(_ id: String) -> String {
        var words: [String] = []
        var word = ""
        for character in id.lowercased().unicodeScalars {
            if ("a"..."z").contains(character) || ("0"..."9").contains(character) {
                word.unicodeScalars.append(character)
            } else if !word.isEmpty {
                words.append(word)
                word = ""
            }
        }
        if !word.isEmpty { words.append(word) }
        let joined = String(words.joined(separator: "-").prefix(40))
        let trimmed = joined.hasSuffix("-") ? String(joined.dropLast()) : joined
        return trimmed.isEmpty ? "x" : trimmed
    }

    /// The instant a call leaves: the spec measures from noon less 12 hours on its service day, which is midnight
    /// except on the days the clocks change, so that a time stays right across the change.
    public static func instant(day: LocalDate, seconds: Int, timeZone: TimeZone) -> Date {
        let noon = CampusClock(timeZone: timeZone).instant(day, LocalTime(hour: 12))
        return noon.addingTimeInterval(Double(seconds - 12 * 3600))
    }

    /// "25:10:00" → 90600; nil for anything else. Hours may have one digit and go past 24.
    public static func seconds(_ text: String) -> Int? {
        let parts = text.trimmingCharacters(in: .whitespaces).split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3, let hours = Int(parts[0]), let minutes = Int(parts[1]), let seconds = Int(parts[2]),
            parts[1].count == 2, parts[2].count == 2, (0..<48).contains(hours), (0..<60).contains(minutes),
            (0..<60).contains(seconds)
        else { return nil }
        return hours * 3600 + minutes * 60 + seconds
    }

    /// Every departure from the feed's stops within `window` after `now` (and the last `since` before it, for buses
    /// running late), by service day: yesterday's trips past midnight, today's, tomorrow's; with what `realtime` says
    /// of each run (a prediction or a cancellation, believed until `realtime.liveFor` after it was made).
    public func departures(
        at now: Date, since: TimeInterval = 600, window: TimeInterval = 24 * 3600, realtime: TripUpdates? = nil
    ) -> [Departure] {
        let today = CampusClock(timeZone: timeZone).date(of: now)
        let days = [today.adding(days: -1), today, today.adding(days: 1)]
        let names = Dictionary(stops.map { ($0.id, $0.name) }, uniquingKeysWith: { first, _ in first })
        let earliest = now.addingTimeInterval(-since)
        let latest = now.addingTimeInterval(window)
        let runs = realtime.map { runsSpokenOf(by: $0, days: days) } ?? [:]
        var departures: [Departure] = []
        for day in days {
            let running = Set(services.filter { $0.value.runs(on: day) }.keys)
            guard !running.isEmpty else { continue }
            for call in calls where running.contains(call.serviceId) {
                let leaves = Self.instant(day: day, seconds: call.seconds, timeZone: timeZone)
                guard leaves >= earliest, leaves <= latest else { continue }
                var departure = Departure(
                    id: Self.departureId(trip: call.tripId, stop: call.stopId, leaves: leaves, timeZone: timeZone),
                    routeId: call.route, from: names[call.stopId] ?? call.stopId, to: call.headsign,
                    scheduled: leaves, stopId: call.stopId)
                if let realtime, let run = runs[RunKey(trip: call.tripId, day: day)],
                    let word = Self.realtime(
                        run.update, call: call, scheduled: leaves, day: day, calls: run.calls, timeZone: timeZone)
                {
                    departure.predicted = word.predicted
                    departure.cancelled = word.cancelled
                    departure.predictedAt = realtime.madeAt
                    departure.liveFor = realtime.liveFor
                }
                departures.append(departure)
            }
        }
        return departures.sorted { ($0.scheduled, $0.id) < ($1.scheduled, $1.id) }
    }

    private struct RunKey: Hashable {
        var trip: String
        var day: LocalDate
    }

    /// The runs the feed speaks of, by trip and service day, each with the trip's calls in sequence.
    private func runsSpokenOf(
        by realtime: TripUpdates, days: [LocalDate]
    ) -> [RunKey: (update: TripUpdates.Trip, calls: [Call])] {
        let named = Set(realtime.trips.map(\.tripId))
        let callsOfTrip = Dictionary(grouping: calls.filter { named.contains($0.tripId) }, by: \.tripId)
            .mapValues { $0.sorted { $0.stopSequence < $1.stopSequence } }
        var runs: [RunKey: (update: TripUpdates.Trip, calls: [Call])] = [:]
        for trip in realtime.trips {
            guard let calls = callsOfTrip[trip.tripId],
                let day = trip.startDate ?? nearestRun(of: trip.tripId, calls: calls, days: days, to: realtime.madeAt)
            else { continue }
            runs[RunKey(trip: trip.tripId, day: day)] = (trip, calls)
        }
        return runs
    }
}

/// What `PUT /api/gtfs` says of the feed it loaded.
public struct GTFSSummary: Codable, Sendable, Equatable {
    public var agency: String
    public var stops: Int
    public var services: Int
    public var calls: Int

    public init(_ schedule: GTFSSchedule) {
        self.agency = schedule.agency
        self.stops = schedule.stops.count
        self.services = schedule.services.count
        self.calls = schedule.calls.count
    }
}
