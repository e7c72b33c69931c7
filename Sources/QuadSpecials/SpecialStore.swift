import Foundation
import QuadCore
import QuadPlatform
import SQLKit

/// A special as stored, with its product's name, picture, quantity and prices: amounts in cents, the image a path
/// under `/images/` made absolute when sent.
struct SpecialRecord: Sendable, Equatable {
    var id: String
    /// The product on special: `displayName`, `image`, `quantity`, `originalCents` and `history` are its own.
    var productId: String
    var displayName: String
    var width: Int
    var height: Int
    var originalCents: Int
    var priceCents: Int
    var promotion: String?
    var validFrom: Date?
    var validUntil: Date?
    var image: String?
    var position: Int
    /// When its price was last set: with `validFrom`, when its reduction applies.
    var reducedAt: Date?
    /// How much the price buys, as the manager gave it ("1.5 L"); nil: what the name says.
    var quantity: String?
    /// Its regular price over time (`originalCents` is the one now), and the reduced prices that applied before.
    var history = PriceHistory([])

    /// The price the reduction is announced against: the lowest price applied in the 30 days before it applied
    /// (EU 2019/2161), or the regular price when there is none before.
    var reference: Money {
        guard let start = reductionStart else { return Money(cents: originalCents) }
        return history.prior(before: start) ?? history.price(at: start) ?? Money(cents: originalCents)
    }

    /// When its price applies: the later of when it was set and when the special begins.
    var reductionStart: Date? { [reducedAt, validFrom].compactMap { $0 }.max() }

    /// Its reduced price as it applied from its start until `now` (or until the special ended), if it was below the
    /// regular price and had begun.
    func appliedReduction(until now: Date) -> PriceHistory.Reduction? {
        guard priceCents < originalCents, let start = reductionStart else { return nil }
        let end = min(now, validUntil ?? now)
        return start < end ? .init(from: start, until: end, price: Money(cents: priceCents)) : nil
    }

    /// On special: its price is below the price it is announced against.
    var isReduced: Bool { Money(cents: priceCents) < reference }

    /// This special as it would be with the regular price, the price and the validity typed, saved at `now` (as
    /// `update` saves).
    func drafted(regular: Money, price: Money, validFrom: Date?, validUntil: Date?, at now: Date) -> SpecialRecord {
        var drafted = self
        if regular.cents != originalCents {
            drafted.history = PriceHistory(
                history.changes.filter { $0.from != now } + [(now, regular)], reductions: history.reductions)
            drafted.originalCents = regular.cents
        }
        // The reduced price that applied until now is among the prices the next reduction is compared with (a
        // special ended and started again at the same price is no new reduction).
        if price.cents != priceCents || validFrom != self.validFrom || validUntil != self.validUntil,
            let applied = appliedReduction(until: now)
        {
            drafted.history.record(applied)
        }
        // A new price is a new reduction, and so is a special brought back (not on a moment ago): its reference is
        // worked out from now. A special on and extended keeps its own.
        let wasOn = special(baseURL: "").isValid(at: now)
        if price.cents != priceCents || (!wasOn && (validFrom != self.validFrom || validUntil != self.validUntil)) {
            drafted.reducedAt = now
        }
        drafted.priceCents = price.cents
        drafted.validFrom = validFrom
        drafted.validUntil = validUntil
        return drafted
    }

    /// As the API sends it: `original_price` is the reference.
    func special(baseURL: String) -> Special {
        Special(
            id: id, displayName: displayName, width: width, height: height, imageUrl: baseURL + (image ?? ""),
            originalPrice: reference, price: Money(cents: priceCents), promotion: promotion,
            validFrom: validFrom, validUntil: validUntil, position: position, quantity: quantity, productId: productId)
    }

    /// How much the price buys: the manager's, else what the name states.
    var measured: Quantity? { quantity.flatMap(Quantity.init(parsing:)) ?? Quantity(parsing: displayName) }

