/// An amount of money in minor units (cents): exact, never floating point.
///
/// Parsed from the wire's `"1.00"`-style strings: digits, optionally a point and one or two more digits;
/// no sign, no grouping, no exponent. Written back with exactly two decimals.
public struct Money: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    /// The amount in cents.
    public let cents: Int
    /// The largest amount accepted: 9,999,999.99.
    public static let maxCents = 999_999_999

    public init(cents: Int) {
        precondition(cents >= 0, "amounts are never negative")
        self.cents = cents
    }

    /// `"1"`, `"1.5"`, `"1.50"` → 150 cents; nil for anything else (`"1.2.3"`, `"-1"`, `"1.005"`, `"1e3"`, `""`).
    public init?(_ text: String) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count <= 2, let whole = parts.first, !whole.isEmpty, whole.count <= 7,
            whole.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 })
        else { return nil }
        var fraction = 0
        if parts.count == 2 {
            let digits = parts[1]
            guard (1...2).contains(digits.count), digits.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
            fraction = Int(digits)! * (digits.count == 1 ? 10 : 1)
        }
        self.cents = Int(whole)! * 100 + fraction
    }

    /// Exactly two decimals, a point, no grouping: `"1.00"`, as the original endpoint sent.
    public var plain: String {
        let fraction = cents % 100
        return "\(cents / 100).\(fraction < 10 ? "0" : "")\(fraction)"
    }

    public var description: String { plain }

    public static func < (a: Money, b: Money) -> Bool { a.cents < b.cents }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let money = Money(text) else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: "\(text) is not an amount"))
        }
        self = money
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(plain)
    }
}

/// The store's currency, and amounts written the way the page's language writes them.
public struct Currency: Sendable, Hashable {
    /// ISO 4217: `USD`.
    public let code: String

    public init(code: String) {
        self.code = code.uppercased()
    }

    public static let usd = Currency(code: "USD")

    /// Three ASCII letters.
    public static func isValidCode(_ code: String) -> Bool {
        code.count == 3 && code.unicodeScalars.allSatisfy { ("A"..."Z").contains($0) || ("a"..."z").contains($0) }
    }

    public var symbol: String {
        switch code {
        case "USD", "CAD", "AUD", "NZD": "$"
        case "EUR": "€"
        case "GBP": "£"
        case "JPY": "¥"
        case "CHF": "CHF"
        default: code
        }
    }

    /// `$1,234.50` in English; `1 234,50 $` in French (a narrow no-break space groups thousands and a
    /// no-break space keeps the symbol with the amount).
    public func format(_ money: Money, language: Language) -> String {
        let whole = String(money.cents / 100)
        let fraction = money.cents % 100
        let cents = (fraction < 10 ? "0" : "") + String(fraction)
        switch language {
        case .english:
            let amount = Self.grouped(whole, separator: ",") + "." + cents
            return symbol.count == 1 ? symbol + amount : symbol + "\u{A0}" + amount
        case .french:
            return Self.grouped(whole, separator: "\u{202F}") + "," + cents + "\u{A0}" + symbol
        }
    }

    private static func grouped(_ digits: String, separator: String) -> String {
        var result = ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { result += separator }
            result.append(digit)
        }
        return result
    }
}

/// What a tile says about its prices: the original struck through only when it is numerically greater
/// (the original app compared strings, so "10.00" looked cheaper than "9.00"), and the saving.
public struct PriceComparison: Sendable, Equatable {
    public let price: Money
    public let originalPrice: Money

    public init(price: Money, originalPrice: Money) {
        self.price = price
        self.originalPrice = originalPrice
    }

    /// The price is lower than the original one.
    public var isReduced: Bool { originalPrice > price }

    /// What the shopper saves; nil when not reduced.
    public var saving: Money? { isReduced ? Money(cents: originalPrice.cents - price.cents) : nil }

    /// The saving in whole percent of the original, rounded half up; nil when not reduced or when it
    /// rounds to 0 %.
    public var savingsPercent: Int? {
        guard isReduced else { return nil }
        let saved = originalPrice.cents - price.cents
        let percent = (saved * 200 + originalPrice.cents) / (originalPrice.cents * 2)
        return percent > 0 ? percent : nil
    }
}
