/// CLDR plural categories, for the languages Quad speaks.
public enum PluralCategory: String, Sendable {
    case zero, one, two, few, many, other

    /// The category of a whole count. English: 1 is `one`. French: 0 and 1 are `one`
    /// (CLDR's `many` for French only concerns compact forms such as "1 M", which Quad does not print).
    public init(count: Int, language: Language) {
        switch language {
        case .english: self = count == 1 ? .one : .other
        case .french: self = (count == 0 || count == 1) ? .one : .other
        }
    }

    /// The ordinal category of a position (CLDR's ordinal rules): English 1st, 2nd, 3rd, 4th, 11th, 21st…;
    /// French 1er, then 2e, 3e…
    public init(ordinal n: Int, language: Language) {
        switch language {
        case .english:
            let (ten, hundred) = (n % 10, n % 100)
            if ten == 1 && hundred != 11 {
                self = .one
            } else if ten == 2 && hundred != 12 {
                self = .two
            } else if ten == 3 && hundred != 13 {
                self = .few
            } else {
                self = .other
            }
        case .french: self = n == 1 ? .one : .other
        }
    }
}
