import Crypto
import Foundation
import QuadCore
import QuadPlatform
import SQLKit

/// Where Quad may send a person mail, and in which language (table `mail_addresses`, a row per person who gave one).
/// An address a person gives is only used once they follow the link sent to it (`pending` until then, the link's
/// token stored as its SHA-256, for a day). A confirmed address stays in use while a new one waits for its link.
/// Removing the person removes the row.
struct MailAddressStore: Sendable {
    let database: Database
    let clock: any QuadClock

    /// How long a confirmation link works.
    static let linkLifetime: TimeInterval = 86400

    static let migration = Migration(
        id: 504, name: "mail addresses",
        statements: [
            """
            CREATE TABLE mail_addresses (
                username_key TEXT PRIMARY KEY REFERENCES people (username_key) ON DELETE CASCADE,
                address TEXT, language TEXT NOT NULL, pending TEXT, token_hash TEXT UNIQUE, token_expires BIGINT)
            """
        ])

    /// A person's mail settings.
    struct Entry: Equatable, Sendable {
        /// Confirmed: mail goes here.
        var address: String?
        var language: Language
        /// Given by the person, waiting for its link to be followed (while the link works).
        var pending: String?
    }

    func entry(of username: String) async throws -> Entry? {
        try await database.withConnection { sql in try await entry(of: username, sql) }
    }

    func entry(of username: String, _ sql: any SQLDatabase) async throws -> Entry? {
        let now = Int64(clock.now.timeIntervalSince1970)
        guard
            let row = try await sql.raw(
                """
                SELECT address, language, pending, token_expires FROM mail_addresses
                WHERE username_key = \(bind: username.lowercased())
                """
            ).first()
        else { return nil }
        let expires = try row.decode(column: "token_expires", as: Int64?.self)
        let live = expires.map { $0 > now } ?? false
        return Entry(
            address: try row.decode(column: "address", as: String?.self),
            language: Language(code: try row.decode(column: "language", as: String.self)) ?? .fallback,
            pending: live ? try row.decode(column: "pending", as: String?.self) : nil)
    }

    /// Every address in use, by username key (`GET /api/people`).
    func inUse() async throws -> [String: Entry] {
        try await database.withConnection { sql in
            var entries: [String: Entry] = [:]
            for row in try await sql.raw(
                "SELECT username_key, address, language FROM mail_addresses WHERE address IS NOT NULL"
            ).all() {
                entries[try row.decode(column: "username_key", as: String.self)] = Entry(
                    address: try row.decode(column: "address", as: String?.self),
                    language: Language(code: try row.decode(column: "language", as: String.self)) ?? .fallback,
                    pending: nil)
            }
            return entries
        }
    }

    /// The person's language for mail, their address unchanged.
    func setLanguage(_ username: String, _ language: Language) async throws {
        try await database.withConnection { sql in try await setLanguage(username, language, sql) }
    }

    func setLanguage(_ username: String, _ language: Language, _ sql: any SQLDatabase) async throws {
        try await sql.raw(
            """
            INSERT INTO mail_addresses (username_key, language) VALUES
                (\(bind: username.lowercased()), \(bind: language.rawValue))
            ON CONFLICT (username_key) DO UPDATE SET language = excluded.language
            """
        ).run()
    }

    /// The person gives `address`: it waits for its link, whose token this returns (to send, never to store).
    func request(
        _ username: String, address: String, language: Language, _ sql: any SQLDatabase
    ) async throws
        -> String
    {
        let token = SecureRandom.base64url(byteCount: 32)
        let expires = Int64(clock.now.timeIntervalSince1970 + Self.linkLifetime)
        try await sql.raw(
            """
            INSERT INTO mail_addresses (username_key, language, pending, token_hash, token_expires) VALUES
                (\(bind: username.lowercased()), \(bind: language.rawValue), \(bind: address),
                 \(bind: Self.hash(token)), \(bind: expires))
            ON CONFLICT (username_key) DO UPDATE SET language = excluded.language, pending = excluded.pending,
                token_hash = excluded.token_hash, token_expires = excluded.token_expires
            """
        ).run()
        return token
    }

    /// The address a live link confirms, and whose it is (nil: no such link, or it is over).
    func pending(token: String) async throws -> (username: String, address: String)? {
        try await database.withConnection { sql in
            guard
                let row = try await sql.raw(
                    """
                    SELECT p.username, m.pending FROM mail_addresses m JOIN people p ON p.username_key = m.username_key
                    WHERE m.token_hash = \(bind: Self.hash(token))
                        AND m.token_expires > \(bind: Int64(clock.now.timeIntervalSince1970))
                    """
                ).first(),
                let address = try row.decode(column: "pending", as: String?.self)
            else { return nil }
            return (try row.decode(column: "username", as: String.self), address)
        }
    }

    /// Follows a link: its address is the person's from now on. False when there is no such link or it is over (a
    /// link works once).
    func confirm(token: String) async throws -> Bool {
        try await database.withConnection { sql in
            try await sql.raw(
                """
                UPDATE mail_addresses SET address = pending, pending = NULL, token_hash = NULL, token_expires = NULL
                WHERE token_hash = \(bind: Self.hash(token))
                    AND token_expires > \(bind: Int64(clock.now.timeIntervalSince1970))
                RETURNING username_key
                """
            ).first() != nil
        }
    }

    /// An admin gives the person's address (or the organisation's sign-in will): in use at once, since it does not
    /// come from whoever is signed in; a link waiting is dropped. Nil stops mail. `language`: nil keeps theirs.
    func set(_ username: String, address: String?, language: Language?, _ sql: any SQLDatabase) async throws {
        let keep: SQLQueryString = language == nil ? "mail_addresses.language" : "excluded.language"
        try await sql.raw(
            """
            INSERT INTO mail_addresses (username_key, address, language) VALUES
                (\(bind: username.lowercased()), \(bind: address), \(bind: (language ?? .fallback).rawValue))
            ON CONFLICT (username_key) DO UPDATE SET address = excluded.address, language = \(keep),
                pending = NULL, token_hash = NULL, token_expires = NULL
            """
        ).run()
    }

    /// The username of whoever has `address` in use, compared without case.
    func owner(of address: String) async throws -> String? {
        try await database.withConnection { sql in
            try await sql.raw(
                """
                SELECT p.username FROM mail_addresses m JOIN people p ON p.username_key = m.username_key
                WHERE lower(m.address) = \(bind: address.lowercased())
                """
            ).first()?.decode(column: "username", as: String.self)
        }
    }

    /// The person stops mail: their address and any link waiting are forgotten (their language stays).
    func remove(_ username: String) async throws {
        try await database.withConnection { sql in
            try await sql.raw(
                """
                UPDATE mail_addresses SET address = NULL, pending = NULL, token_hash = NULL, token_expires = NULL
                WHERE username_key = \(bind: username.lowercased())
                """
            ).run()
        }
    }

    static func hash(_ token: String) -> String { SHA256.hash(data: Array(token.utf8)).hex }
}
