import Foundation

/// The dates Quad accepts from anyone: 2000-01-01 through 2099-12-31 (UTC for an instant). Every loop over
/// days or weeks is then bounded by data a person typed within a century, and the contract's date patterns
/// say the same (`20[0-9]{2}-…`).
public enum AcceptedDates {
    public static let years = 2000...2099
    public static let message = "A date from 2000 to 2099."

    public static func contains(_ date: LocalDate) -> Bool { years.contains(date.year) }

    public static func contains(_ instant: Date) -> Bool {
        let seconds = instant.timeIntervalSince1970
        return seconds >= first && seconds < afterLast
    }

    private static let first = Double(LocalDate(year: years.lowerBound, month: 1, day: 1).dayNumber) * 86_400
    private static let afterLast = Double(LocalDate(year: years.upperBound + 1, month: 1, day: 1).dayNumber) * 86_400
}
