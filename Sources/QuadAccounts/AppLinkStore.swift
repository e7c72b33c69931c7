import Foundation
import QuadCore
import QuadPlatform
import SQLKit

/// Personal app links: the base URL (`/legacy/<key>`) a person gives the original Rooms, Library and Timetable
/// apps, which send no credentials of their own. Requests under it act as that person, with their role at that
/// moment, on the original apps' operations only (`x-quad-app-link` in the contract). The key is 256 random
/// bits, shown once; only its SHA-256 is stored. Revoking a link, or removing the person, ends it at once.
final class AppLinkStore: Sendable {
    let database: Database
    private let clock: any QuadClock
    static let maxPerPerson = 20

    init(database: Database, clock: any QuadClock) {
        self.database = database
        self.clock = clock
    }

    static let migration = Migration(
        id: 502, name: "app links",
        statements: [
            """
            CREATE TABLE app_links (
                id TEXT PRIMARY KEY, key_hash TEXT NOT NULL UNIQUE,
                username_key TEXT NOT NULL REFERENCES people (username_key) ON DELETE CASCADE,
                label TEXT NOT NULL, created_at TEXT NOT NULL)
            """,
            "CREATE INDEX app_links_person ON app_links (username_key)",
        ])

    struct Link: Sendable, Equatable {
        var id: String
        var label: String
        var createdAt: Date
    }

    /// A new link for `username`; the key is returned this once.
    func create(for username: String, label: String) async throws -> (link: Link, key: String) {
        let key = SecureRandom.base64url(byteCount: 32)
        let link = Link(id: SecureRandom.identifier(byteCount: 12), label: label, createdAt: clock.now)
        let owner = username.lowercased()
        try await database.transaction { sql in
            let count =
                try await sql.raw(
                    "SELECT COUNT(*) AS n FROM app_links WHERE username_key = \(bind: owner)"
                ).first()?.decode(column: "n", as: Int.self) ?? 0
            guard count < Self.maxPerPerson else {
                throw Problem.conflict(
                    "too-many-app-links", title: "Too many app links",
                    detail: "A person has at most \(Self.maxPerPerson) app links: revoke one first.")
            }
            try await sql.raw(
                """
                INSERT INTO app_links (id, key_hash, username_key, label, created_at)
                VALUES (\(bind: link.id), \(bind: SessionStore.hash(key)), \(bind: owner), \(bind: label),
                    \(bind: Timestamp.string(link.createdAt)))
                """
            ).run()
        }
        return (link, key)
    }

    func list(for username: String) async throws -> [Link] {
        try await database.withConnection { sql in
            try await sql.raw(
                """
                SELECT id, label, created_at FROM app_links WHERE username_key = \(bind: username.lowercased())
                ORDER BY created_at, id
                """
            ).all().map { row in
                Link(
                    id: try row.decode(column: "id", as: String.self),
                    label: try row.decode(column: "label", as: String.self),
                    createdAt: Timestamp.date(try row.decode(column: "created_at", as: String.self)) ?? .distantPast)
            }
        }
    }

    /// Whether a link of `username`'s with this id was revoked.
    func revoke(_ id: String, of username: String) async throws -> Bool {
        try await database.withConnection { sql in
            try await sql.raw(
                "DELETE FROM app_links WHERE id = \(bind: id) AND username_key = \(bind: username.lowercased()) RETURNING id"
            ).first() != nil
        }
    }

    /// The person a link's key acts as, if the link is live.
    func person(for key: String) async throws -> Person? {
        try await database.read { sql in
            guard
                let row = try await sql.raw(
                    """
                    SELECT p.username, p.display_name, p.role, p.student_id FROM app_links l
                    JOIN people p ON p.username_key = l.username_key
                    WHERE l.key_hash = \(bind: SessionStore.hash(key))
                    """
                ).first()
            else { return nil }
            return try PeopleStore.person(row)
        }
    }
}
