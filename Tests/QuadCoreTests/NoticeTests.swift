import Foundation
import Testing

@testable import QuadCore

/// A notice says what was lost in the person's language, on the campus's clock: one booking with its day and times,
/// several by how many, one without a time as such.
@Suite struct NoticeTests {
    static let campus = CampusClock(timeZone: TimeZone(identifier: "Australia/Melbourne")!)
    static let day = LocalDate("2026-12-01")!

    static func notice(_ kind: Notice.Kind, count: Int, timed: Bool) -> Notice {
        Notice(
            id: "n", kind: kind, room: "Mostafa", count: count,
            start: timed ? campus.instant(day, LocalTime(hour: 10)) : nil,
            end: timed ? campus.instant(day, LocalTime(hour: 10, minute: 30)) : nil, at: .distantPast)
    }

    @Test func itSaysWhatWasLostInEachLanguage() {
        let (english, french) = (Localizer(language: .english), Localizer(language: .french))
        let one = Self.notice(.bookingsEnded, count: 1, timed: true)
        #expect(
            one.sentence(english, clock: Self.campus)
                == "Mostafa was removed: your booking on \(english.longDate(Self.day)), 10:00–10:30 is cancelled.")
        #expect(
            one.sentence(french, clock: Self.campus)
                == "La salle Mostafa a été supprimée : votre réservation du \(french.longDate(Self.day)), 10:00–10:30 "
                + "est annulée.")
        #expect(
            Self.notice(.bookingsEnded, count: 3, timed: false).sentence(english, clock: Self.campus)
                == "Mostafa was removed: your 3 bookings there are cancelled.")
        #expect(
            Self.notice(.bookingsEnded, count: 1, timed: false).sentence(english, clock: Self.campus)
                == "Mostafa was removed: your booking there is cancelled.")
        #expect(
            Self.notice(.placesEnded, count: 2, timed: false).sentence(french, clock: Self.campus)
                == "La salle Mostafa a été supprimée : vos 2 places dans les files y ont pris fin.")
        #expect(
            Self.notice(.placesEnded, count: 1, timed: true).sentence(english, clock: Self.campus)
                .hasSuffix("your place in line for \(english.longDate(Self.day)), 10:00–10:30 has ended."))
    }

    /// Several with one time each: the count wins (one booking's time would mislead about the others).
    @Test func severalAreCountedEvenWithATime() {
        let english = Localizer(language: .english)
        #expect(
            Self.notice(.bookingsEnded, count: 2, timed: true).sentence(english, clock: Self.campus)
                == "Mostafa was removed: your 2 bookings there are cancelled.")
    }
}
