import Foundation

/// How much of a product a price buys, as its label says it ("1.5 L", "50 g", "6 x 330 ml"): the base of the price
/// per kilogram or per litre that a shop must show beside the selling price (Directive 98/6/EC, Art. 3).
public struct Quantity: Sendable, Equatable {
    public enum Measure: String, Sendable, Equatable {
        /// Weighed: the unit price is per kilogram.
        case mass
        /// Poured: the unit price is per litre.
        case volume
    }

    public var measure: Measure
    /// In grams or millilitres, in thousandths (1.5 L is 1,500,000): exact, never floating point.
    public var milliBase: Int

    public init(measure: Measure, milliBase: Int) {
        self.measure = measure
        self.milliBase = milliBase
    }

    /// Units as labels write them, with their size in thousandths of a gram or of a millilitre.
    static let units: [String: (Measure, Int)] = [
        "kg": (.mass, 1_000_000), "g": (.mass, 1000), "gr": (.mass, 1000),
        "l": (.volume, 1_000_000), "cl": (.volume, 10_000), "ml": (.volume, 1000),
    ]

    /// Imperial units, in the same thousandths (an ounce is 28.349523125 g, a pound 453.59237 g, a US fluid ounce
    /// 29.5735295625 ml): a quantity in them is rounded to the whole gram or millilitre, as a label's metric
    /// equivalent is ("4 lb (1.814 kg)").
    static let imperialUnits: [String: (Measure, Int)] = [
        "oz": (.mass, 28_350), "lb": (.mass, 453_592), "lbs": (.mass, 453_592), "fl oz": (.volume, 29_574),
    ]

    /// The unit at `index` (two words for "fl oz"), its size, whether it is imperial, and where the word after it is.
    private static func unit(
        _ words: [String], at index: Int
    ) -> (measure: Measure, size: Int, imperial: Bool, next: Int)? {
        guard index < words.count else { return nil }
        if let (measure, size) = units[words[index]] { return (measure, size, false, index + 1) }
        if index + 1 < words.count, let (measure, size) = imperialUnits[words[index] + " " + words[index + 1]] {
            return (measure, size, true, index + 2)
        }
        guard let (measure, size) = imperialUnits[words[index]] else { return nil }
        return (measure, size, true, index + 1)
    }

    /// The quantity a product's name states, if it states one: a number (`1.5`, `1,5`) and a unit (`g`, `kg`, `ml`,
    /// `cl`, `L`; `oz`, `lb`, `fl oz`), with or without a space, optionally after a count (`6 x 330 ml`, `6×330ml`).
    /// The last one wins ("Orange juice 2 for 1.5 L" is 1.5 L).
    public init?(parsing name: String) {
        var found: Quantity?
        let words = Self.tokens(name.lowercased())
        var index = 0
        while index < words.count {
            if let (milli, unitAt) = Self.amount(words, at: index), let unit = Self.unit(words, at: unitAt) {
                var total = milli * unit.size / 1000
                if unit.imperial { total = (total + 500) / 1000 * 1000 }
                // "6 x 330 ml": a count before the amount.
                if index >= 2, words[index - 1] == "x" || words[index - 1] == "×",
                    let count = Int(words[index - 2]), (1...100).contains(count)
                {
                    total *= count
                }
                if total > 0 { found = Quantity(measure: unit.measure, milliBase: total) }
                index = unit.next
            } else {
                index += 1
            }
        }
        guard let found else { return nil }
        self = found
    }

    /// A number as thousandths (`1.5` → 1500) and where the word after it is.
    private static func amount(_ words: [String], at index: Int) -> (Int, Int)? {
        let word = words[index]
        guard let first = word.first, first.isNumber else { return nil }
        let parts = word.split(whereSeparator: { $0 == "." || $0 == "," }).map(String.init)
        guard (1...2).contains(parts.count), parts.allSatisfy({ $0.allSatisfy(\.isASCII) && Int($0) != nil }),
            parts[0].count <= 6, parts.count == 1 || (1...3).contains(parts[1].count)
        else { return nil }
        let whole = Int(parts[0])! * 1000
        let fraction = parts.count == 2 ? Int(parts[1].padding(toLength: 3, withPad: "0", startingAt: 0))! : 0
        return (whole + fraction, index + 1)
    }

    /// Numbers, letters and the multiplication signs, each a word of its own ("330ml" is "330", "ml").
    private static func tokens(_ text: String) -> [String] {
        var words: [String] = []
        var word = ""
        var kind = 0  // 1 a number, 2 letters
        for character in text {
            let next =
                character.isNumber || ((character == "." || character == ",") && kind == 1)
                ? 1
                : character.isLetter && character != "×" ? 2 : 0
            if next != kind || next == 0, !word.isEmpty {
                words.append(word.hasSuffix(".") || word.hasSuffix(",") ? String(word.dropLast()) : word)
                word = ""
            }
            if next != 0 { word.append(character) } else if character == "×" { words.append("×") }
            kind = next
        }
        if !word.isEmpty { words.append(word.hasSuffix(".") || word.hasSuffix(",") ? String(word.dropLast()) : word) }
        return words
    }

    /// "1.5 L", "330 ml", "1 kg", "500 g": as a label writes it, and as the manager's field is filled again.
    public var description: String {
        let large = milliBase >= 1_000_000
        let unit = measure == .volume ? (large ? "L" : "ml") : (large ? "kg" : "g")
        let scale = large ? 1_000_000 : 1000
        let whole = milliBase / scale
        var fraction = String(milliBase % scale)
        fraction = String(repeating: "0", count: String(scale).count - 1 - fraction.count) + fraction
        while fraction.hasSuffix("0") { fraction.removeLast() }
        return (fraction.isEmpty ? "\(whole)" : "\(whole).\(fraction)") + " " + unit
    }

    /// The price of a kilogram or a litre at `price` for this quantity, to the nearest cent (half up).
    public func unitPrice(of price: Money) -> Money {
        // cents per kg (or L) = cents × 1,000,000 / milliBase, where 1,000,000 thousandths of a gram are a kilogram.
        let numerator = price.cents * 1_000_000
        return Money(cents: min(Money.maxCents, (2 * numerator + milliBase) / (2 * milliBase)))
    }
}