    /// The fields as a manager would type them, for merging a change and for the edit form.
    var draft: SpecialDraft {
        SpecialDraft(
            displayName: displayName, width: String(width), height: String(height),
            originalPrice: Money(cents: originalCents).plain, price: Money(cents: priceCents).plain,
            promotion: promotion, validFrom: validFrom.map { $0.formatted(.iso8601) },
            validUntil: validUntil.map { $0.formatted(.iso8601) }, quantity: quantity ?? "")
    }
}

/// Specials, their products and their settings, in tables `specials` (the tiles), `specials_products` (name, picture,
/// quantity, regular price; their prices over time in `specials_regular_prices` and `specials_reduced_prices`) and
/// `specials_settings` (one row). A product is on one special at most; it stays when its special is deleted, with its
/// history and who watches it, for the next special to be announced against.
final class SpecialStore: Sendable {
    let database: Database
    let clock: any QuadClock
    /// Watchers are mailed when what they watch goes on special.
    let mail: PersonMail

    init(database: Database, clock: any QuadClock, mail: PersonMail = .off) {
        self.database = database
        self.clock = clock
        self.mail = mail
    }

    static let migrations = [
        migration, timeZoneMigration, boundariesMigration, regularPricesMigration, watchesMigration, quantityMigration,
        reducedPricesMigration, productsMigration,
    ]

    /// A special refers to a product, which keeps the name, picture, quantity and regular price (the specials there
    /// are become one product each, with the same id); prices and watches are the product's. The table is made
    /// anew, as SQLite cannot drop a column a check names (`price_cents <= original_cents`, now checked by
    /// `SpecialValidation` against the product's regular price).
    static let productsMigration = Migration(
        id: 207, name: "specials' products",
        statements: [
            """
            CREATE TABLE specials_products (
                id TEXT PRIMARY KEY, display_name TEXT NOT NULL, image TEXT, quantity TEXT,
                regular_cents INTEGER NOT NULL CHECK (regular_cents >= 0), created_at TEXT NOT NULL)
            """,
            """
            INSERT INTO specials_products (id, display_name, image, quantity, regular_cents, created_at)
            SELECT id, display_name, image, quantity, original_cents, created_at FROM specials
            """,
            """
            CREATE TABLE specials_tiles (
                id TEXT PRIMARY KEY, product_id TEXT NOT NULL UNIQUE,
                width INTEGER NOT NULL CHECK (width > 0), height INTEGER NOT NULL CHECK (height > 0),
                price_cents INTEGER NOT NULL CHECK (price_cents >= 0),
                promotion TEXT, valid_from TEXT, valid_until TEXT, position INTEGER NOT NULL, created_at TEXT NOT NULL,
                reduced_at TEXT)
            """,
            """
            INSERT INTO specials_tiles (id, product_id, width, height, price_cents, promotion, valid_from, valid_until,
                position, created_at, reduced_at)
            SELECT id, id, width, height, price_cents, promotion, valid_from, valid_until, position, created_at, reduced_at
            FROM specials
            """,
            "DROP TABLE specials",
            "ALTER TABLE specials_tiles RENAME TO specials",
            "CREATE INDEX specials_position ON specials (position)",
            "ALTER TABLE specials_regular_prices RENAME COLUMN special_id TO product_id",
            "ALTER TABLE specials_reduced_prices RENAME COLUMN special_id TO product_id",
            "ALTER TABLE specials_watches RENAME COLUMN special_id TO product_id",
        ])

    /// The reduced prices that applied (from, until), kept when a special's price or validity changes: the lowest
    /// price of the 30 days before a reduction counts them (EU 2019/2161).
    static let reducedPricesMigration = Migration(
        id: 206, name: "specials' reduced prices that applied",
        statements: [
            """
            CREATE TABLE specials_reduced_prices (
                special_id TEXT NOT NULL, from_at TEXT NOT NULL, until_at TEXT NOT NULL,
                cents INTEGER NOT NULL CHECK (cents >= 0), PRIMARY KEY (special_id, from_at))
            """
        ])

