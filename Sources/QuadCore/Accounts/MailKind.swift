/// What a message Quad mails is about: the outbox's `kind`, the person's record of what was sent, and (for what a
/// person may turn off) their choice.
public enum MailKind: String, Codable, Sendable, CaseIterable {
    /// The link that confirms an address the person gave.
    case confirmAddress
    /// A place held for them, first in a waiting line.
    case offer
    /// A booking made (with its calendar invitation).
    case booked
    /// A booking cancelled: a date, a series' rest, or all of it.
    case cancelled
    /// A booking released because nobody checked in.
    case released
}
