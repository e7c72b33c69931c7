import Foundation

/// The original Library API's dates: sent exactly as `yyyy-MM-dd HH:mm:ss` in UTC (what its server
/// really sent, whatever its documentation said), accepted leniently: with or without a zone suffix
/// (`… UTC`, `… GMT`, `… +0100`, `…Z`, `… CET`), with unpadded fields (`2014-10-1 19:16:11`), with a `T`
/// between date and time, with or without seconds and fractions of a second.
public enum LibraryDate {
    private static let utc = TimeZone(identifier: "UTC")!
    private static let calendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = utc
        return calendar
    }()

    /// `2014-10-01 19:16:11`, in UTC.
    public static func format(_ date: Date) -> String {
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        func pad(_ value: Int?, _ width: Int) -> String {
            let text = String(value ?? 0)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(parts.year, 4))-\(pad(parts.month, 2))-\(pad(parts.day, 2)) "
            + "\(pad(parts.hour, 2)):\(pad(parts.minute, 2)):\(pad(parts.second, 2))"
    }

    /// A day as the web page shows it, in `language` and in `zone` (the campus's, not UTC): "3 May" /
    /// "3 mai" ("1er mai" on the first), with the year when it is not the year of `now` there.
    public static func day(_ date: Date, language: Language, zone: TimeZone, now: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let parts = calendar.dateComponents([.year, .month, .day], from: date)
        let day = parts.day ?? 1
        let month = monthNames[language]?[(parts.month ?? 1) - 1] ?? String(parts.month ?? 1)
        let year = parts.year ?? 0
        let text =
            switch language {
            case .french: "\(day == 1 ? "1er" : String(day)) \(month)"
            case .english: "\(day) \(month)"
            }
        return year == calendar.component(.year, from: now) ? text : "\(text) \(year)"
    }

    private static let monthNames: [Language: [String]] = Dictionary(
        uniqueKeysWithValues: Language.allCases.map { language in
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: language.rawValue)
            return (language, formatter.monthSymbols)
        })

    /// The date `text` names, or nil when it is not a date in any form the original clients sent.
    /// Without a zone, the time is UTC.
    public static func parse(_ text: String) -> Date? {
        var scanner = Scan(Array(text.trimmingCharacters(in: .whitespaces).unicodeScalars))
        guard let year = scanner.number(maxDigits: 4), scanner.take("-"),
            let month = scanner.number(maxDigits: 2), scanner.take("-"),
            let day = scanner.number(maxDigits: 2)
        else { return nil }
        var hour = 0
        var minute = 0
        var second = 0
        if scanner.take(" ") || scanner.take("T") || scanner.take("t") {
            while scanner.take(" ") {}
            guard let h = scanner.number(maxDigits: 2), scanner.take(":"), let m = scanner.number(maxDigits: 2)
            else { return nil }
            hour = h
            minute = m
            if scanner.take(":") {
                guard let s = scanner.number(maxDigits: 2) else { return nil }
                second = s
                if scanner.take(".") || scanner.take(",") {
                    guard scanner.number(maxDigits: 9) != nil else { return nil }
                    while scanner.number(maxDigits: 9) != nil {}
                }
            }
        }
        let suffix = String(String.UnicodeScalarView(scanner.rest)).trimmingCharacters(in: .whitespaces)
        guard let zone = zone(suffix) else { return nil }
        let components = DateComponents(
            calendar: calendar, timeZone: zone, year: year, month: month, day: day, hour: hour, minute: minute,
            second: second)
        guard (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 60,
            components.isValidDate
        else { return nil }
        return calendar.date(from: components)
    }

    /// The zone a suffix names; UTC when there is none.
    static func zone(_ zone: String) -> TimeZone? {
        if zone.isEmpty { return utc }
        let upper = zone.uppercased()
        if ["Z", "UTC", "GMT", "UT"].contains(upper) { return utc }
        var numeric = Substring(upper)
        for prefix in ["UTC", "GMT"] where numeric.hasPrefix(prefix) { numeric = numeric.dropFirst(prefix.count) }
        if let sign = numeric.first, sign == "+" || sign == "-" {
            let digits = numeric.dropFirst().filter { $0 != ":" }
            guard digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber), (1...4).contains(digits.count)
            else { return nil }
            let hours: Int
            let minutes: Int
            if digits.count <= 2 {
                hours = Int(digits) ?? 99
                minutes = 0
            } else {
                let padded = digits.count == 3 ? "0" + digits : String(digits)
                hours = Int(padded.prefix(2)) ?? 99
                minutes = Int(padded.suffix(2)) ?? 99
            }
            guard hours <= 14, minutes < 60 else { return nil }
            return TimeZone(secondsFromGMT: (sign == "-" ? -1 : 1) * (hours * 3600 + minutes * 60))
        }
        guard upper.allSatisfy({ $0.isLetter }) else { return nil }
        return TimeZone(abbreviation: upper)
    }

    private struct Scan {
        let scalars: [Unicode.Scalar]
        var index = 0

        init(_ scalars: [Unicode.Scalar]) { self.scalars = scalars }

        var rest: ArraySlice<Unicode.Scalar> { scalars[index...] }

        mutating func take(_ character: Unicode.Scalar) -> Bool {
            guard index < scalars.count, scalars[index] == character else { return false }
            index += 1
            return true
        }

        mutating func number(maxDigits: Int) -> Int? {
            var value = 0
            var count = 0
            while index < scalars.count, count < maxDigits, ("0"..."9").contains(scalars[index]) {
                value = value * 10 + Int(scalars[index].value - 48)
                index += 1
                count += 1
            }
            return count == 0 ? nil : value
        }
    }
}
