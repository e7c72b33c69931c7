import Foundation

/// The rules for what admins type into the timetable: every field at fault is named.
public enum TimetableInput {
    public static let maxTextLength = 120

    /// `1-12`, `2,4,6-8` → the weeks, ascending; nil when unreadable or outside 1…52.
    public static func weeks(_ text: String) -> [Int]? {
        var weeks = Set<Int>()
        for part in text.split(separator: ",") {
            let range = part.trimmingCharacters(in: .whitespaces).split(separator: "-")
            guard let first = range.first.flatMap({ Int($0) }), range.count <= 2 else { return nil }
            let last = range.count == 2 ? Int(range[1]) : first
            guard let last, 1 <= first, first <= last, last <= 52 else { return nil }
            weeks.formUnion(first...last)
        }
        return weeks.isEmpty ? nil : weeks.sorted()
    }

    /// The shortest text for a set of weeks: `[1,2,3,5]` → `1-3,5`.
    public static func weeksText(_ weeks: [Int]) -> String {
        var parts: [String] = []
        var index = 0
        let sorted = Array(Set(weeks)).sorted()
        while index < sorted.count {
            var end = index
            while end + 1 < sorted.count, sorted[end + 1] == sorted[end] + 1 { end += 1 }
            parts.append(end == index ? "\(sorted[index])" : "\(sorted[index])-\(sorted[end])")
            index = end + 1
        }
        return parts.joined(separator: ",")
    }

    /// `07:30, 08:15` → times, ascending; nil when any is unreadable.
    public static func times(_ text: String) -> [LocalTime]? {
        var times: [LocalTime] = []
        for part in text.split(separator: ",") {
            guard let time = LocalTime(part.trimmingCharacters(in: .whitespaces)) else { return nil }
            times.append(time)
        }
        return times.isEmpty ? nil : Array(Set(times)).sorted()
    }

    static func text(_ raw: String?, field: String, _ errors: inout [FieldError]) -> String {
        HumanText.check(raw, field: field, what: "This", max: maxTextLength, &errors)
    }

    /// An id: lowercase letters, digits and dashes, 1 to 60.
    static func id(_ raw: String?, field: String, _ errors: inout [FieldError]) -> String {
        let id = (raw ?? "").trimmingCharacters(in: .whitespaces)
        let allowed = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyz0123456789-")
        if id.isEmpty || id.count > 60 || !id.unicodeScalars.allSatisfy(allowed.contains) {
            errors.append(.init(field: field, message: "Lowercase letters, digits and dashes, 1 to 60."))
        }
        return id
    }

    public static func slug(_ text: String) -> String {
        let allowed = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyz0123456789")
        var slug = ""
        for scalar in text.lowercased().unicodeScalars {
            if allowed.contains(scalar) {
                slug.unicodeScalars.append(scalar)
            } else if !slug.isEmpty, !slug.hasSuffix("-") {
                slug += "-"
            }
        }
        while slug.hasSuffix("-") { slug.removeLast() }
        return String(slug.prefix(60))
    }

    public static func campus(
        name: String?, timeZone: String?, semesterStart: String?, teachingWeeks: String?, breaks: String?
    ) throws(ValidationFailure) -> CampusSettings {
        var errors: [FieldError] = []
        let name = text(name, field: "name", &errors)
        let zone = TimeZone(identifier: (timeZone ?? "").trimmingCharacters(in: .whitespaces))
        if zone == nil { errors.append(.init(field: "timeZone", message: "A time zone such as Australia/Melbourne.")) }
        let start = LocalDate((semesterStart ?? "").trimmingCharacters(in: .whitespaces)).flatMap {
            AcceptedDates.contains($0) ? $0 : nil
        }
        if start == nil {
            errors.append(.init(field: "semesterStart", message: "A date as yyyy-mm-dd, from 2000 to 2099."))
        }
        let weeks = Int((teachingWeeks ?? "").trimmingCharacters(in: .whitespaces))
        if weeks == nil || !(1...52).contains(weeks!) {
            errors.append(.init(field: "teachingWeeks", message: "A number of weeks from 1 to 52."))
        }
        var parsed: [TeachingBreak] = []
        for line in (breaks ?? "").split(whereSeparator: \.isNewline)
        where !line.trimmingCharacters(in: .whitespaces).isEmpty {
            let parts = line.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 3, HumanText.fault(HumanText.tidy(parts[0]), max: maxTextLength) == nil,
                let from = LocalDate(parts[1]), let to = LocalDate(parts[2]),
                from <= to, AcceptedDates.contains(from), AcceptedDates.contains(to)
            else {
                errors.append(
                    .init(field: "breaks", message: "Each break reads: name; yyyy-mm-dd; yyyy-mm-dd (2000 to 2099)."))
                break
            }
            parsed.append(TeachingBreak(name: HumanText.tidy(parts[0]), start: from, end: to))
        }
        guard errors.isEmpty, let zone, let start, let weeks else { throw ValidationFailure(errors) }
        let settings = CampusSettings(
            name: name, timeZone: zone, semesterStart: start, teachingWeeks: weeks, breaks: parsed)
        // Breaks that swallow teaching weeks would leave the semester short (or empty).
        let left = settings.teachingMondays.count
        if left < weeks {
            throw ValidationFailure([
                .init(
                    field: "breaks",
                    message: "These breaks leave \(left) of the \(weeks) teaching weeks; shorten them or move them.")
            ])
        }
        return settings
    }

