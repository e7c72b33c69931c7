import Foundation

extension Localizer {
    /// The locale dates are written in: Australian English (day before month), or French.
    public var locale: Locale { Locale(identifier: language == .french ? "fr_FR" : "en_AU") }

    /// "Friday 13 March 2020" / "vendredi 13 mars 2020".
    public func longDate(_ date: LocalDate) -> String {
        let utc = TimeZone(identifier: "UTC")!
        let noon = CampusClock(timeZone: utc).instant(date, LocalTime(hour: 12))
        var style = Date.FormatStyle(date: .complete, time: .omitted, locale: locale, timeZone: utc)
        style.calendar = Calendar(identifier: .gregorian)
        return noon.formatted(style)
    }

    /// An instant as a person reads it on the campus's clock: the time alone on `now`'s day ("14:30"), the day and
    /// the time another day ("Friday 13 March 2020, 14:30").
    public func instant(_ instant: Date, now: Date, clock: CampusClock) -> String {
        let time = clock.time(of: instant).description
        let day = clock.date(of: instant)
        return day == clock.date(of: now) ? time : self("time.dayAndTime", ["date": longDate(day), "time": time])
    }

    /// "Mon 23" / "lun. 23": a day in a row of days.
    public func shortDay(_ date: LocalDate) -> String {
        let utc = TimeZone(identifier: "UTC")!
        let noon = CampusClock(timeZone: utc).instant(date, LocalTime(hour: 12))
        var style = Date.FormatStyle(locale: locale, timeZone: utc).weekday(.abbreviated).day()
        style.calendar = Calendar(identifier: .gregorian)
        return noon.formatted(style).replacingOccurrences(of: ",", with: "")
    }

    /// "Sun 30 Nov" / "dim. 30 nov.": a day within the coming weeks.
    public func shortDate(_ date: LocalDate) -> String {
        let utc = TimeZone(identifier: "UTC")!
        let noon = CampusClock(timeZone: utc).instant(date, LocalTime(hour: 12))
        var style = Date.FormatStyle(locale: locale, timeZone: utc).weekday(.abbreviated).day().month(.abbreviated)
        style.calendar = Calendar(identifier: .gregorian)
        return noon.formatted(style).replacingOccurrences(of: ",", with: "")
    }

    /// "Monday" … "Sunday" / "Lundi" … "Dimanche" for 0 … 6 (ISO weekday less one), as a label begins.
    public func weekdayName(_ index: Int) -> String {
        let utc = TimeZone(identifier: "UTC")!
        // 5 January 2026 is a Monday.
        let noon = CampusClock(timeZone: utc).instant(LocalDate("2026-01-05")!.adding(days: index), LocalTime(hour: 12))
        var style = Date.FormatStyle(locale: locale, timeZone: utc).weekday(.wide)
        style.calendar = Calendar(identifier: .gregorian)
        let name = noon.formatted(style)
        return name.prefix(1).uppercased(with: locale) + name.dropFirst()
    }
}
