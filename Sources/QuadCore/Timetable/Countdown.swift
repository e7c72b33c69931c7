import Foundation

/// How long until a bus leaves, as a person reads it beside its time: "13:05 · in 4 min", "in 1 h 20 min",
/// "06:00 · in 6 h". Minutes within the hour, hours and minutes within three hours, whole hours beyond: a number of
/// minutes in the hundreds reads like a time of day. The page ticks a second-by-second clock only in the last
/// `tickingWithin`, when the seconds matter.
public enum Countdown: Equatable, Sendable {
    /// Under a minute.
    case now
    case minutes(Int)
    case hoursAndMinutes(hours: Int, minutes: Int)
    case hours(Int)

    /// The last minutes, when a clock ticks the seconds beside the words.
    public static let tickingWithin: TimeInterval = 5 * 60
    /// Past this, whole hours say enough.
    static let minutesWithin = 3 * 60

    public init(from now: Date, to leaves: Date) {
        let minutes = Self.wholeMinutes(from: now, to: leaves)
        if minutes == 0 {
            self = .now
        } else if minutes < 60 {
            self = .minutes(minutes)
        } else if minutes < Self.minutesWithin, minutes % 60 != 0 {
            self = .hoursAndMinutes(hours: minutes / 60, minutes: minutes % 60)
        } else {
            self = .hours(minutes / 60)
        }
    }

    static func wholeMinutes(from now: Date, to leaves: Date) -> Int {
        max(0, Int((leaves.timeIntervalSince(now) / 60).rounded(.down)))
    }

    /// The first instant after `now` when the words change: a minute passes (an hour beyond three), or it leaves.
    public static func nextChange(from now: Date, to leaves: Date) -> Date? {
        guard leaves > now else { return nil }
        // Just after `now`: with a whole number of minutes left exactly, the words change at once.
        let minutes = wholeMinutes(from: now.addingTimeInterval(0.001), to: leaves)
        // The words hold while as many whole minutes (or hours) are left as now.
        let held = minutes < minutesWithin ? minutes * 60 : minutes / 60 * 3600
        return leaves.addingTimeInterval(-Double(held))
    }

    /// "in 4 min" / "dans 4 min".
    public func words(_ t: Localizer) -> String {
        switch self {
        case .now: t("timetable.in.now")
        case .minutes(let minutes): t("timetable.in.minutes", ["minutes": String(minutes)])
        case .hoursAndMinutes(let hours, let minutes):
            t("timetable.in.hoursAndMinutes", ["hours": String(hours), "minutes": String(minutes)])
        case .hours(let hours): t("timetable.in.hours", ["hours": String(hours)])
        }
    }
}
