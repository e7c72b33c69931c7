import Foundation
import QuadCore
import QuadPlatform
import SQLKit

/// Shoppers watching a product (from its special's page): when it next goes on special (its price drops below its
/// reference price, on this special or a later one), each is mailed, and their Today lists it first while it lasts.
/// Kept by username key, released with the person.
extension SpecialStore {
    static let watchesMigration = Migration(
        id: 204, name: "products watched by shoppers",
        statements: [
            """
            CREATE TABLE specials_watches (
                special_id TEXT NOT NULL, username_key TEXT NOT NULL, created_at TEXT NOT NULL,
                PRIMARY KEY (special_id, username_key))
            """,
            "CREATE INDEX specials_watches_person ON specials_watches (username_key)",
        ])

    /// Starts or stops `username` watching the product of special `id` (404 when there is no such special).
    func setWatching(_ id: String, username: String, _ watching: Bool) async throws {
        try await database.transaction { sql in
            guard let row = try await sql.raw("SELECT product_id FROM specials WHERE id = \(bind: id)").first() else {
                throw Problem.notFound("There is no special \(id).")
            }
            let product = try row.decode(column: "product_id", as: String.self)
            if watching {
                try await sql.raw(
                    """
                    INSERT INTO specials_watches (product_id, username_key, created_at)
                    VALUES (\(bind: product), \(bind: username.lowercased()), \(bind: Timestamp.string(self.clock.now)))
                    ON CONFLICT (product_id, username_key) DO NOTHING
                    """
                ).run()
            } else {
                try await sql.raw(
                    """
                    DELETE FROM specials_watches
                    WHERE product_id = \(bind: product) AND username_key = \(bind: username.lowercased())
                    """
                ).run()
            }
        }
    }

    /// The products `username` watches.
    func watched(by username: String) async throws -> Set<String> {
        try await database.withConnection { sql in
            Set(
                try await sql.raw(
                    "SELECT product_id FROM specials_watches WHERE username_key = \(bind: username.lowercased())"
                ).all().map { try $0.decode(column: "product_id", as: String.self) })
        }
    }

    /// Whether `username` watches the product of special `id`.
    func isWatching(_ id: String, username: String) async throws -> Bool {
        try await database.withConnection { sql in
            try await sql.raw(
                """
                SELECT 1 AS watching FROM specials_watches w JOIN specials s ON s.product_id = w.product_id
                WHERE s.id = \(bind: id) AND w.username_key = \(bind: username.lowercased())
                """
            ).first() != nil
        }
    }

    /// Who watches product `id`, inside the caller's transaction.
    static func watchers(of id: String, _ sql: any SQLDatabase) async throws -> [String] {
        try await sql.raw("SELECT username_key FROM specials_watches WHERE product_id = \(bind: id)").all().map {
            try $0.decode(column: "username_key", as: String.self)
        }
    }

    /// A person removed: what they watched goes with them.
    static func forgetWatches(of usernameKey: String, _ sql: any SQLDatabase) async throws {
        try await sql.raw("DELETE FROM specials_watches WHERE username_key = \(bind: usernameKey.lowercased())").run()
    }

    /// Inside `create`'s or `update`'s transaction, once saved: the product was not on special and `after` puts it
    /// on, so each watcher is mailed (those with an address and the choice on). True when any message was queued.
    func tellWatchers(wasReduced: Bool, _ after: SpecialRecord, _ sql: any SQLDatabase) async throws -> Bool {
        guard !wasReduced, after.isReduced, mail.isOn else { return false }
        let settings = try await Self.settings(sql)
        let note = SpecialNote(
            id: after.id, name: after.displayName, priceCents: after.priceCents, referenceCents: after.reference.cents,
            currency: settings.currency, validUntil: after.validUntil, timeZone: settings.timeZone)
        var queued = false
        for watcher in try await Self.watchers(of: after.productId, sql) {
            queued =
                try await mail.send(
                    .onSpecial, to: watcher, about: "special-\(after.id)", letter: Self.specialLetter, note, sql)
                || queued
        }
        return queued
    }

    /// What the message is written from, when the courier takes it.
    struct SpecialNote: Codable, Sendable {
        let id: String
        let name: String
        let priceCents: Int
        let referenceCents: Int
        let currency: String
        let validUntil: Date?
        let timeZone: String
    }

    /// "Orange juice 1.5 L is on special: $1.20 (lowest 30-day price $1.50, save $0.30), until Mon 30 Nov."
    static let specialLetter = LetterKind<SpecialNote>("special") { note, mail in
        let t = mail.t
        let currency = Currency(code: note.currency)
        let price = currency.format(Money(cents: note.priceCents), language: t.language)
        let reference = currency.format(Money(cents: note.referenceCents), language: t.language)
        let saving = currency.format(Money(cents: note.referenceCents - note.priceCents), language: t.language)
        var news = t(
            "mail.special.body", ["name": note.name, "price": price, "reference": reference, "saving": saving])
        if let ends = Special.ends(note.validUntil, in: TimeZone(identifier: note.timeZone) ?? .gmt) {
            news += " " + t("mail.special.until", ["date": t.shortDate(ends.lastDay)])
        }
        return .news(
            subject: t("mail.special.subject", ["name": note.name, "price": price]), news: news,
            seeAt: t("mail.special.seeAt"), path: "/specials/\(note.id)", why: t("mail.special.why"),
            template: "mail-special", mail)
    }
}
