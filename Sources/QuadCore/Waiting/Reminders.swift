import Foundation

/// The kinds of reminder a person can turn off (`/notifications`): offers, and a loan due in two days, due today,
/// or overdue.
public enum ReminderKind: String, Codable, Sendable, CaseIterable {
    case offers, dueSoon, dueToday, overdue
}

/// Where a loan stands for its reminders, on the campus's days.
public enum LoanStanding: String, Codable, Sendable, Equatable {
    /// Due later than two days from now: nothing to remind yet.
    case onLoan
    /// Due within two days, but not today.
    case dueSoon
    /// Due today, and not yet past.
    case dueToday
    case overdue

    /// How long before the due day "due soon" starts.
    public static let soonDays = 2

    public init(dueAt: Date, now: Date, clock: CampusClock) {
        let today = clock.date(of: now)
        let dueDay = clock.date(of: dueAt)
        if now >= dueAt {
            self = .overdue
        } else if dueDay == today {
            self = .dueToday
        } else if dueDay <= today.adding(days: Self.soonDays) {
            self = .dueSoon
        } else {
            self = .onLoan
        }
    }

}

/// Something a person's calendar reminds them of at an instant: an offer ending, a loan falling due.
public struct CalendarReminder: Sendable, Equatable {
    /// Stays the same from one download to the next, so calendars update rather than duplicate.
    public var uid: String
    public var kind: ReminderKind
    public var summary: String
    public var description: String
    public var at: Date
    /// The alarm goes off this long before `at` (0: at it).
    public var alarmMinutesBefore: Int

    public init(
        uid: String, kind: ReminderKind, summary: String, description: String, at: Date, alarmMinutesBefore: Int = 0
    ) {
        self.uid = uid
        self.kind = kind
        self.summary = summary
        self.description = description
        self.at = at
        self.alarmMinutesBefore = alarmMinutesBefore
    }

    /// A loan's three reminders: two days before it is due, as the due day starts, and
    /// when it falls due. Those of the `off` kinds are left out.
    public static func loan(
        id: String, title: String, dueAt: Date, clock: CampusClock, off: Set<ReminderKind> = []
    ) -> [CalendarReminder] {
        let dueDay = clock.date(of: dueAt)
        let all = [
            CalendarReminder(
                uid: "loan-\(id)-soon", kind: .dueSoon, summary: "Due in two days: \(title)",
                description: "Return \(title) to the library within two days.",
                at: dueAt.addingTimeInterval(-Double(LoanStanding.soonDays) * 86_400)),
            CalendarReminder(
                uid: "loan-\(id)-today", kind: .dueToday, summary: "Due today: \(title)",
                description: "Return \(title) to the library today.",
                at: clock.instant(dueDay, LocalTime(hour: 0))),
            CalendarReminder(
                uid: "loan-\(id)-overdue", kind: .overdue, summary: "Overdue: \(title)",
                description: "\(title) is overdue: return it to the library.", at: dueAt),
        ]
        return all.filter { !off.contains($0.kind) }
    }

    /// An offer's reminder: when it ends, with an alarm as it is made (or 5 minutes before the end, for a short one).
    public static func offer(_ place: WaitingPlace, now: Date) -> CalendarReminder? {
        guard let until = place.offeredUntil, until > now else { return nil }
        let minutes = Int(until.timeIntervalSince(now) / 60)
        return CalendarReminder(
            uid: "offer-\(place.id)", kind: .offers, summary: "Yours to take until then: \(place.label)",
            description: "\(place.label) is held for you. Accept it in Quad before this time, or it passes on.",
            at: until, alarmMinutesBefore: minutes > 60 ? 60 : min(minutes, 5))
    }
}