    /// How much a special's price buys, when the manager gives it ("1.5 L", as `Quantity` writes it).
    static let quantityMigration = Migration(
        id: 205, name: "specials' quantities", statements: ["ALTER TABLE specials ADD COLUMN quantity TEXT"])

    static let migration = Migration(
        id: 200, name: "specials and their settings",
        statements: [
            """
            CREATE TABLE specials (
                id TEXT PRIMARY KEY, display_name TEXT NOT NULL,
                width INTEGER NOT NULL CHECK (width > 0), height INTEGER NOT NULL CHECK (height > 0),
                original_cents INTEGER NOT NULL CHECK (original_cents >= 0),
                price_cents INTEGER NOT NULL CHECK (price_cents >= 0 AND price_cents <= original_cents),
                promotion TEXT, valid_from TEXT, valid_until TEXT, image TEXT,
                position INTEGER NOT NULL, created_at TEXT NOT NULL)
            """,
            "CREATE INDEX specials_position ON specials (position)",
            """
            CREATE TABLE specials_settings (
                id INTEGER PRIMARY KEY CHECK (id = 1), canvas_unit INTEGER NOT NULL, currency TEXT NOT NULL)
            """,
            "INSERT INTO specials_settings (id, canvas_unit, currency) VALUES (1, 16, 'USD')",
        ])

    /// The store's time zone, in which a manager types and reads validity dates.
    static let timeZoneMigration = Migration(
        id: 201, name: "the store's time zone for specials",
        statements: ["ALTER TABLE specials_settings ADD COLUMN time_zone TEXT NOT NULL DEFAULT 'UTC'"])

    /// The validity boundaries already announced, so that with several instances only one publishes each.
    static let boundariesMigration = Migration(
        id: 202, name: "specials validity boundaries announced",
        statements: ["CREATE TABLE specials_boundaries (at TEXT PRIMARY KEY, claimed_at TEXT NOT NULL)"])

    /// Each special's regular price over time, from which its reference price is worked out; and when its price was
    /// last set. The specials there are start with their price of today, from when they were made.
    static let regularPricesMigration = Migration(
        id: 203, name: "specials' regular prices over time",
        statements: [
            """
            CREATE TABLE specials_regular_prices (
                special_id TEXT NOT NULL, from_at TEXT NOT NULL, cents INTEGER NOT NULL CHECK (cents >= 0),
                PRIMARY KEY (special_id, from_at))
            """,
            """
            INSERT INTO specials_regular_prices (special_id, from_at, cents)
            SELECT id, created_at, original_cents FROM specials
            """,
            "ALTER TABLE specials ADD COLUMN reduced_at TEXT",
            "UPDATE specials SET reduced_at = created_at",
        ])

    /// True for the first caller (of every instance sharing the database) to claim `boundary`: only that one
    /// announces it. Claims older than a day are forgotten.
    func claimBoundary(_ boundary: Date) async throws -> Bool {
        let now = clock.now
        return try await database.transaction { sql in
            let dayAgo = now.addingTimeInterval(-86_400).formatted(.iso8601)
            try await sql.raw("DELETE FROM specials_boundaries WHERE claimed_at < \(bind: dayAgo)").run()
            return try await sql.raw(
                """
                INSERT INTO specials_boundaries (at, claimed_at)
                VALUES (\(bind: boundary.formatted(.iso8601)), \(bind: now.formatted(.iso8601)))
                ON CONFLICT (at) DO NOTHING RETURNING at
                """
            ).first() != nil
        }
    }

    /// A special with its product's fields, as `record` reads it.
    private static let selectRecord = """
        SELECT s.id, s.product_id, p.display_name, s.width, s.height, p.regular_cents, s.price_cents, s.promotion,
            s.valid_from, s.valid_until, p.image, s.position, s.reduced_at, p.quantity
        FROM specials s JOIN specials_products p ON p.id = s.product_id
        """

