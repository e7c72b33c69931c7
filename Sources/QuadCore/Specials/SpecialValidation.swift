import Foundation

/// A special as a manager types it (a form or a JSON body), every field still as text.
public struct SpecialDraft: Sendable, Equatable {
    public var displayName: String?
    public var width: String?
    public var height: String?
    public var originalPrice: String?
    public var price: String?
    public var promotion: String?
    public var validFrom: String?
    public var validUntil: String?

    public init(
        displayName: String? = nil, width: String? = nil, height: String? = nil, originalPrice: String? = nil,
        price: String? = nil, promotion: String? = nil, validFrom: String? = nil, validUntil: String? = nil
    ) {
        self.displayName = displayName
        self.width = width
        self.height = height
        self.originalPrice = originalPrice
        self.price = price
        self.promotion = promotion
        self.validFrom = validFrom
        self.validUntil = validUntil
    }
}

/// A special's fields once checked.
public struct CheckedSpecial: Sendable, Equatable {
    public var displayName: String
    public var width: Int
    public var height: Int
    public var originalPrice: Money
    public var price: Money
    public var promotion: String?
    public var validFrom: Date?
    public var validUntil: Date?
}

/// The rules for a special; the server, the kit and the CLI all use them. Fields are named as the
/// API spells them (`display_name`, `original_price`, `price`, `width`, `height`, `promotion`,
/// `validFrom`, `validUntil`).
public enum SpecialValidation {
    public static let maxNameLength = 120
    public static let maxPromotionLength = 80

    /// Every field at fault is named, not just the first.
    public static func special(_ draft: SpecialDraft, canvasUnit: Int) throws(ValidationFailure) -> CheckedSpecial {
        var errors: [FieldError] = []
        let name = (draft.displayName ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        if name.isEmpty || name.count > maxNameLength {
            errors.append(.init(field: "display_name", message: "A name is 1 to \(maxNameLength) characters."))
        } else if name.unicodeScalars.contains(where: { CharacterSet.controlCharacters.contains($0) }) {
            errors.append(.init(field: "display_name", message: "A name cannot contain control characters."))
        }
        let width = units(
            "width", draft.width, max: canvasUnit, limit: "wider than the canvas (\(canvasUnit))", &errors)
        let height = units(
            "height", draft.height, max: 2 * canvasUnit, limit: "taller than twice the canvas (\(2 * canvasUnit))",
            &errors)
        let original = amount("original_price", draft.originalPrice, &errors)
        let price = amount("price", draft.price, &errors)
        if let original, let price, price > original {
            errors.append(
                .init(field: "price", message: "price \(price) is more than the original price \(original)."))
        }
        var promotion = draft.promotion?.trimmingCharacters(in: .whitespacesAndNewlines)
        if promotion?.isEmpty == true { promotion = nil }
        if let promotion, promotion.count > maxPromotionLength {
            errors.append(
                .init(field: "promotion", message: "A promotion is at most \(maxPromotionLength) characters."))
        }
        let from = date("validFrom", draft.validFrom, &errors)
        let until = date("validUntil", draft.validUntil, &errors)
        if let from, let until, until <= from {
            errors.append(.init(field: "validUntil", message: "validUntil must be after validFrom."))
        }
        guard errors.isEmpty, let width, let height, let original, let price else { throw ValidationFailure(errors) }
        return CheckedSpecial(
            displayName: name, width: width, height: height, originalPrice: original, price: price,
            promotion: promotion, validFrom: from, validUntil: until)
    }

    /// Store settings: a canvas of 1 to 64 units, a three-letter currency code.
    public static func settings(canvasUnit: Int?, currency: String?) throws(ValidationFailure) -> SpecialsSettings {
        var errors: [FieldError] = []
        let unit = canvasUnit ?? 16
        if !(1...64).contains(unit) {
            errors.append(.init(field: "canvasUnit", message: "canvasUnit \(unit) is not from 1 to 64."))
        }
        let code = currency ?? "USD"
        if !Currency.isValidCode(code) {
            errors.append(.init(field: "currency", message: "currency \(code) is not a three-letter code."))
        }
        guard errors.isEmpty else { throw ValidationFailure(errors) }
        return SpecialsSettings(canvasUnit: unit, currency: code.uppercased())
    }

    private static func units(
        _ field: String, _ raw: String?, max: Int, limit: String, _ errors: inout [FieldError]
    ) -> Int? {
        let text = (raw ?? "").trimmingCharacters(in: .whitespaces)
        guard !text.isEmpty else {
            errors.append(.init(field: field, message: "\(field) is required, in canvas units."))
            return nil
        }
        guard let value = Int(text) else {
            errors.append(.init(field: field, message: "\(field) \(text) is not a whole number."))
            return nil
        }
        if value < 1 {
            errors.append(.init(field: field, message: "\(field) \(value) is less than 1."))
            return nil
        }
        if value > max {
            errors.append(.init(field: field, message: "\(field) \(value) is \(limit)."))
            return nil
        }
        return value
    }

    private static func amount(_ field: String, _ raw: String?, _ errors: inout [FieldError]) -> Money? {
        let text = (raw ?? "").trimmingCharacters(in: .whitespaces)
        guard !text.isEmpty else {
            errors.append(.init(field: field, message: "\(field) is required, like 1.00."))
            return nil
        }
        guard let money = Money(text) else {
            errors.append(
                .init(
                    field: field,
                    message: "\(field) \(text) is not an amount (digits, at most two decimals, not negative)."))
            return nil
        }
        return money
    }

    /// ISO 8601 with a zone (`2026-11-22T08:00:00Z`), or a form's local `2026-11-22T08:00` read as UTC.
    private static func date(_ field: String, _ raw: String?, _ errors: inout [FieldError]) -> Date? {
        let text = (raw ?? "").trimmingCharacters(in: .whitespaces)
        guard !text.isEmpty else { return nil }
        if let date = parseDate(text) { return date }
        errors.append(.init(field: field, message: "\(field) \(text) is not a date and time (2026-11-22T08:00:00Z)."))
        return nil
    }

    public static func parseDate(_ text: String) -> Date? {
        if let date = try? Date(text, strategy: .iso8601) { return date }
        if let date = try? Date(text + ":00Z", strategy: .iso8601) { return date }
        return try? Date(text + "Z", strategy: .iso8601)
    }
}
