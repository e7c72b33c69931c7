import Foundation

/// How full a car park looks from a distance.
public enum CarParkState: String, Codable, Sendable, CaseIterable {
    case plenty
    case filling
    case almostFull
    case full

    /// Full at 0 free; almost full at 10 % or less; filling at 40 % or less; else plenty.
    public init(free: Int, capacity: Int) {
        guard capacity > 0, free > 0 else {
            self = .full
            return
        }
        let share = Double(free) / Double(capacity)
        self = share <= 0.10 ? .almostFull : share <= 0.40 ? .filling : .plenty
    }
}

/// The rules that say whether a live feed can still be believed.
public enum Freshness {
    /// A car-park reading older than this is "not live".
    public static let readingLimit: TimeInterval = 10 * 60
    /// A bus prediction older than this is dropped for the scheduled time.
    public static let predictionLimit: TimeInterval = 90

    /// The limits are inclusive: a reading exactly 10 minutes old is still live, and stops being so this much later.
    static let step: TimeInterval = 0.001

    public static func isLive(readingAt: Date?, now: Date) -> Bool {
        guard let readingAt else { return false }
        return now.timeIntervalSince(readingAt) <= readingLimit
    }
}

/// A car park as stored: capacity, the last reading and when it was taken.
public struct CarPark: Hashable, Sendable {
    public var id: String
    public var name: String
    public var capacity: Int
    public var free: Int
    public var updatedAt: Date?

    public init(id: String, name: String, capacity: Int, free: Int, updatedAt: Date?) {
        self.id = id
        self.name = name
        self.capacity = capacity
        self.free = free
        self.updatedAt = updatedAt
    }

    public var state: CarParkState { CarParkState(free: free, capacity: capacity) }
    public func isLive(now: Date) -> Bool { Freshness.isLive(readingAt: updatedAt, now: now) }

    /// When `isLive` turns false after `now` (the reading grows too old), if it is live now.
    public func liveEnds(after now: Date) -> Date? {
        guard let updatedAt, isLive(now: now) else { return nil }
        return updatedAt.addingTimeInterval(Freshness.readingLimit + Freshness.step)
    }

    /// A feed's reading: 0 … capacity.
    public static func validateFree(_ free: Int?, capacity: Int) throws(ValidationFailure) -> Int {
        guard let free else { throw ValidationFailure(field: "free", message: "Send the number of free places.") }
        guard (0...capacity).contains(free) else {
            throw ValidationFailure(field: "free", message: "Free places are between 0 and \(capacity).")
        }
        return free
    }
}

/// A scheduled shuttle departure, with the latest prediction if a feed sent one.
public struct Departure: Hashable, Sendable {
    public var id: String
    public var routeId: String
    public var from: String
    public var to: String
    public var scheduled: Date
    public var predicted: Date?
    public var predictedAt: Date?
    /// The stop it leaves from, for a departure of an operator's feed (GTFS); nil for a route an admin typed in.
    public var stopId: String?
    /// The operator's realtime feed says this run will not call here (believed while its prediction is live).
    public var cancelled = false
    /// How long after `predictedAt` the prediction is believed: a feed account's 90 s, or the realtime feed's limit.
    public var liveFor = Freshness.predictionLimit

    public init(
        id: String, routeId: String, from: String, to: String, scheduled: Date, predicted: Date? = nil,
        predictedAt: Date? = nil, stopId: String? = nil
    ) {
        self.id = id
        self.routeId = routeId
        self.from = from
        self.to = to
        self.scheduled = scheduled
        self.predicted = predicted
        self.predictedAt = predictedAt
        self.stopId = stopId
    }

    /// The time to show: a prediction made at most `liveFor` ago (live), else the scheduled time (not live). A run
    /// cancelled, while that is live, keeps its scheduled time.
    public func expected(now: Date) -> (time: Date, live: Bool) {
        guard let predictedAt, now.timeIntervalSince(predictedAt) <= liveFor else { return (scheduled, false) }
        if cancelled { return (scheduled, true) }
        guard let predicted else { return (scheduled, false) }
        return (predicted, true)
    }

    /// Cancelled, as a live feed says it now.
    public func isCancelled(now: Date) -> Bool { cancelled && expected(now: now).live }

    /// The first instant after `now` when what `expected(now:)` says of it, or whether `upcoming` lists it,
    /// changes: it leaves, or its prediction grows too old.
    public func nextChange(after now: Date) -> Date? {
        let expected = expected(now: now)
        var next = expected.time > now ? expected.time : nil
        if expected.live, let predictedAt {
            let stale = predictedAt.addingTimeInterval(liveFor + Freshness.step)
            next = min(next ?? stale, stale)
        }
        return next
    }

    /// Predictions within a day of the schedule make sense; anything else is a feed error.
    public static func validatePrediction(_ predicted: Date?, scheduled: Date) throws(ValidationFailure) -> Date {
        guard let predicted else {
            throw ValidationFailure(field: "predicted", message: "Send the predicted time (ISO 8601).")
        }
        guard abs(predicted.timeIntervalSince(scheduled)) <= 6 * 3600 else {
            throw ValidationFailure(
                field: "predicted", message: "A prediction is within 6 hours of the scheduled departure.")
        }
        return predicted
    }

    /// The next departures still to leave (by expected time), at most `limit`: those from the stops a student chose
    /// (`first`, stop ids of the operator's feed) before the others.
    public static func upcoming(
        _ departures: [Departure], now: Date, limit: Int, first: Set<String> = []
    ) -> [Departure] {
        let coming = departures.map { (departure: $0, time: $0.expected(now: now).time) }.filter { $0.time > now }
            .sorted { $0.time < $1.time }.map(\.departure)
        guard !first.isEmpty else { return Array(coming.prefix(limit)) }
        let chosen = coming.filter { $0.stopId.map(first.contains) ?? false }
        let others = coming.filter { !($0.stopId.map(first.contains) ?? false) }
        return Array((chosen + others).prefix(limit))
    }
}
