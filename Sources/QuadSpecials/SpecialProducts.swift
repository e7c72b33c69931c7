import Foundation
import QuadCore
import QuadPlatform
import SQLKit

/// A product the store puts on special: its name, picture, quantity and regular price, and the special it is on, if
/// any (one at most).
struct Product: Sendable, Equatable {
    var id: String
    var displayName: String
    var image: String?
    var quantity: String?
    var regularCents: Int
    var specialId: String?

    /// `draft` with what the manager left blank taken from this product: its name, regular price and quantity.
    func filling(_ draft: SpecialDraft) -> SpecialDraft {
        let blank = { (text: String?) in text?.trimmingCharacters(in: .whitespaces).isEmpty ?? true }
        var filled = draft
        if blank(draft.displayName) { filled.displayName = displayName }
        if blank(draft.originalPrice) { filled.originalPrice = Money(cents: regularCents).plain }
        if blank(draft.quantity) { filled.quantity = quantity }
        return filled
    }
}

extension SpecialStore {
    private static let selectProduct = """
        SELECT p.id, p.display_name, p.image, p.quantity, p.regular_cents, s.id AS special_id
        FROM specials_products p LEFT JOIN specials s ON s.product_id = p.id
        """

    private static func product(_ row: any SQLRow) throws -> Product {
        Product(
            id: try row.decode(column: "id", as: String.self),
            displayName: try row.decode(column: "display_name", as: String.self),
            image: try row.decode(column: "image", as: String?.self),
            quantity: try row.decode(column: "quantity", as: String?.self),
            regularCents: try row.decode(column: "regular_cents", as: Int.self),
            specialId: try row.decode(column: "special_id", as: String?.self))
    }

    /// Every product, by name.
    func products() async throws -> [Product] {
        try await database.withConnection { sql in
            try await sql.raw("\(unsafeRaw: Self.selectProduct) ORDER BY p.display_name, p.created_at, p.id").all()
                .map(Self.product)
        }
    }

    func product(_ id: String) async throws -> Product? {
        try await database.withConnection { sql in try await self.product(id, sql) }
    }

    /// A special of product `id` as `create` would begin it at `now` (its price the regular one until `drafted`
    /// changes it), with the product's prices over time; nil when there is no such product.
    func newRecord(ofProduct id: String, at now: Date) async throws -> SpecialRecord? {
        try await database.withConnection { sql in
            guard let product = try await self.product(id, sql) else { return nil }
            let record = SpecialRecord(
                id: "", productId: product.id, displayName: product.displayName, width: 1, height: 1,
                originalCents: product.regularCents, priceCents: product.regularCents, image: product.image,
                position: 0, reducedAt: now, quantity: product.quantity)
            return try await Self.withPriceHistory([record], sql).first
        }
    }

    /// Product `id` inside the caller's transaction; its row locked with `forUpdate` on PostgreSQL.
    func product(_ id: String, _ sql: any SQLDatabase, forUpdate: Bool = false) async throws -> Product? {
        let lock = forUpdate && database.engine == .postgres ? " FOR UPDATE OF p" : ""
        return try await sql.raw("\(unsafeRaw: Self.selectProduct) WHERE p.id = \(bind: id)\(unsafeRaw: lock)").first()
            .map(Self.product)
    }
}
