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
}
