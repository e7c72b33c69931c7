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
    /// How much the price buys ("1.5 L", "500 g"); empty or nil: what the name says, if anything.
    public var quantity: String?

    public init(
        displayName: String? = nil, width: String? = nil, height: String? = nil, originalPrice: String? = nil,
        price: String? = nil, promotion: String? = nil, validFrom: String? = nil, validUntil: String? = nil,
        quantity: String? = nil
    ) {
        self.quantity = quantity
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
    /// Given by the manager; nil: read from the name where it states one.
    public var quantity: Quantity? = nil
}

/// The rules for a special; the server, the kit and the CLI all use them. Fields are named as the
/// API spells them (`display_name`, `original_price`, `price`, `width`, `height`, `promotion`,
/// `validFrom`, `validUntil`).
public enum SpecialValidation {
    public static let maxNameLength = 120
    public static let maxPromotionLength = 80
    /// Specials a store shows at most (and so the length of a whole order).
    public static let maxSpecials = 500

    /// Every field at fault is named, not just the first. A date and time without a zone (a form's
    /// `2026-11-22T08:00`) is the store's local time, in `timeZone`.
    public static func special(
        _ draft: SpecialDraft, canvasUnit: Int, timeZone: TimeZone = .gmt
    ) throws(ValidationFailure) -> CheckedSpecial {
        var errors: [FieldError] = []
        let name = HumanText.check(
            draft.displayName, field: "display_name", what: "A name", max: maxNameLength, &errors)
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
        let promoted = draft.promotion.map {
            HumanText.check(
                $0, field: "promotion", what: "A promotion", max: maxPromotionLength, required: false, &errors)
        }
        let promotion = promoted?.isEmpty == false ? promoted : nil
        let from = date("validFrom", draft.validFrom, timeZone, &errors)
        let until = date("validUntil", draft.validUntil, timeZone, &errors)
        let typed = draft.quantity.map {
            HumanText.check($0, field: "quantity", what: "A quantity", max: 40, required: false, &errors)
        }
        var quantity: Quantity?
        if let typed, !typed.isEmpty {
            quantity = Quantity(parsing: typed)
            if quantity == nil {
                errors.append(
                    .init(field: "quantity", message: "Write the quantity as 1.5 L, 500 g or 6 x 330 ml."))
            }
        }
        if let from, let until, until <= from {
            errors.append(.init(field: "validUntil", message: "validUntil must be after validFrom."))
        }
        guard errors.isEmpty, let width, let height, let original, let price else { throw ValidationFailure(errors) }
        return CheckedSpecial(
            displayName: name, width: width, height: height, originalPrice: original, price: price,
            promotion: promotion, validFrom: from, validUntil: until, quantity: quantity)
    }

    /// Store settings: a canvas of 1 to 64 units, a three-letter currency code, a time zone such as Europe/Paris.
    public static func settings(
        canvasUnit: Int?, currency: String?, timeZone: String? = nil
    ) throws(ValidationFailure) -> SpecialsSettings {
        var errors: [FieldError] = []
        let unit = canvasUnit ?? 16
        if !(1...64).contains(unit) {
            errors.append(.init(field: "canvasUnit", message: "canvasUnit \(unit) is not from 1 to 64."))
        }
        let code = (currency ?? "USD").trimmingCharacters(in: .whitespaces)
        if !Currency.isValidCode(code) {
            errors.append(.init(field: "currency", message: "currency \(code) is not a three-letter code."))
        }
        let zone = (timeZone ?? "UTC").trimmingCharacters(in: .whitespaces)
        if TimeZone(identifier: zone) == nil {
            errors.append(
                .init(field: "timeZone", message: "timeZone \(zone) is not a time zone such as Europe/Paris."))
        }
        guard errors.isEmpty else { throw ValidationFailure(errors) }
        return SpecialsSettings(canvasUnit: unit, currency: code.uppercased(), timeZone: zone)
    }

    /// Settings as a form sends them, every field text: a canvas that is not a whole number is named too.
    public static func settings(form: [String: String]) throws(ValidationFailure) -> SpecialsSettings {
        let unitText = (form["canvasUnit"] ?? "").trimmingCharacters(in: .whitespaces)
        guard let unit = Int(unitText) else {
            var errors = [FieldError(field: "canvasUnit", message: "canvasUnit \(unitText) is not a whole number.")]
            do {
                _ = try settings(canvasUnit: 16, currency: form["currency"], timeZone: form["timeZone"])
            } catch {
                errors += error.errors
            }
            throw ValidationFailure(errors)
        }
        return try settings(canvasUnit: unit, currency: form["currency"], timeZone: form["timeZone"])
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

    /// ISO 8601 with a zone (`2026-11-22T08:00:00Z`), or a form's local `2026-11-22T08:00` in the store's zone.
    private static func date(
        _ field: String, _ raw: String?, _ zone: TimeZone, _ errors: inout [FieldError]
    ) -> Date? {
        let text = (raw ?? "").trimmingCharacters(in: .whitespaces)
        guard !text.isEmpty else { return nil }
        if let date = parseDate(text, in: zone) {
            if AcceptedDates.contains(date) { return date }
            errors.append(.init(field: field, message: "\(field) \(text): \(AcceptedDates.message)"))
            return nil
        }
        errors.append(.init(field: field, message: "\(field) \(text) is not a date and time (2026-11-22T08:00)."))
        return nil
    }

    /// ISO 8601 with a zone or an offset; without one (`2026-11-22T08:00`, `2026-11-22T08:00:30`), the local
    /// time in `zone` (in a daylight-saving gap, the time the clocks were moved to).
    public static func parseDate(_ text: String, in zone: TimeZone = .gmt) -> Date? {
        if let date = try? Date(text, strategy: .iso8601) { return date }
        let halves = text.split(separator: "T", omittingEmptySubsequences: false)
        guard halves.count == 2 else { return nil }
        let day = halves[0].split(separator: "-", omittingEmptySubsequences: false)
        let time = halves[1].split(separator: ":", omittingEmptySubsequences: false)
        let digits = { (part: Substring, count: Int) -> Int? in
            part.count == count && part.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) ? Int(part) : nil
        }
        guard day.count == 3, (2...3).contains(time.count), let year = digits(day[0], 4),
            let month = digits(day[1], 2), let date = digits(day[2], 2), let hour = digits(time[0], 2),
            let minute = digits(time[1], 2)
        else { return nil }
        let second = time.count == 3 ? digits(time[2], 2) : 0
        guard let second else { return nil }
        // The fields are checked on a clock without daylight saving; then read in the store's zone.
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = .gmt
        let components = DateComponents(
            year: year, month: month, day: date, hour: hour, minute: minute, second: second)
        guard components.isValidDate(in: utc) else { return nil }
        var calendar = utc
        calendar.timeZone = zone
        return calendar.date(from: components)
    }

    /// A date as a form's `datetime-local` field shows it: `2026-11-22T08:00`, the local time in `zone`.
    public static func localInput(_ date: Date, in zone: TimeZone) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        let two = { (value: Int?) in String(format: "%02d", value ?? 0) }
        let seconds = parts.second.map { $0 == 0 ? "" : ":" + two($0) } ?? ""
        return "\(String(format: "%04d", parts.year ?? 0))-\(two(parts.month))-\(two(parts.day))T"
            + "\(two(parts.hour)):\(two(parts.minute))\(seconds)"
    }
}