    private static func record(_ row: any SQLRow) throws -> SpecialRecord {
        SpecialRecord(
            id: try row.decode(column: "id", as: String.self),
            productId: try row.decode(column: "product_id", as: String.self),
            displayName: try row.decode(column: "display_name", as: String.self),
            width: try row.decode(column: "width", as: Int.self),
            height: try row.decode(column: "height", as: Int.self),
            originalCents: try row.decode(column: "regular_cents", as: Int.self),
            priceCents: try row.decode(column: "price_cents", as: Int.self),
            promotion: try row.decode(column: "promotion", as: String?.self),
            validFrom: try row.decode(column: "valid_from", as: String?.self).flatMap(Timestamp.date),
            validUntil: try row.decode(column: "valid_until", as: String?.self).flatMap(Timestamp.date),
            image: try row.decode(column: "image", as: String?.self),
            position: try row.decode(column: "position", as: Int.self),
            reducedAt: try row.decode(column: "reduced_at", as: String?.self).flatMap(Timestamp.date),
            quantity: try row.decode(column: "quantity", as: String?.self))
    }

    /// The price histories of the products of `records` (all, or the one of a single record), set on each.
    static func withPriceHistory(
        _ records: [SpecialRecord], _ sql: any SQLDatabase
    ) async throws -> [SpecialRecord] {
        let only: SQLQueryString =
            records.count == 1 ? " WHERE product_id = \(bind: records[0].productId)" : ""
        var changes: [String: [(from: Date, price: Money)]] = [:]
        for row in try await sql.raw("SELECT product_id, from_at, cents FROM specials_regular_prices\(only)").all() {
            guard let from = Timestamp.date(try row.decode(column: "from_at", as: String.self)) else { continue }
            changes[try row.decode(column: "product_id", as: String.self), default: []].append(
                (from, Money(cents: try row.decode(column: "cents", as: Int.self))))
        }
        var reductions: [String: [PriceHistory.Reduction]] = [:]
        for row in try await sql.raw("SELECT product_id, from_at, until_at, cents FROM specials_reduced_prices\(only)")
            .all()
        {
            guard let from = Timestamp.date(try row.decode(column: "from_at", as: String.self)),
                let until = Timestamp.date(try row.decode(column: "until_at", as: String.self))
            else { continue }
            reductions[try row.decode(column: "product_id", as: String.self), default: []].append(
                .init(from: from, until: until, price: Money(cents: try row.decode(column: "cents", as: Int.self))))
        }
        return records.map { record in
            var record = record
            record.history = PriceHistory(
                changes[record.productId] ?? [], reductions: reductions[record.productId] ?? [])
            return record
        }
    }

    /// A reduced price of product `id` that applied, kept (again, when it went on since it was last kept).
    private static func recordReduction(
        _ id: String, _ reduction: PriceHistory.Reduction, _ sql: any SQLDatabase
    ) async throws {
        try await sql.raw(
            """
            INSERT INTO specials_reduced_prices (product_id, from_at, until_at, cents)
            VALUES (\(bind: id), \(bind: Timestamp.string(reduction.from)), \(bind: Timestamp.string(reduction.until)),
                \(bind: reduction.price.cents))
            ON CONFLICT (product_id, from_at) DO UPDATE SET until_at = excluded.until_at, cents = excluded.cents
            """
        ).run()
    }

    /// Product `id`'s regular price from now on (a manager's change kept as history, for the reference price).
    private static func recordRegularPrice(_ id: String, cents: Int, at now: Date, _ sql: any SQLDatabase) async throws
    {
        try await sql.raw(
            """
            INSERT INTO specials_regular_prices (product_id, from_at, cents)
            VALUES (\(bind: id), \(bind: Timestamp.string(now)), \(bind: cents))
            ON CONFLICT (product_id, from_at) DO UPDATE SET cents = excluded.cents
            """
        ).run()
    }

