import Foundation
import QuadCore
import QuadPlatform
import SQLKit

/// What happened to a person's bookings and places in line that they did not do themselves (table `notices`), kept
/// until they dismiss it. Here, beside the lines, because the feature that ends someone's booking or place posts the
/// notice inside its own transaction (Rooms removing a room), and the Waiting feature shows them.
extension WaitingLists {
    /// A person keeps at most this many; posting more drops their oldest (an admin's work cannot grow a table
    /// without bound).
    package static let noticesKept = 50

    package static let noticesMigration = Migration(
        id: 7, name: "notices",
        statements: [
            """
            CREATE TABLE notices (
                id TEXT PRIMARY KEY, owner TEXT NOT NULL, kind TEXT NOT NULL, room TEXT NOT NULL,
                count INTEGER NOT NULL, start_at BIGINT, end_at BIGINT, at TEXT NOT NULL)
            """,
            "CREATE INDEX notices_owner ON notices (owner, at)",
        ])

    /// Inside the caller's transaction: tells `owner` (a username, lowercased) of `kind`. Returns the notice, to
    /// announce once the transaction is committed (`announce(_:)`).
    package func post(
        _ kind: Notice.Kind, room: String, count: Int, start: Date?, end: Date?, to owner: String,
        _ sql: any SQLDatabase
    ) async throws -> (owner: String, notice: Notice) {
        let notice = Notice(
            id: SecureRandom.identifier(byteCount: 16), kind: kind, room: room, count: count, start: start, end: end,
            at: clock.now)
        try await sql.raw(
            """
            INSERT INTO notices (id, owner, kind, room, count, start_at, end_at, at)
            VALUES (\(bind: notice.id), \(bind: owner), \(bind: kind.rawValue), \(bind: room), \(bind: count),
                    \(bind: start.map { Int64($0.timeIntervalSince1970) }),
                    \(bind: end.map { Int64($0.timeIntervalSince1970) }), \(bind: Timestamp.string(notice.at)))
            """
        ).run()
        try await sql.raw(
            """
            DELETE FROM notices WHERE owner = \(bind: owner) AND id NOT IN (
                SELECT id FROM notices WHERE owner = \(bind: owner) ORDER BY at DESC, id DESC
                LIMIT \(bind: Self.noticesKept))
            """
        ).run()
        return (owner, notice)
    }

    /// Tells each owner of their new notice, on their own streams only.
    package func announce(_ posted: [(owner: String, notice: Notice)]) async {
        for (owner, notice) in posted {
            await events.publish(NoticeEvent(id: notice.id, change: .posted), to: owner)
        }
    }

    /// `owner`'s notices, newest first.
    package func notices(of owner: String) async throws -> [Notice] {
        try await database.read { sql in
            try await sql.raw(
                """
                SELECT id, kind, room, count, start_at, end_at, at FROM notices
                WHERE owner = \(bind: owner.lowercased()) ORDER BY at DESC, id DESC
                """
            ).all().compactMap { row in
                guard let kind = Notice.Kind(rawValue: try row.decode(column: "kind", as: String.self)) else {
                    return nil
                }
                func instant(_ column: String) throws -> Date? {
                    try row.decode(column: column, as: Int64?.self).map { Date(timeIntervalSince1970: Double($0)) }
                }
                return Notice(
                    id: try row.decode(column: "id", as: String.self), kind: kind,
                    room: try row.decode(column: "room", as: String.self),
                    count: try row.decode(column: "count", as: Int.self), start: try instant("start_at"),
                    end: try instant("end_at"),
                    at: Timestamp.date(try row.decode(column: "at", as: String.self)) ?? .distantPast)
            }
        }
    }

    /// `person` dismisses one of their notices; 404 when it is not theirs (nobody learns of others').
    package func dismiss(_ id: String, by person: Person) async throws {
        let owner = person.username.lowercased()
        let gone = try await database.transaction { sql in
            try await sql.raw("DELETE FROM notices WHERE id = \(bind: id) AND owner = \(bind: owner) RETURNING id")
                .first() != nil
        }
        guard gone else { throw Problem.notFound("You have no such notice.") }
        await events.publish(NoticeEvent(id: id, change: .dismissed), to: owner)
    }
}
