import Foundation

/// Writes a student's timetable as an iCalendar subscription (RFC 5545): one VTIMEZONE for the campus,
/// one weekly VEVENT per class with EXDATEs for break weeks, days off inside a teaching week (any day in a
/// break) and weeks it does not run, and UIDs that stay
/// the same from one download to the next so calendars update rather than duplicate.
public enum ICalendar {
    public static func write(
        settings: CampusSettings, classes: [TimetableClass], bookings: [CalendarBooking] = [],
        reminders: [CalendarReminder] = [], calendarName: String, stamp: Date, domain: String = "quad"
    ) -> String {
        let tzid = settings.timeZone.identifier
        var lines = [
            "BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//Quad//Timetable//EN", "CALSCALE:GREGORIAN",
            "METHOD:PUBLISH", "X-WR-CALNAME:\(escape(calendarName))", "X-WR-TIMEZONE:\(tzid)",
        ]
        let mondays = settings.teachingMondays
        lines += timeZone(settings.timeZone, around: mondays.first ?? settings.semesterStart)
        let dtstamp = utc(stamp)
        for item in classes.sorted(by: { ($0.course, $0.name, $0.id) < ($1.course, $1.name, $1.id) }) {
            // No meeting outside the teaching weeks there are, nor on a day inside a break.
            let meetingDays = item.weeks.filter { $0 >= 1 && $0 <= mondays.count }
                .map { mondays[$0 - 1].adding(days: item.weekday - 1) }
                .filter { settings.breakOn($0) == nil }
            guard (1...7).contains(item.weekday), let first = meetingDays.first, let last = meetingDays.last else {
                continue
            }
            let running = Set(meetingDays)
            var excluded: [LocalDate] = []
            var day = first
            while day <= last {
                if !running.contains(day) { excluded.append(day) }
                day = day.adding(days: 7)
            }
            let until = settings.clock.instant(last, item.end)
            lines += [
                "BEGIN:VEVENT",
                "UID:\(item.id)@\(domain)",
                "DTSTAMP:\(dtstamp)",
                "DTSTART;TZID=\(tzid):\(local(first, item.start))",
                "DTEND;TZID=\(tzid):\(local(first, item.end))",
                "RRULE:FREQ=WEEKLY;UNTIL=\(utc(until))",
            ]
            if !excluded.isEmpty {
                lines.append("EXDATE;TZID=\(tzid):" + excluded.map { local($0, item.start) }.joined(separator: ","))
            }
            lines += [
                "SUMMARY:\(escape("\(item.course) \(item.name)"))",
                "LOCATION:\(escape("\(item.room), \(item.campus)"))",
                "DESCRIPTION:\(escape("\(item.courseTitle) — \(item.lecturer)"))",
                "END:VEVENT",
            ]
        }
        for booking in bookings.sorted(by: {
            ($0.first, $0.start.minutes, $0.uid) < ($1.first, $1.start.minutes, $1.uid)
        }) {
            lines += event(booking, tzid: tzid, clock: settings.clock, stamp: dtstamp, domain: domain)
        }
        for reminder in reminders.sorted(by: { ($0.at, $0.uid) < ($1.at, $1.uid) }) {
            lines += event(reminder, stamp: dtstamp, domain: domain)
        }
        lines.append("END:VCALENDAR")
        return lines.map(fold).joined(separator: "\r\n") + "\r\n"
    }

    /// Everyone's room bookings as one calendar, for an admin (`quad export bookings`): each event says whose it is
    /// (`Duo · Lea`), as it is booked in `zone`.
    public static func bookings(
        _ entries: [(person: String, booking: CalendarBooking)], zone: TimeZone, calendarName: String, stamp: Date,
        domain: String = "quad"
    ) -> String {
        let clock = CampusClock(timeZone: zone)
        var lines = [
            "BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//Quad//Bookings//EN", "CALSCALE:GREGORIAN", "METHOD:PUBLISH",
            "X-WR-CALNAME:\(escape(calendarName))", "X-WR-TIMEZONE:\(zone.identifier)",
        ]
        let sorted = entries.sorted {
            ($0.booking.first, $0.booking.start.minutes, $0.booking.uid)
                < ($1.booking.first, $1.booking.start.minutes, $1.booking.uid)
        }
        lines += timeZone(zone, around: sorted.first?.booking.first ?? clock.date(of: stamp))
        for (person, booking) in sorted {
            var named = booking
            named.summary = "\(booking.summary) · \(person)"
            lines += event(named, tzid: zone.identifier, clock: clock, stamp: utc(stamp), domain: domain)
        }
        lines.append("END:VCALENDAR")
        return lines.map(fold).joined(separator: "\r\n") + "\r\n"
    }