    /// Every special, in the manager's order.
    func all() async throws -> [SpecialRecord] {
        try await database.withConnection { sql in
            try await Self.all(sql)
        }
    }

    private static func all(_ sql: any SQLDatabase) async throws -> [SpecialRecord] {
        let records = try await sql.raw("\(unsafeRaw: selectRecord) ORDER BY s.position, s.created_at, s.id")
            .all().map(record)
        return try await withPriceHistory(records, sql)
    }

    func find(_ id: String) async throws -> SpecialRecord? {
        try await database.withConnection { sql in
            try await Self.find(id, sql)
        }
    }

    /// Special `id` with its product's prices over time, inside the caller's connection (its rows locked for update
    /// with `forUpdate`, on PostgreSQL).
    private static func find(
        _ id: String, _ sql: any SQLDatabase, forUpdate: Bool = false
    ) async throws
        -> SpecialRecord?
    {
        let lock = forUpdate ? " FOR UPDATE" : ""
        guard
            let record = try await sql.raw(
                "\(unsafeRaw: selectRecord) WHERE s.id = \(bind: id)\(unsafeRaw: lock)"
            ).first().map(record)
        else { return nil }
        return try await withPriceHistory([record], sql).first
    }

    func settings() async throws -> SpecialsSettings {
        try await database.withConnection { sql in try await Self.settings(sql) }
    }

    static func settings(_ sql: any SQLDatabase) async throws -> SpecialsSettings {
        guard
            let row = try await sql.raw("SELECT canvas_unit, currency, time_zone FROM specials_settings WHERE id = 1")
                .first()
        else { return SpecialsSettings() }
        return SpecialsSettings(
            canvasUnit: try row.decode(column: "canvas_unit", as: Int.self),
            currency: try row.decode(column: "currency", as: String.self),
            timeZone: try row.decode(column: "time_zone", as: String.self))
    }

    /// On PostgreSQL, serialises the writes that check specials against the canvas or the order (create, update,
    /// settings, reorder): without it a special could be checked against a canvas another transaction is
    /// shrinking, or two creates take one position. SQLite runs one transaction at a time already.
    private func lockList(_ sql: any SQLDatabase) async throws {
        guard database.engine == .postgres else { return }
        try await sql.raw("SELECT id FROM specials_settings WHERE id = 1 FOR UPDATE").run()
    }

    /// Refuses (422 on `canvasUnit`) a canvas narrower than a special's width or shorter than half its height.
    func setSettings(_ settings: SpecialsSettings) async throws {
        try await database.transaction { sql in
            try await self.lockList(sql)
            let row = try await sql.raw("SELECT MAX(width) AS w, MAX(height) AS h FROM specials").first()
            let widest = try row?.decode(column: "w", as: Int?.self) ?? 0
            let tallest = try row?.decode(column: "h", as: Int?.self) ?? 0
            if widest > settings.canvasUnit || tallest > 2 * settings.canvasUnit {
                throw ValidationFailure(
                    field: "canvasUnit",
                    message:
                        "canvasUnit \(settings.canvasUnit) is too small for the specials (widest \(widest), tallest \(tallest) units)."
                )
            }
            try await sql.raw(
                """
                UPDATE specials_settings SET canvas_unit = \(bind: settings.canvasUnit), currency = \(bind: settings.currency),
                    time_zone = \(bind: settings.timeZone)
                WHERE id = 1
                """
            ).run()
        }
    }

