import Foundation

/// A manager's special as `GET /api/specials` sends it: a superset of the original app's
/// `Product { display_name, height, imageUrl, original_price, price, width }`, so the original clients decode it.
public struct Special: Codable, Sendable, Equatable, Identifiable {
    /// Stable and opaque.
    public var id: String
    public var displayName: String
    /// In canvas units: 1 … canvasUnit.
    public var width: Int
    /// In canvas units: 1 … 2 × canvasUnit.
    public var height: Int
    /// Absolute URL of the product image.
    public var imageUrl: String
    public var originalPrice: Money
    public var price: Money
    /// Optional promotion text: "2 for $4".
    public var promotion: String?
    public var validFrom: Date?
    public var validUntil: Date?
    /// The manager's order: 0 first.
    public var position: Int
    /// How much the price buys, as the manager gave it ("1.5 L"); nil when they did not (the name may say).
    public var quantity: String?
    /// The product it puts on special (its name, picture, quantity and price history are the product's).
    public var productId: String?

    public init(
        id: String, displayName: String, width: Int, height: Int, imageUrl: String, originalPrice: Money,
        price: Money, promotion: String? = nil, validFrom: Date? = nil, validUntil: Date? = nil, position: Int = 0,
        quantity: String? = nil, productId: String? = nil
    ) {
        self.quantity = quantity
        self.productId = productId
        self.id = id
        self.displayName = displayName
        self.width = width
        self.height = height
        self.imageUrl = imageUrl
        self.originalPrice = originalPrice
        self.price = price
        self.promotion = promotion
        self.validFrom = validFrom
        self.validUntil = validUntil
        self.position = position
    }

    enum CodingKeys: String, CodingKey {
        case id, width, height, imageUrl, price, promotion, validFrom, validUntil, position, quantity
        case displayName = "display_name"
        case originalPrice = "original_price"
        case productId = "product_id"
    }

    public var prices: PriceComparison { PriceComparison(price: price, originalPrice: originalPrice) }

    /// Shown at `date`: from `validFrom` (inclusive) until `validUntil` (exclusive).
    public func isValid(at date: Date) -> Bool {
        (validFrom.map { $0 <= date } ?? true) && (validUntil.map { date < $0 } ?? true)
    }

    /// When it ends, as a shopper reads it in the store's time zone: the last day it holds (`validUntil` is exclusive,
    /// so a special ending at midnight holds through the day before), and the time it ends unless that is midnight.
    public func ends(in zone: TimeZone) -> (lastDay: LocalDate, at: LocalTime?)? { Self.ends(validUntil, in: zone) }

    public static func ends(_ validUntil: Date?, in zone: TimeZone) -> (lastDay: LocalDate, at: LocalTime?)? {
        guard let validUntil else { return nil }
        let clock = CampusClock(timeZone: zone)
        let time = clock.time(of: validUntil)
        if time == LocalTime(hour: 0) { return (clock.date(of: validUntil).adding(days: -1), nil) }
        return (clock.date(of: validUntil), time)
    }

    /// The first moment after `date` when this special appears or disappears.
    public func nextBoundary(after date: Date) -> Date? {
        [validFrom, validUntil].compactMap { $0 }.filter { $0 > date }.min()
    }
}

/// `GET /api/specials`: the original payload's shape.
public struct SpecialsList: Codable, Sendable, Equatable {
    public var canvasUnit: Int
    public var currency: String
    public var managerSpecials: [Special]

    public init(canvasUnit: Int, currency: String, managerSpecials: [Special]) {
        self.canvasUnit = canvasUnit
        self.currency = currency
        self.managerSpecials = managerSpecials
    }
}

/// The store's settings for specials.
public struct SpecialsSettings: Codable, Sendable, Equatable {
    /// How many canvas units span the phone's width.
    public var canvasUnit: Int
    /// ISO 4217.
    public var currency: String
    /// The store's time zone (`Europe/Paris`): a manager's validity dates are typed and shown in it.
    public var timeZone: String

    public init(canvasUnit: Int = 16, currency: String = "USD", timeZone: String = "UTC") {
        self.canvasUnit = canvasUnit
        self.currency = currency
        self.timeZone = timeZone
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        canvasUnit = try container.decode(Int.self, forKey: .canvasUnit)
        currency = try container.decode(String.self, forKey: .currency)
        timeZone = try container.decodeIfPresent(String.self, forKey: .timeZone) ?? "UTC"
    }

    /// The store's clock; UTC if the stored name is no longer known.
    public var zone: TimeZone { TimeZone(identifier: timeZone) ?? .gmt }
}