    /// A room booking: once, or its series as RRULE and EXDATE; with a reminder before each start (VALARM).
    static func event(
        _ booking: CalendarBooking, tzid: String, clock: CampusClock, stamp: String, domain: String
    ) -> [String] {
        var lines = [
            "BEGIN:VEVENT",
            "UID:\(booking.uid)@\(domain)",
            "DTSTAMP:\(stamp)",
            "DTSTART;TZID=\(tzid):\(local(booking.first, booking.start))",
            "DURATION:PT\(booking.minutes)M",
        ]
        if let rule = booking.recurrence {
            lines.append(rule.rule(clock: clock))
            if !booking.excluded.isEmpty {
                lines.append(
                    "EXDATE;TZID=\(tzid):" + booking.excluded.map { local($0, booking.start) }.joined(separator: ","))
            }
        }
        lines += [
            "SUMMARY:\(escape(booking.summary))",
            "LOCATION:\(escape(booking.location))",
            "BEGIN:VALARM",
            "ACTION:DISPLAY",
            "DESCRIPTION:\(escape(booking.summary))",
            "TRIGGER:-PT\(CalendarBooking.reminderMinutes)M",
            "END:VALARM",
            "END:VEVENT",
        ]
        return lines
    }

    /// A reminder (an offer ending, a loan falling due): a short event at its instant, with an alarm.
    static func event(_ reminder: CalendarReminder, stamp: String, domain: String) -> [String] {
        [
            "BEGIN:VEVENT",
            "UID:\(reminder.uid)@\(domain)",
            "DTSTAMP:\(stamp)",
            "DTSTART:\(utc(reminder.at))",
            "DURATION:PT15M",
            "SUMMARY:\(escape(reminder.summary))",
            "DESCRIPTION:\(escape(reminder.description))",
            "CATEGORIES:\(reminder.kind.rawValue)",
            "BEGIN:VALARM",
            "ACTION:DISPLAY",
            "DESCRIPTION:\(escape(reminder.summary))",
            reminder.alarmMinutesBefore > 0 ? "TRIGGER:-PT\(reminder.alarmMinutesBefore)M" : "TRIGGER:PT0S",
            "END:VALARM",
            "END:VEVENT",
        ]
    }

    /// TEXT escaping (RFC 5545 §3.3.11), scalar by scalar: Swift counts `"\r\n"` as one `Character`, so a
    /// per-character switch would let a CR LF through and start a new property line. A line break in any form
    /// becomes `\n`; other control characters, which TEXT cannot hold, are left out.
    static func escape(_ text: String) -> String {
        var out = String.UnicodeScalarView()
        var afterCR = false
        for scalar in text.unicodeScalars {
            defer { afterCR = scalar == "\r" }
            switch scalar {
            case "\\": out.append(contentsOf: "\\\\".unicodeScalars)
            case ";": out.append(contentsOf: "\\;".unicodeScalars)
            case ",": out.append(contentsOf: "\\,".unicodeScalars)
            case "\n" where afterCR: continue
            case "\r", "\n", "\u{85}", "\u{2028}", "\u{2029}": out.append(contentsOf: "\\n".unicodeScalars)
            case "\t": out.append(scalar)
            default:
                if scalar.properties.generalCategory == .control { continue }
                out.append(scalar)
            }
        }
        return String(out)
    }