    /// Checks the draft against the canvas and adds it at the end of the order: a new product, or product `productId`
    /// (404 when there is none, 409 when it is on a special already) with the name, quantity, regular price and image
    /// given. Its watchers are told when it goes on special.
    func create(_ draft: SpecialDraft, productId: String? = nil, image: String?) async throws -> SpecialRecord {
        let (saved, mailed) = try await database.transaction { sql in
            try await self.lockList(sql)
            let settings = try await Self.settings(sql)
            let checked = try SpecialValidation.special(
                draft, canvasUnit: settings.canvasUnit, timeZone: settings.zone)
            let row = try await sql.raw("SELECT MAX(position) AS p, COUNT(*) AS n FROM specials").first()
            let last = try row?.decode(column: "p", as: Int?.self)
            // The order is sent whole (`PUT /api/specials/order`): its length is bounded by this.
            guard try row?.decode(column: "n", as: Int.self) ?? 0 < SpecialValidation.maxSpecials else {
                throw Problem(
                    .conflict, type: "too-many-specials", title: "Too many specials",
                    detail: "A store shows at most \(SpecialValidation.maxSpecials) specials; delete one first.")
            }
            let now = self.clock.now
            var product: Product?
            if let productId {
                product = try await self.product(productId, sql, forUpdate: true)
                guard let found = product else { throw Problem.notFound("There is no product \(productId).") }
                if let special = found.specialId {
                    throw Problem(
                        .conflict, type: "product-on-special", title: "Already on special",
                        detail: "\(found.displayName) is on special \(special) already; change that one instead.")
                }
            }
            var record = SpecialRecord(
                id: Self.newId(), productId: product?.id ?? Self.newId(), displayName: checked.displayName,
                width: checked.width, height: checked.height, originalCents: checked.originalPrice.cents,
                priceCents: checked.price.cents, promotion: checked.promotion, validFrom: checked.validFrom,
                validUntil: checked.validUntil, image: image, position: (last ?? -1) + 1,
                reducedAt: now, quantity: checked.quantity?.description)
            if product?.regularCents != record.originalCents {
                try await Self.recordRegularPrice(record.productId, cents: record.originalCents, at: now, sql)
            }
            try await Self.saveProduct(record, new: product == nil, at: now, sql)
            try await sql.raw(
                """
                INSERT INTO specials (id, product_id, width, height, price_cents, promotion, valid_from, valid_until,
                    position, created_at, reduced_at)
                VALUES (\(bind: record.id), \(bind: record.productId), \(bind: record.width), \(bind: record.height),
                    \(bind: record.priceCents), \(bind: record.promotion),
                    \(bind: record.validFrom.map { $0.formatted(.iso8601) }),
                    \(bind: record.validUntil.map { $0.formatted(.iso8601) }), \(bind: record.position),
                    \(bind: Timestamp.string(now)), \(bind: Timestamp.string(now)))
                """
            ).run()
            record = try await Self.withPriceHistory([record], sql).first ?? record
            return (record, try await self.tellWatchers(wasReduced: false, record, sql))
        }
        if mailed { mail.wake() }
        return saved
    }

    /// Writes the product's fields of `record` (a new product with `new`).
    private static func saveProduct(
        _ record: SpecialRecord, new: Bool, at now: Date, _ sql: any SQLDatabase
    )
        async throws
    {
        if new {
            try await sql.raw(
                """
                INSERT INTO specials_products (id, display_name, image, quantity, regular_cents, created_at)
                VALUES (\(bind: record.productId), \(bind: record.displayName), \(bind: record.image),
                    \(bind: record.quantity), \(bind: record.originalCents), \(bind: Timestamp.string(now)))
                """
            ).run()
        } else {
            try await sql.raw(
                """
                UPDATE specials_products SET display_name = \(bind: record.displayName), image = \(bind: record.image),
                    quantity = \(bind: record.quantity), regular_cents = \(bind: record.originalCents)
                WHERE id = \(bind: record.productId)
                """
            ).run()
        }
    }

