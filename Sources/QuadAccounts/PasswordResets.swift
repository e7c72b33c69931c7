import Crypto
import Foundation
import QuadCore
import QuadPlatform
import SQLKit

/// Links that set a new password, asked for on the sign-in page (`password_resets`): one per person at a time, kept
/// as its token's SHA-256, working once, for an hour. Removing the person removes it.
struct PasswordResets: Sendable {
    let database: Database
    let clock: any QuadClock

    static let lifetime: TimeInterval = 3600

    static let migration = Migration(
        id: 506, name: "password resets",
        statements: [
            """
            CREATE TABLE password_resets (
                username_key TEXT PRIMARY KEY REFERENCES people (username_key) ON DELETE CASCADE,
                token_hash TEXT UNIQUE NOT NULL, expires BIGINT NOT NULL)
            """
        ])

    /// Whose account `who` names (a username, or an address in use, in any case) and where its mail goes; nil when
    /// there is none, it has no address in use, or it signs in with the organisation (Quad keeps no password for
    /// them: one set here would outlive their removal at the provider).
    func account(
        named who: String, _ sql: any SQLDatabase
    ) async throws -> (person: Person, address: String, language: Language)? {
        let key = who.trimmingCharacters(in: .whitespaces).lowercased()
        guard !key.isEmpty,
            let row = try await sql.raw(
                """
                SELECT p.username, p.display_name, p.role, p.student_id, m.address, m.language
                FROM people p JOIN mail_addresses m ON m.username_key = p.username_key
                WHERE m.address IS NOT NULL AND (p.username_key = \(bind: key) OR LOWER(m.address) = \(bind: key))
                    AND p.username_key NOT IN (SELECT username_key FROM organisation_people)
                ORDER BY CASE WHEN p.username_key = \(bind: key) THEN 0 ELSE 1 END LIMIT 1
                """
            ).first()
        else { return nil }
        return (
            try PeopleStore.person(row), try row.decode(column: "address", as: String.self),
            Language(code: try row.decode(column: "language", as: String.self)) ?? .fallback
        )
    }

    /// A new link for `username` (the one before it stops working); its token, to send, never to store.
    func start(for username: String, _ sql: any SQLDatabase) async throws -> String {
        let token = SecureRandom.base64url(byteCount: 32)
        try await sql.raw(
            """
            INSERT INTO password_resets (username_key, token_hash, expires) VALUES
                (\(bind: username.lowercased()), \(bind: MailAddressStore.hash(token)),
                 \(bind: Int64(clock.now.timeIntervalSince1970 + Self.lifetime)))
            ON CONFLICT (username_key) DO UPDATE SET token_hash = excluded.token_hash, expires = excluded.expires
            """
        ).run()
        return token
    }

    /// Whose password a live link sets (nil: no such link, or it is over).
    func username(token: String) async throws -> String? {
        try await database.withConnection { sql in try await username(token: token, sql) }
    }

    func username(token: String, _ sql: any SQLDatabase) async throws -> String? {
        try await sql.raw(
            """
            SELECT p.username FROM password_resets r JOIN people p ON p.username_key = r.username_key
            WHERE r.token_hash = \(bind: MailAddressStore.hash(token))
                AND r.expires > \(bind: Int64(clock.now.timeIntervalSince1970))
            """
        ).first()?.decode(column: "username", as: String.self)
    }

    /// Uses a live link up: true for the one caller that did.
    func use(token: String, _ sql: any SQLDatabase) async throws -> Bool {
        try await sql.raw(
            """
            DELETE FROM password_resets WHERE token_hash = \(bind: MailAddressStore.hash(token))
                AND expires > \(bind: Int64(clock.now.timeIntervalSince1970))
            RETURNING username_key
            """
        ).first() != nil
    }
}