    /// Lines longer than 75 octets continue on the next line after a space, cut between Unicode scalars (never
    /// inside a UTF-8 sequence, RFC 5545 §3.1).
    static func fold(_ line: String) -> String {
        guard line.utf8.count > 75 else { return line }
        var parts: [String] = []
        var current = String.UnicodeScalarView()
        var size = 0
        for scalar in line.unicodeScalars {
            let length = UTF8.width(scalar)
            let limit = parts.isEmpty ? 75 : 74
            if size + length > limit {
                parts.append(String(current))
                current = String.UnicodeScalarView()
                size = 0
            }
            current.append(scalar)
            size += length
        }
        parts.append(String(current))
        return parts.joined(separator: "\r\n ")
    }

    static func local(_ date: LocalDate, _ time: LocalTime) -> String {
        "\(date.compact)T\(String(time.hour).leftPadded(2))\(String(time.minute).leftPadded(2))00"
    }

    static func utc(_ instant: Date) -> String {
        let clock = CampusClock(timeZone: TimeZone(identifier: "UTC")!)
        let time = clock.time(of: instant)
        let seconds = Int(instant.timeIntervalSince1970.rounded(.down)) % 60
        return
            "\(clock.date(of: instant).compact)T\(String(time.hour).leftPadded(2))\(String(time.minute).leftPadded(2))\(String(seconds).leftPadded(2))Z"
    }

    /// VTIMEZONE with every offset change from a year before `date` to two years after (explicit
    /// transitions, no rules to get wrong); a zone without changes gets one STANDARD block.
    static func timeZone(_ zone: TimeZone, around date: LocalDate) -> [String] {
        // The same for every booking of a year: worked out once (ICU's names for a zone cost a booking's mail a
        // tenth of its time).
        let key = "\(zone.identifier) \(date.year)"
        if let known = zoneBlocks.withLock({ $0[key] }) { return known }
        let lines = timeZoneBlock(zone, around: date)
        zoneBlocks.withLock { $0[key] = lines }
        return lines
    }

    /// The `VTIMEZONE` blocks worked out so far, by zone and year.
    private static let zoneBlocks = LockedValue<[String: [String]]>([:])

    static func timeZoneBlock(_ zone: TimeZone, around date: LocalDate) -> [String] {
        var lines = ["BEGIN:VTIMEZONE", "TZID:\(zone.identifier)"]
        let utcClock = CampusClock(timeZone: TimeZone(identifier: "UTC")!)
        let from = utcClock.instant(LocalDate(year: date.year - 1, month: 1, day: 1), LocalTime(hour: 0))
        let to = utcClock.instant(LocalDate(year: date.year + 2, month: 12, day: 31), LocalTime(hour: 0))
        var transitions: [Date] = []
        var cursor = from
        while let next = zone.nextDaylightSavingTimeTransition(after: cursor), next < to, transitions.count < 16 {
            transitions.append(next)
            cursor = next
        }
        if transitions.isEmpty {
            let offset = zone.secondsFromGMT(for: from)
            lines += [
                "BEGIN:STANDARD", "DTSTART:19700101T000000", "TZOFFSETFROM:\(offsetText(offset))",
                "TZOFFSETTO:\(offsetText(offset))", "TZNAME:\(zone.abbreviation(for: from) ?? zone.identifier)",
                "END:STANDARD",
            ]
        }
        for transition in transitions {
            let before = zone.secondsFromGMT(for: transition.addingTimeInterval(-1))
            let after = zone.secondsFromGMT(for: transition)
            let kind = zone.isDaylightSavingTime(for: transition) ? "DAYLIGHT" : "STANDARD"
            // DTSTART is the local time just before the change, on the old offset.
            let wall = transition.addingTimeInterval(TimeInterval(before))
            let date = utcClock.date(of: wall)
            let time = utcClock.time(of: wall)
            lines += [
                "BEGIN:\(kind)", "DTSTART:\(local(date, time))", "TZOFFSETFROM:\(offsetText(before))",
                "TZOFFSETTO:\(offsetText(after))", "TZNAME:\(zone.abbreviation(for: transition) ?? kind)",
                "END:\(kind)",
            ]
        }
        lines.append("END:VTIMEZONE")
        return lines
    }

    static func offsetText(_ seconds: Int) -> String {
        let sign = seconds < 0 ? "-" : "+"
        let minutes = abs(seconds) / 60
        return sign + String(minutes / 60).leftPadded(2) + String(minutes % 60).leftPadded(2)
    }
}
