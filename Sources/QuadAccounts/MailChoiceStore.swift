import Crypto
import Foundation
import QuadCore
import QuadPlatform
import SQLKit

/// What a person has Quad not mail them about (`mail_choices_off`, all on until turned off), and the links in each
/// message that turn its kind off in one click (`mail_unsubscribe`): a random token per message, kept as its SHA-256
/// for 90 days, so nothing in the database opens anyone's settings, and no key is kept to sign links with.
extension MailAddressStore {
    /// How long a message's link to stop its kind of mail works.
    static let unsubscribeLifetime: TimeInterval = 90 * 86400

    static let choicesMigration = Migration(
        id: 505, name: "mail choices",
        statements: [
            """
            CREATE TABLE mail_choices_off (
                username_key TEXT NOT NULL REFERENCES people (username_key) ON DELETE CASCADE,
                choice TEXT NOT NULL, PRIMARY KEY (username_key, choice))
            """,
            """
            CREATE TABLE mail_unsubscribe (
                token_hash TEXT PRIMARY KEY,
                username_key TEXT NOT NULL REFERENCES people (username_key) ON DELETE CASCADE,
                choice TEXT NOT NULL, expires BIGINT NOT NULL)
            """,
            "CREATE INDEX mail_unsubscribe_expires ON mail_unsubscribe (expires)",
        ])

    /// The choices `username` turned off.
    func choicesOff(of username: String) async throws -> Set<MailChoice> {
        try await database.withConnection { sql in
            Set(
                try await sql.raw(
                    "SELECT choice FROM mail_choices_off WHERE username_key = \(bind: username.lowercased())"
                ).all().compactMap { MailChoice(rawValue: try $0.decode(column: "choice", as: String.self)) })
        }
    }

    /// `username` has exactly `off` turned off.
    func setChoicesOff(_ username: String, _ off: Set<MailChoice>) async throws {
        let key = username.lowercased()
        try await database.transaction { sql in
            try await sql.raw("DELETE FROM mail_choices_off WHERE username_key = \(bind: key)").run()
            for choice in off.sorted(by: { $0.rawValue < $1.rawValue }) {
                try await sql.raw(
                    "INSERT INTO mail_choices_off (username_key, choice) VALUES (\(bind: key), \(bind: choice.rawValue))"
                ).run()
            }
        }
    }

    /// Inside the transaction that writes messages: new links' tokens, one per message, each turning its `choice` off
    /// for its `username` (to send, never to store: their hashes are kept); the links over their time are forgotten.
    static func unsubscribeTokens(
        _ wanted: [(owner: String, choice: MailChoice)], now: Date, _ sql: any SQLDatabase
    ) async throws -> [String] {
        guard !wanted.isEmpty else { return [] }
        let tokens = wanted.map { _ in SecureRandom.base64url(byteCount: 32) }
        let seconds = Int64(now.timeIntervalSince1970)
        try await sql.raw("DELETE FROM mail_unsubscribe WHERE expires <= \(bind: seconds)").run()
        let rows = zip(tokens, wanted).map { token, want -> SQLQueryString in
            """
            (\(bind: hash(token)), \(bind: want.owner.lowercased()), \(bind: want.choice.rawValue),
             \(bind: seconds + Int64(unsubscribeLifetime)))
            """
        }
        try await sql.raw(
            "INSERT INTO mail_unsubscribe (token_hash, username_key, choice, expires) VALUES \(rows.joined(separator: ", "))"
        ).run()
        return tokens
    }

    /// Whose choice a live link turns off, and where their mail goes (nil: no such link, or it is over).
    func unsubscribeTarget(token: String) async throws -> (username: String, address: String?, choice: MailChoice)? {
        try await database.withConnection { sql in
            guard
                let row = try await sql.raw(
                    """
                    SELECT u.choice, p.username, m.address FROM mail_unsubscribe u
                    JOIN people p ON p.username_key = u.username_key
                    LEFT JOIN mail_addresses m ON m.username_key = u.username_key
                    WHERE u.token_hash = \(bind: Self.hash(token))
                        AND u.expires > \(bind: Int64(clock.now.timeIntervalSince1970))
                    """
                ).first(),
                let choice = MailChoice(rawValue: try row.decode(column: "choice", as: String.self))
            else { return nil }
            return (
                try row.decode(column: "username", as: String.self),
                try row.decode(column: "address", as: String?.self),
                choice
            )
        }
    }

    /// Follows a link: its choice is off for its person (again, if it was already). Nil when there is no such link
    /// or it is over.
    func unsubscribe(token: String) async throws -> MailChoice? {
        guard let (username, _, choice) = try await unsubscribeTarget(token: token) else { return nil }
        try await database.withConnection { sql in
            try await sql.raw(
                """
                INSERT INTO mail_choices_off (username_key, choice) VALUES
                    (\(bind: username.lowercased()), \(bind: choice.rawValue))
                ON CONFLICT (username_key, choice) DO NOTHING
                """
            ).run()
        }
        return choice
    }
}
