/// What a message Quad mails is about: the outbox's `kind`, the person's record of what was sent, and the choice that
/// turns it off (`choice`).
public enum MailKind: String, Codable, Sendable, CaseIterable {
    /// The link that confirms an address the person gave.
    case confirmAddress
    /// The link that sets a new password, asked for on the sign-in page.
    case passwordReset
    /// A place held for them, first in a waiting line.
    case offer
    /// A booking made (with its calendar invitation).
    case booked
    /// A booking changed by someone else: its room renamed (the invitation's next revision).
    case changed
    /// A booking cancelled: a date, a series' rest, or all of it.
    case cancelled
    /// A booking released because nobody checked in.
    case released
    /// A loan due back in two days, due today, or overdue: each sent once per loan.
    case dueSoon, dueToday, overdue
    /// A product they watch went on special.
    case onSpecial

    /// The choice that turns it off; nil for what the person asked for themselves (a link to confirm an address, to
    /// set a new password).
    public var choice: MailChoice? {
        switch self {
        case .confirmAddress, .passwordReset: nil
        case .offer: .offers
        case .booked, .changed, .cancelled, .released: .bookings
        case .dueSoon: .dueSoon
        case .dueToday: .dueToday
        case .overdue: .overdue
        case .onSpecial: .specials
        }
    }
}

extension MailKind {
    /// The reminder a loan standing this way is mailed: nil while it is not yet due soon.
    public init?(reminding standing: LoanStanding) {
        switch standing {
        case .onLoan: return nil
        case .dueSoon: self = .dueSoon
        case .dueToday: self = .dueToday
        case .overdue: self = .overdue
        }
    }
}

/// What a person may have Quad not mail them about, each on its own (the account page's boxes, the one-click
/// unsubscribe in every message of that kind). All on until turned off.
public enum MailChoice: String, Codable, Sendable, CaseIterable {
    /// Places held for them (a seat, a book).
    case offers
    /// Their bookings made, changed, cancelled, released.
    case bookings
    /// A loan due back in two days.
    case dueSoon
    /// A loan due back today.
    case dueToday
    /// A loan not back in time.
    case overdue
    /// A product they watch on special.
    case specials
}
