import Foundation

extension ICalendar {
    /// An iCalendar object sent by mail (iMIP, RFC 6047) with its iTIP method (RFC 5546).
    public struct Invitation: Sendable, Equatable {
        /// `REQUEST` (add it, or update it) or `CANCEL` (remove it).
        public let method: String
        public let ics: String
    }

    /// Who a booking's invitation is from (Quad's own address) and for (the person who booked).
    public struct Invitee: Sendable {
        public let name: String
        public let address: String

        public init(name: String, address: String) {
            self.name = name
            self.address = address
        }
    }

    /// A booking (once, or a series with its RRULE and EXDATEs) as an invitation that puts it in the person's calendar
    /// (`cancel`: that takes it out), for any calendar that reads mail (Outlook, Google, Apple). The UID is the one
    /// the person's calendar feed gives it (`domain`), so a calendar that has both shows it once; `sequence` grows
    /// with each message about it, so the latest wins. The attendee is asked for no reply (`RSVP=FALSE`): nothing
    /// reads replies.
    public static func invitation(
        _ booking: CalendarBooking, cancel: Bool = false, sequence: Int, organizer: Invitee, attendee: Invitee,
        timeZone: TimeZone, stamp: Date, domain: String = "timetable.quad"
    ) -> Invitation {
        let method = cancel ? "CANCEL" : "REQUEST"
        let tzid = timeZone.identifier
        let clock = CampusClock(timeZone: timeZone)
        var lines = [
            "BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//Quad//Rooms//EN", "CALSCALE:GREGORIAN", "METHOD:\(method)",
        ]
        lines += Self.timeZone(timeZone, around: booking.first)
        var event = Self.event(booking, tzid: tzid, clock: clock, stamp: utc(stamp), domain: domain)
        // After DTSTAMP: which revision this is, who sends it, who it is for, and whether it stands.
        let at = (event.firstIndex { $0.hasPrefix("DTSTAMP:") } ?? 2) + 1
        event.insert(
            contentsOf: [
                "SEQUENCE:\(sequence)",
                "ORGANIZER;CN=\(parameter(organizer.name)):mailto:\(organizer.address)",
                "ATTENDEE;CN=\(parameter(attendee.name));ROLE=REQ-PARTICIPANT;PARTSTAT=ACCEPTED;RSVP=FALSE:mailto:"
                    + attendee.address,
                "STATUS:\(cancel ? "CANCELLED" : "CONFIRMED")",
            ], at: at)
        lines += event
        lines.append("END:VCALENDAR")
        return Invitation(method: method, ics: lines.map(fold).joined(separator: "\r\n") + "\r\n")
    }

    /// A parameter's value (RFC 5545 §3.2), always quoted: it cannot hold a double quote or a control character, so
    /// they are left out.
    static func parameter(_ text: String) -> String {
        "\"" + String(text.unicodeScalars.filter { $0 != "\"" && $0.properties.generalCategory != .control }) + "\""
    }
}
