import Foundation
import Testing

@testable import QuadCore

/// What a tile says besides its price: the price per kilogram or litre from the quantity its name states (Directive
/// 98/6/EC), the saving as money, and the last day the special holds.
@Suite struct UnitPriceTests {
    @Test(arguments: [
        ("Orange juice 1.5 L", Quantity.Measure.volume, 1_500_000),
        ("Crisps 50 g", .mass, 50_000),
        ("Coke 330ml can", .volume, 330_000),
        ("Lait demi-écrémé 1,5 l", .volume, 1_500_000),
        ("Sparkling water 6 x 500 ml", .volume, 3_000_000),
        ("Yoghurt 4×125g", .mass, 500_000),
        ("Beef mince 1kg.", .mass, 1_000_000),
        ("Soup 2 for 75 cl", .volume, 750_000),
        // Imperial units, to the whole gram or millilitre (1.4 × 28.3495 g is 39.69 g).
        ("Lindt Hello Cookies & Cream 1.4 oz", .mass, 40_000),
        ("Blue Diamond Almond Roasted Salted 6oz", .mass, 170_000),
        ("Navel Oranges 4LBS", .mass, 1_814_000),
        ("Maple syrup 12 fl oz", .volume, 355_000),
        ("Sparkling water 6 x 12 fl. oz", .volume, 2_130_000),
    ])
    func aNamesQuantityIsRead(name: String, measure: Quantity.Measure, milliBase: Int) {
        #expect(Quantity(parsing: name) == Quantity(measure: measure, milliBase: milliBase))
    }

    @Test(arguments: [
        "Noodle Dish with Roasted Black Bean Sauce", "Pack of 6", "Gift card $50", "1.5", "0 g", "Vitamin C 1000",
    ])
    func aNameWithoutAQuantityHasNone(name: String) {
        #expect(Quantity(parsing: name) == nil)
    }

    @Test func aQuantityIsWrittenAsALabelWritesIt() {
        #expect(Quantity(parsing: "1,5 l")?.description == "1.5 L")
        #expect(Quantity(parsing: "6 x 330 ml")?.description == "1.98 L")
        #expect(Quantity(parsing: "250ml")?.description == "250 ml")
        #expect(Quantity(parsing: "1000 g")?.description == "1 kg")
        #expect(Quantity(parsing: "1.25 kg")?.description == "1.25 kg")
        #expect(Quantity(parsing: "2.5 g")?.description == "2.5 g")
        #expect(Quantity(parsing: "4 lb")?.description == "1.814 kg")
    }

    @Test func aManagersQuantityIsCheckedWithTheSpecial() throws {
        func checked(_ quantity: String?) throws(ValidationFailure) -> CheckedSpecial {
            try SpecialValidation.special(
                SpecialDraft(
                    displayName: "Orange juice", width: "4", height: "4", originalPrice: "2.00", price: "1.50",
                    quantity: quantity), canvasUnit: 16)
        }
        #expect(try checked("1,5 l").quantity == Quantity(measure: .volume, milliBase: 1_500_000))
        #expect(try checked("").quantity == nil && checked(nil).quantity == nil)
        let refused = try #require(throws: ValidationFailure.self) { try checked("a big bottle") }
        #expect(refused.errors.map(\.field) == ["quantity"])
    }

    @Test func thePricePerKilogramOrLitreIsToTheNearestCent() {
        #expect(Quantity(parsing: "1.5 L")!.unitPrice(of: Money("2.00")!) == Money("1.33")!)
        #expect(Quantity(parsing: "50 g")!.unitPrice(of: Money("1.20")!) == Money("24.00")!)
        #expect(Quantity(parsing: "330 ml")!.unitPrice(of: Money("1.00")!) == Money("3.03")!)
        // 0.5 of a cent rounds up: $0.01 for 2 kg is half a cent a kilogram.
        #expect(Quantity(parsing: "2 kg")!.unitPrice(of: Money("0.01")!) == Money("0.01")!)
    }

    @Test func theSavingIsMoneyAndOnlyForAReduction() {
        #expect(PriceComparison(price: Money("1.20")!, originalPrice: Money("1.50")!).saving == Money("0.30")!)
        #expect(PriceComparison(price: Money("1.50")!, originalPrice: Money("1.50")!).saving == nil)
        #expect(PriceComparison(price: Money("2.00")!, originalPrice: Money("1.50")!).saving == nil)
    }

    @Test func aSpecialEndingAtMidnightHoldsThroughTheDayBefore() {
        let paris = TimeZone(identifier: "Europe/Paris")!
        let clock = CampusClock(timeZone: paris)
        let midnight = clock.instant(LocalDate("2026-12-01")!, LocalTime(hour: 0))
        let last = Special.ends(midnight, in: paris)
        #expect(last?.lastDay == LocalDate("2026-11-30") && last?.at == nil)
        let evening = Special.ends(clock.instant(LocalDate("2026-11-30")!, LocalTime(hour: 18)), in: paris)
        #expect(evening?.lastDay == LocalDate("2026-11-30") && evening?.at == LocalTime(hour: 18))
        #expect(Special.ends(nil, in: paris) == nil)
        #expect(Localizer(language: .english).shortDate(LocalDate("2025-11-30")!) == "Sun 30 Nov")
        #expect(Localizer(language: .french).shortDate(LocalDate("2025-11-30")!) == "dim. 30 nov.")
    }
}