    /// Applies a change: `change` receives the current fields and returns them changed; the result is checked whole.
    func update(
        _ id: String, image: String? = nil, _ change: @escaping @Sendable (inout SpecialDraft) -> Void
    ) async throws -> SpecialRecord {
        let (saved, mailed) = try await database.transaction { sql in
            try await self.lockList(sql)
            guard let before = try await Self.find(id, sql, forUpdate: self.database.engine == .postgres) else {
                throw Problem.notFound("There is no special \(id).")
            }
            var record = before
            var draft = record.draft
            change(&draft)
            let settings = try await Self.settings(sql)
            let checked = try SpecialValidation.special(
                draft, canvasUnit: settings.canvasUnit, timeZone: settings.zone)
            let now = self.clock.now
            if checked.originalPrice.cents != record.originalCents {
                try await Self.recordRegularPrice(record.productId, cents: checked.originalPrice.cents, at: now, sql)
            }
            // The same prices and reduction as the manager's preview showed (`drafted`).
            record = record.drafted(
                regular: checked.originalPrice, price: checked.price, validFrom: checked.validFrom,
                validUntil: checked.validUntil, at: now)
            for reduction in record.history.reductions where !before.history.reductions.contains(reduction) {
                try await Self.recordReduction(record.productId, reduction, sql)
            }
            record.displayName = checked.displayName
            record.width = checked.width
            record.height = checked.height
            record.promotion = checked.promotion
            record.quantity = checked.quantity?.description
            if let image { record.image = image }
            try await Self.saveProduct(record, new: false, at: now, sql)
            try await sql.raw(
                """
                UPDATE specials SET width = \(bind: record.width), height = \(bind: record.height),
                    price_cents = \(bind: record.priceCents), promotion = \(bind: record.promotion),
                    valid_from = \(bind: record.validFrom.map { $0.formatted(.iso8601) }),
                    valid_until = \(bind: record.validUntil.map { $0.formatted(.iso8601) }),
                    reduced_at = \(bind: record.reducedAt.map(Timestamp.string))
                WHERE id = \(bind: id)
                """
            ).run()
            let saved = try await Self.withPriceHistory([record], sql).first ?? record
            return (saved, try await self.tellWatchers(wasReduced: before.isReduced, saved, sql))
        }
        if mailed { mail.wake() }
        return saved
    }

    func setImage(_ id: String, path: String) async throws -> SpecialRecord {
        try await update(id, image: path) { _ in }
    }

    /// False when there was no such special. Its product stays, with the reduced price it had until now among its
    /// prices (the next special of the product is announced against them) and who watches it.
    func delete(_ id: String) async throws -> Bool {
        try await database.transaction { sql in
            guard let record = try await Self.find(id, sql, forUpdate: self.database.engine == .postgres) else {
                return false
            }
            if let applied = record.appliedReduction(until: self.clock.now) {
                try await Self.recordReduction(record.productId, applied, sql)
            }
            return try await sql.raw("DELETE FROM specials WHERE id = \(bind: id) RETURNING id").first() != nil
        }
    }

    /// Sets the manager's order: `ids` must name every special exactly once.
    func reorder(_ ids: [String]) async throws -> [SpecialRecord] {
        try await database.transaction { sql in
            try await self.lockList(sql)
            guard ids.count <= SpecialValidation.maxSpecials else {
                throw ValidationFailure(field: "ids", message: "ids must name every special exactly once.")
            }
            let current = try await Self.all(sql)
            guard ids.count == current.count, Set(ids) == Set(current.map(\.id)) else {
                throw ValidationFailure(field: "ids", message: "ids must name every special exactly once.")
            }
            for (position, id) in ids.enumerated() {
                try await sql.raw("UPDATE specials SET position = \(bind: position) WHERE id = \(bind: id)").run()
            }
            return try await Self.all(sql)
        }
    }

    /// Moves a special one place earlier (`by: -1`) or later (`by: 1`) in the order; nil when there is no such special.
    func move(_ id: String, by offset: Int) async throws -> [SpecialRecord]? {
        let ids = try await all().map(\.id)
        guard let index = ids.firstIndex(of: id) else { return nil }
        let target = index + offset
        guard ids.indices.contains(target) else { return try await all() }
        var order = ids
        order.swapAt(index, target)
        return try await reorder(order)
    }

    /// 72 random bits, base64url.
    static func newId() -> String {
        SecureRandom.identifier(byteCount: 9)
    }
}
