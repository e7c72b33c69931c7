import Foundation
import Testing

@testable import QuadCore

/// The one validator for stored human text, and the encoders for the places text goes.
@Suite struct HumanTextTests {
    static let hostile = [
        "Room\u{0}1", "\u{1B}[31mred", "Ljerka\r\nX-INJECTED:1", "a\u{85}b", "line\u{2028}break", "para\u{2029}graph",
        "abc\u{202E}fdp.exe", "\u{2066}isolate\u{2069}", "zero\u{200B}width", "soft\u{AD}hyphen", "bom\u{FEFF}",
        "tab\there",
    ]

    @Test func controlBidiAndInvisibleCharactersAreRefusedEverywhereTextIsKept() throws {
        for text in Self.hostile {
            #expect(HumanText.fault(HumanText.tidy(text), max: 200) == .invisible, "\(text.debugDescription)")
            #expect(throws: ValidationFailure.self) {
                try RoomValidation.room(id: nil, name: text, building: "North", capacity: 4, spots: 4)
            }
            #expect(throws: ValidationFailure.self) {
                try RoomValidation.room(id: "r", name: "Room", building: text, capacity: 4, spots: 4)
            }
            #expect(throws: ValidationFailure.self) { try TimetableInput.student(id: "305491", name: text) }
            #expect(throws: ValidationFailure.self) { try AccountValidation.displayName(text) }
            #expect(throws: ValidationFailure.self) {
                try BookValidation.book(title: text, author: "A", publisher: nil, categories: [], isbn: nil)
            }
            #expect(throws: ValidationFailure.self) {
                try BookValidation.book(title: "T", author: "A", publisher: nil, categories: [text], isbn: nil)
            }
            #expect(throws: ValidationFailure.self) {
                try SpecialValidation.special(
                    SpecialDraft(
                        displayName: "Kale", width: "1", height: "1", originalPrice: "2", price: "1", promotion: text),
                    canvasUnit: 16)
            }
        }
    }

    @Test func keptTextIsTrimmedAndInNFCSoItReadsBackAsTyped() throws {
        let decomposed = "Salle E\u{301}ve"  // É typed as E + combining acute
        let kept = try RoomValidation.room(id: nil, name: "  \(decomposed) ", building: "Nord", capacity: 2, spots: 2)
        #expect(kept.name == "Salle \u{C9}ve")
        // Emoji, accents, scripts, and flags made of tag characters are text, not control.
        for text in ["Café ☕️", "名古屋", "שלום", "🏴󠁧󠁢󠁳󠁣󠁴󠁿 Scotland", "Zoë & <Friends>"] {
            #expect(HumanText.fault(HumanText.tidy(text), max: 80) == nil, "\(text)")
        }
        #expect(HumanText.fault(String(repeating: "é", count: 81), max: 80) == .tooLong(max: 80))
        // Lengths count scalars, as the contract's maxLength: one letter under a heap of marks is not short.
        #expect(HumanText.fault("Z" + String(repeating: "\u{336}", count: 100), max: 80) == .tooLong(max: 80))
        // Tag characters are invisible text, except where they spell a flag.
        #expect(HumanText.fault("hidden\u{E0041}\u{E0042}", max: 80) == .invisible)
        #expect(HumanText.fault("", max: 80) == .missing)
        #expect(HumanText.fault("", max: 80, required: false) == nil)
    }

    @Test func iCalendarTextEscapesEveryLineBreakSoNoPropertyCanBeInjected() {
        // Swift counts "\r\n" as one Character: the escape goes scalar by scalar.
        #expect(ICalendar.escape("Kier\r\nX-INJECTED:1") == "Kier\\nX-INJECTED:1")
        #expect(ICalendar.escape("a\rb\nc\u{2028}d") == "a\\nb\\nc\\nd")
        #expect(ICalendar.escape("a;b,c\\d") == "a\\;b\\,c\\\\d")
        #expect(ICalendar.escape("bell\u{7}\u{1B}[31m") == "bell[31m")
        let written = ICalendar.write(
            settings: CampusSettings(
                name: "C", timeZone: TimeZone(identifier: "UTC")!,
                semesterStart: LocalDate(year: 2026, month: 3, day: 2), teachingWeeks: 2, breaks: []),
            classes: [], calendarName: "Kier\r\nX-INJECTED:1", stamp: Date(timeIntervalSince1970: 1_800_000_000))
        #expect(!written.contains("\r\nX-INJECTED"))
        #expect(written.components(separatedBy: "\r\n").allSatisfy { !$0.contains("\r") && !$0.contains("\n") })
    }

    @Test func iCalendarFoldsBetweenScalarsAt75Octets() {
        // A family emoji is one Character of 25 octets: folding by Character could not keep lines to 75.
        let line = "SUMMARY:" + String(repeating: "👨‍👩‍👧‍👦", count: 8)
        // Split on the bytes: a String search would see " " and a following ZWJ as one Character.
        var parts: [[UInt8]] = [[]]
        let bytes = Array(ICalendar.fold(line).utf8)
        var index = 0
        while index < bytes.count {
            if bytes[index...].starts(with: [13, 10, 32]) {
                parts.append([])
                index += 3
            } else {
                parts[parts.count - 1].append(bytes[index])
                index += 1
            }
        }
        #expect(parts.count > 1)
        #expect(parts.allSatisfy { $0.count <= 75 })
        #expect(Array(parts.joined()) == Array(line.utf8))
    }

    @Test func theNextClassesAreFoundWithinTheTeachingWeeksHoweverFarTheSemester() {
        let far = CampusSettings(
            name: "C", timeZone: TimeZone(identifier: "UTC")!,
            semesterStart: LocalDate(year: 2099, month: 3, day: 2), teachingWeeks: 12, breaks: [])
        let monday = TimetableClass(
            id: "c", course: "FIT1031", courseTitle: "T", name: "Lecture 01", lecturer: "L", room: "R", campus: "C",
            weekday: 1, start: LocalTime("10:00")!, end: LocalTime("11:00")!, weeks: [3])
        let plan = far.plan(now: Date(timeIntervalSince1970: 1_800_000_000), classes: [monday])
        #expect(plan.date == LocalDate(year: 2099, month: 3, day: 16))
        #expect(plan.kind == .nextTeachingDay)
        #expect(AcceptedDates.contains(LocalDate(year: 2099, month: 12, day: 31)))
        #expect(!AcceptedDates.contains(LocalDate(year: 9999, month: 1, day: 1)))
        #expect(!AcceptedDates.contains(Date(timeIntervalSince1970: 253_402_300_800)))
    }
}
