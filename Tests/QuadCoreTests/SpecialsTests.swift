import Foundation
import Testing

@testable import QuadCore

@Suite struct SpecialsTests {
    /// The tile widths of the original payload (`backup.json`), in its order.
    static let backupWidths = [16, 8, 8, 14, 4, 4, 4, 4, 16, 16, 9, 5, 3, 3, 3, 3, 12, 4, 5, 5, 5]

    @Test func backupRowsAtCanvas16() {
        let rows = SpecialsLayout.rows(widths: Self.backupWidths, canvas: 16)
        // By hand: 16 | 8+8 | 14 (4 would make 18) | 4+4+4+4 | 16 | 16 | 9+5 (3 would make 17) |
        // 3+3+3+3 (12 would make 24) | 12+4 | 5+5+5.
        #expect(
            rows.map(\.tiles) == [
                [0], [1, 2], [3], [4, 5, 6, 7], [8], [9], [10, 11], [12, 13, 14, 15], [16, 17], [18, 19, 20],
            ])
        #expect(rows.map(\.width) == [16, 16, 14, 16, 16, 16, 14, 12, 16, 15])
        #expect(rows.map(\.inset) == [0, 0, 1, 0, 0, 0, 1, 2, 0, 0.5])
    }

    @Test func aTileWiderThanTheCanvasIsAloneOnItsRow() {
        let rows = SpecialsLayout.rows(widths: [4, 20, 4], canvas: 16)
        #expect(rows.map(\.tiles) == [[0], [1], [2]])
        #expect(rows[1].width == 16)
        #expect(SpecialsLayout.rows(widths: [], canvas: 16).isEmpty)
    }

    /// A small deterministic generator, so a failure can be replayed.
    struct SplitMix: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    @Test(arguments: 1...200) func layoutProperties(seed: Int) {
        var random = SplitMix(state: UInt64(seed))
        let canvas = Int.random(in: 1...32, using: &random)
        let widths = (0..<Int.random(in: 0...40, using: &random)).map { _ in Int.random(in: 1...canvas, using: &random)
        }
        let rows = SpecialsLayout.rows(widths: widths, canvas: canvas)
        // Order kept, nothing lost or repeated.
        #expect(rows.flatMap(\.tiles) == Array(widths.indices))
        for (index, row) in rows.enumerated() {
            #expect(!row.tiles.isEmpty)
            #expect(row.width == row.tiles.map { widths[$0] }.reduce(0, +))
            // No row wider than the canvas, and centred.
            #expect(row.width <= canvas)
            #expect(row.inset * 2 + Double(row.width) == Double(canvas))
            // As full as order allows: the next row's first tile would not have fitted.
            if index + 1 < rows.count {
                #expect(row.width + widths[rows[index + 1].tiles[0]] > canvas)
            }
        }
    }

    @Test func parsesAmountsExactly() {
        #expect(Money("1.00")?.cents == 100)
        #expect(Money("1")?.cents == 100)
        #expect(Money("1.5")?.cents == 150)
        #expect(Money("0.99")?.cents == 99)
        #expect(Money("0")?.cents == 0)
        #expect(Money("1234567.89")?.cents == 123_456_789)
        for bad in ["1.2.3", "", ".5", "1.", "1.005", "-1.00", "+1", "1e3", "1,00", " 1", "12345678", "٣.٠٠", "0x1"] {
            #expect(Money(bad) == nil, "\(bad)")
        }
        #expect(Money(cents: 5).plain == "0.05")
        #expect(Money(cents: 1290).plain == "12.90")
    }

    @Test func comparesNumericallyNotAsText() {
        // As strings "10.00" < "9.00"; as amounts it is the other way.
        let tenVersusNine = PriceComparison(price: Money("9.00")!, originalPrice: Money("10.00")!)
        #expect(tenVersusNine.isReduced)
        #expect(tenVersusNine.savingsPercent == 10)
        let nineVersusTen = PriceComparison(price: Money("10.00")!, originalPrice: Money("9.00")!)
        #expect(!nineVersusTen.isReduced)
        #expect(nineVersusTen.savingsPercent == nil)
        #expect(PriceComparison(price: Money("1.00")!, originalPrice: Money("2.00")!).savingsPercent == 50)
        #expect(PriceComparison(price: Money("1.29")!, originalPrice: Money("2.23")!).savingsPercent == 42)
        #expect(PriceComparison(price: Money("3.92")!, originalPrice: Money("3.92")!).isReduced == false)
        #expect(PriceComparison(price: Money("0")!, originalPrice: Money("1")!).savingsPercent == 100)
        // A saving that rounds to 0 % is struck through but shows no percentage.
        let tiny = PriceComparison(price: Money("999.99")!, originalPrice: Money("1000.00")!)
        #expect(tiny.isReduced && tiny.savingsPercent == nil)
    }

    @Test func formatsForTheLanguage() {
        #expect(Currency.usd.format(Money("1.00")!, language: .english) == "$1.00")
        #expect(Currency.usd.format(Money("1234.5")!, language: .english) == "$1,234.50")
        #expect(Currency.usd.format(Money("1.00")!, language: .french) == "1,00\u{A0}$")
        #expect(Currency.usd.format(Money("1234.5")!, language: .french) == "1\u{202F}234,50\u{A0}$")
        #expect(Currency(code: "eur").format(Money("2")!, language: .english) == "€2.00")
        #expect(Currency(code: "CHF").format(Money("2")!, language: .english) == "CHF\u{A0}2.00")
    }

    static func draft(
        name: String = "Kinder Chocolate", width: String = "8", height: String = "8", original: String = "2.00",
        price: String = "1.00"
    ) -> SpecialDraft {
        SpecialDraft(displayName: name, width: width, height: height, originalPrice: original, price: price)
    }

    static func messages(_ draft: SpecialDraft) -> [String: String] {
        do {
            _ = try SpecialValidation.special(draft, canvasUnit: 16)
            return [:]
        } catch {
            return Dictionary(error.errors.map { ($0.field, $0.message) }, uniquingKeysWith: { a, _ in a })
        }
    }

    @Test func validationNamesEachField() throws {
        let checked = try SpecialValidation.special(Self.draft(), canvasUnit: 16)
        #expect(checked.price.cents == 100 && checked.width == 8)
        let errors = Self.messages(Self.draft(name: " ", width: "20", height: "0", original: "x", price: "1.2.3"))
        #expect(Set(errors.keys) == ["display_name", "width", "height", "original_price", "price"])
        #expect(errors["width"]?.hasPrefix("width 20 is wider than the canvas (16)") == true)
        #expect(errors["price"]?.hasPrefix("price 1.2.3 is not an amount") == true)
        #expect(Self.messages(Self.draft(height: "33"))["height"] != nil)
        #expect(Self.messages(Self.draft(height: "32")).isEmpty)
        #expect(Self.messages(Self.draft(width: "16")).isEmpty)
        #expect(Self.messages(Self.draft(width: "4.5"))["width"]?.contains("not a whole number") == true)
        #expect(Self.messages(Self.draft(price: "-1"))["price"] != nil)
        #expect(Self.messages(Self.draft(price: "1.005"))["price"] != nil)
        #expect(Self.messages(Self.draft(name: String(repeating: "a", count: 121)))["display_name"] != nil)
    }

    @Test func priceMayNotExceedTheOriginalNumerically() {
        #expect(Self.messages(Self.draft(original: "10.00", price: "9.00")).isEmpty)
        #expect(Self.messages(Self.draft(original: "9.00", price: "10.00"))["price"]?.contains("more than") == true)
        #expect(Self.messages(Self.draft(original: "2.00", price: "2")).isEmpty)
    }

    @Test func validityWindow() throws {
        var draft = Self.draft()
        draft.validFrom = "2026-11-22T08:00:00Z"
        draft.validUntil = "2026-11-22T08:00"
        #expect(Self.messages(draft)["validUntil"] != nil)
        draft.validUntil = "2026-11-23T08:00"
        let checked = try SpecialValidation.special(draft, canvasUnit: 16)
        let from = try #require(checked.validFrom)
        let special = Special(
            id: "a", displayName: "A", width: 1, height: 1, imageUrl: "", originalPrice: Money(cents: 1),
            price: Money(cents: 1), validFrom: checked.validFrom, validUntil: checked.validUntil)
        #expect(!special.isValid(at: from.addingTimeInterval(-1)))
        #expect(special.isValid(at: from))
        #expect(!special.isValid(at: checked.validUntil!))
        #expect(special.nextBoundary(after: from.addingTimeInterval(-1)) == from)
        #expect(special.nextBoundary(after: from) == checked.validUntil)
        draft.validFrom = "tomorrow"
        #expect(Self.messages(draft)["validFrom"] != nil)
    }

    @Test func aFormsDateIsTheStoresLocalTime() throws {
        let paris = try #require(TimeZone(identifier: "Europe/Paris"))
        // Winter: UTC+1; summer: UTC+2. A zone or an offset typed in wins over the store's.
        #expect(SpecialValidation.parseDate("2026-11-22T08:00", in: paris) == Self.utc("2026-11-22T07:00:00Z"))
        #expect(SpecialValidation.parseDate("2026-07-01T08:00:30", in: paris) == Self.utc("2026-07-01T06:00:30Z"))
        #expect(SpecialValidation.parseDate("2026-11-22T08:00:00Z", in: paris) == Self.utc("2026-11-22T08:00:00Z"))
        #expect(
            SpecialValidation.parseDate("2026-11-22T08:00:00-05:00", in: paris) == Self.utc("2026-11-22T13:00:00Z"))
        #expect(SpecialValidation.parseDate("2026-11-22T08:00") == Self.utc("2026-11-22T08:00:00Z"))
        // In the spring-forward gap (02:30 does not exist in Paris), the time the clocks moved to.
        #expect(SpecialValidation.parseDate("2026-03-29T02:30", in: paris) == Self.utc("2026-03-29T01:30:00Z"))
        for bad in ["2026-02-30T08:00", "2026-11-22T24:00", "2026-11-22T08:60", "2026-11-22 08:00", "22/11/2026"] {
            #expect(SpecialValidation.parseDate(bad, in: paris) == nil, "\(bad)")
        }
        // And back for the form, in the same zone.
        #expect(SpecialValidation.localInput(Self.utc("2026-11-22T07:00:00Z"), in: paris) == "2026-11-22T08:00")
        #expect(SpecialValidation.localInput(Self.utc("2026-07-01T06:00:30Z"), in: paris) == "2026-07-01T08:00:30")
        var draft = Self.draft()
        draft.validFrom = "2026-11-22T08:00"
        let checked = try SpecialValidation.special(draft, canvasUnit: 16, timeZone: paris)
        #expect(checked.validFrom == Self.utc("2026-11-22T07:00:00Z"))
    }

    static func utc(_ text: String) -> Date { try! Date(text, strategy: .iso8601) }

    @Test func settingsNameEachFieldAtFault() throws {
        let settings = try SpecialValidation.settings(form: [
            "canvasUnit": " 20 ", "currency": "eur", "timeZone": "Europe/Paris",
        ])
        #expect(settings == SpecialsSettings(canvasUnit: 20, currency: "EUR", timeZone: "Europe/Paris"))
        #expect(settings.zone.identifier == "Europe/Paris")
        do {
            _ = try SpecialValidation.settings(form: ["canvasUnit": "big", "currency": "E", "timeZone": "Mars/Olympus"])
            Issue.record("accepted")
        } catch {
            let messages = Dictionary(error.errors.map { ($0.field, $0.message) }, uniquingKeysWith: { a, _ in a })
            #expect(messages["canvasUnit"] == "canvasUnit big is not a whole number.")
            #expect(messages["currency"] == "currency E is not a three-letter code.")
            #expect(messages["timeZone"] == "timeZone Mars/Olympus is not a time zone such as Europe/Paris.")
        }
        #expect(throws: ValidationFailure.self) { try SpecialValidation.settings(canvasUnit: 65, currency: "USD") }
    }

    @Test func tileContentFollowsRenderedWidth() {
        let phoneUnit = 390.0 / 16
        #expect(TileContent(renderedWidth: 3 * phoneUnit) == .image)
        #expect(TileContent(renderedWidth: 4 * phoneUnit) == .text)
        #expect(TileContent(renderedWidth: 5 * phoneUnit) == .text)
        #expect(TileContent(renderedWidth: 6 * phoneUnit) == .full)
        // On a 320 px phone the same rule holds; with a larger unit (a tablet) 5 units show everything.
        #expect(TileContent(renderedWidth: 3 * 20) == .image)
        #expect(TileContent(renderedWidth: 5 * 40) == .full)
    }

    @Test func theWireShapeIsTheOriginals() throws {
        let list = SpecialsList(
            canvasUnit: 16, currency: "USD",
            managerSpecials: [
                Special(
                    id: "a", displayName: "Noodle", width: 16, height: 8, imageUrl: "http://x/images/a.png",
                    originalPrice: Money("2")!, price: Money("1")!)
            ])
        let json = try JSONSerialization.jsonObject(with: try JSONEncoder().encode(list)) as? [String: Any]
        let special = try #require((json?["managerSpecials"] as? [[String: Any]])?.first)
        #expect(special["original_price"] as? String == "2.00")
        #expect(special["price"] as? String == "1.00")
        #expect(special["display_name"] as? String == "Noodle")
        #expect(try JSONDecoder().decode(SpecialsList.self, from: try JSONEncoder().encode(list)) == list)
    }
}