    public static func breaksText(_ breaks: [TeachingBreak]) -> String {
        breaks.map { "\($0.name); \($0.start); \($0.end)" }.joined(separator: "\n")
    }

    public static func timetableClass(
        id: String?, course: String?, courseTitle: String = "", name: String?, lecturer: String?, room: String?,
        campus: String?, weekday: String?, start: String?, end: String?, weeks: String?
    ) throws(ValidationFailure) -> TimetableClass {
        var errors: [FieldError] = []
        let course = text(course, field: "course", &errors).uppercased()
        let name = text(name, field: "name", &errors)
        let id =
            (id ?? "").isEmpty
            ? slug("\(course) \(name)") : TimetableInput.id(id, field: "id", &errors)
        let lecturer = text(lecturer, field: "lecturer", &errors)
        let room = text(room, field: "room", &errors)
        let campus = text(campus, field: "campus", &errors)
        let day = Int((weekday ?? "").trimmingCharacters(in: .whitespaces))
        if day == nil || !(1...7).contains(day!) {
            errors.append(.init(field: "weekday", message: "1 (Monday) to 7 (Sunday)."))
        }
        let from = LocalTime((start ?? "").trimmingCharacters(in: .whitespaces))
        if from == nil { errors.append(.init(field: "start", message: "A time as HH:mm.")) }
        let to = LocalTime((end ?? "").trimmingCharacters(in: .whitespaces))
        if to == nil {
            errors.append(.init(field: "end", message: "A time as HH:mm."))
        } else if let from, let to, to <= from {
            errors.append(.init(field: "end", message: "The end comes after the start."))
        }
        let runs = weeks.flatMap(Self.weeks)
        if runs == nil { errors.append(.init(field: "weeks", message: "Weeks such as 1-12 or 2,4,6.")) }
        guard errors.isEmpty, let day, let from, let to, let runs else { throw ValidationFailure(errors) }
        return TimetableClass(
            id: id, course: course, courseTitle: courseTitle, name: name, lecturer: lecturer, room: room,
            campus: campus, weekday: day, start: from, end: to, weeks: runs)
    }

    public static func course(code: String?, title: String?) throws(ValidationFailure) -> (code: String, title: String)
    {
        var errors: [FieldError] = []
        let code = text(code, field: "code", &errors).uppercased()
        let title = text(title, field: "title", &errors)
        guard errors.isEmpty else { throw ValidationFailure(errors) }
        return (code, title)
    }

    /// A student: their id (1 to 20 digits) and their name, as the calendar feed and the pages show it.
    public static func student(id: String?, name: String?) throws(ValidationFailure) -> (id: String, name: String) {
        var errors: [FieldError] = []
        let id = (id ?? "").trimmingCharacters(in: .whitespaces)
        if id.isEmpty || id.count > 20 || !id.unicodeScalars.allSatisfy({ ("0"..."9").contains($0) }) {
            errors.append(.init(field: "id", message: "A student id is 1 to 20 digits."))
        }
        let name = HumanText.check(name, field: "name", what: "A student's name", max: 100, &errors)
        guard errors.isEmpty else { throw ValidationFailure(errors) }
        return (id, name)
    }

    public static func carPark(
        id: String?, name: String?, capacity: String?
    ) throws(ValidationFailure) -> (
        id: String, name: String, capacity: Int
    ) {
        var errors: [FieldError] = []
        let name = text(name, field: "name", &errors)
        let id = (id ?? "").isEmpty ? slug(name) : TimetableInput.id(id, field: "id", &errors)
        let capacity = Int((capacity ?? "").trimmingCharacters(in: .whitespaces))
        if capacity == nil || !(1...100_000).contains(capacity!) {
            errors.append(.init(field: "capacity", message: "A number of places from 1 to 100000."))
        }
        guard errors.isEmpty, let capacity else { throw ValidationFailure(errors) }
        return (id, name, capacity)
    }

    public static func route(
        id: String?, from: String?, to: String?, times: String?
    ) throws(ValidationFailure) -> (
        id: String, from: String, to: String, times: [LocalTime]
    ) {
        var errors: [FieldError] = []
        let from = text(from, field: "from", &errors)
        let to = text(to, field: "to", &errors)
        let id = (id ?? "").isEmpty ? slug("\(from) \(to)") : TimetableInput.id(id, field: "id", &errors)
        let parsed = times.flatMap(Self.times)
        if parsed == nil { errors.append(.init(field: "times", message: "Times as HH:mm, separated by commas.")) }
        guard errors.isEmpty, let parsed else { throw ValidationFailure(errors) }
        return (id, from, to, parsed)
    }
}
