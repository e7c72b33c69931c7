import Foundation
import QuadCore
import QuadMail
import SQLKit

/// Mail waiting to go, and the record of what went (table `mail_outbox`). A message is written in the transaction of
/// the change that causes it (so a crash never loses one, nor sends one for a change that rolled back), then handed to
/// the relay by `MailCourier`, on every instance, each message claimed by one at a time.
package struct Outbox: Sendable {
    package let database: Database
    package let clock: any QuadClock

    package init(database: Database, clock: any QuadClock) {
        self.database = database
        self.clock = clock
    }

    /// A claim lasts this long: an instance that stops while sending leaves the message to another after it.
    static let claim: TimeInterval = 300
    /// A message the relay keeps putting off is given up after this long.
    static let giveUpAfter: TimeInterval = 3 * 86400
    /// What was sent is kept this long for the person's record, then forgotten.
    static let kept: TimeInterval = 90 * 86400

    package static let migration = Migration(
        id: 8, name: "mail outbox",
        statements: [
            """
            CREATE TABLE mail_outbox (
                id TEXT PRIMARY KEY, owner TEXT, kind TEXT NOT NULL, recipient TEXT NOT NULL, sender TEXT NOT NULL,
                subject TEXT NOT NULL, message TEXT NOT NULL, created_at TEXT NOT NULL, due_at BIGINT NOT NULL,
                tries INTEGER NOT NULL DEFAULT 0,
                state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'sent', 'failed')),
                claimed_until BIGINT, sent_at TEXT, error TEXT)
            """,
            "CREATE INDEX mail_outbox_due ON mail_outbox (state, due_at)",
            "CREATE INDEX mail_outbox_owner ON mail_outbox (owner, created_at)",
        ])

    /// What a message is about (`about`: "loan:12"), so a message no longer true is withdrawn before it goes.
    package static let aboutMigration = Migration(
        id: 9, name: "mail outbox: what a message is about",
        statements: [
            "ALTER TABLE mail_outbox ADD COLUMN about TEXT",
            "CREATE INDEX mail_outbox_about ON mail_outbox (about) WHERE about IS NOT NULL",
        ])

    /// A message written when the courier takes it (`letter`, a feature's `LetterKind`, from `input`): until then its
    /// recipient, sender, subject and message are empty.
    package static let lettersMigration = Migration(
        id: 10, name: "mail outbox: messages written as they go",
        statements: ["ALTER TABLE mail_outbox ADD COLUMN letter TEXT", "ALTER TABLE mail_outbox ADD COLUMN input TEXT"])

    /// A message's id, also its `Message-ID`'s left part: random, so it says nothing of what it carries.
    package static func newId() -> String { SecureRandom.identifier(byteCount: 16) }

    /// Inside the caller's transaction: `message` is to go (its `messageID` made from `id`). `owner` is the person it
    /// is for, for their record; `kind` what it is about (`offer`, `booked`…); `about` the thing whose change may
    /// withdraw it (`withdraw(about:)`).
    package func enqueue(
        _ message: MailMessage, id: String, kind: String, owner: String?, about: String? = nil,
        _ sql: any SQLDatabase
    ) async throws {
        let now = clock.now
        try await sql.raw(
            """
            INSERT INTO mail_outbox (id, owner, kind, recipient, sender, subject, message, created_at, due_at, about)
            VALUES (\(bind: id), \(bind: owner), \(bind: kind), \(bind: message.to.address),
                    \(bind: message.from.address), \(bind: message.subject),
                    \(bind: String(decoding: message.rendered(), as: UTF8.self)), \(bind: Timestamp.string(now)),
                    \(bind: Int64(now.timeIntervalSince1970)), \(bind: about))
            """
        ).run()
    }

    /// Inside the caller's transaction: a message of `kind` for `owner` is to go, written by the letter named `letter`
    /// from `input` when the courier takes it. In a transaction (`BeforeCommit`), the messages it queues are written
    /// together just before it commits.
    package func enqueue(
        letter: String, input: String, kind: String, owner: String, about: String?, _ sql: any SQLDatabase
    ) async throws {
        let now = clock.now
        let row = Queued(
            id: Self.newId(), owner: owner, kind: kind, letter: letter, input: input, createdAt: Timestamp.string(now),
            dueAt: Int64(now.timeIntervalSince1970), about: about)
        if let transaction = BeforeCommit.current {
            transaction.gather(row, into: "mail_outbox", write: Self.insert)
        } else {
            try await Self.insert([row], sql)
        }
    }

    /// A message to be written as it goes, as queued.
    struct Queued: Sendable {
        let id: String
        let owner: String
        let kind: String
        let letter: String
        let input: String
        let createdAt: String
        let dueAt: Int64
        let about: String?
    }

    /// `rows` in as few statements as the engines' limits on parameters allow.
    @Sendable static func insert(_ rows: [Queued], _ sql: any SQLDatabase) async throws {
        for start in stride(from: 0, to: rows.count, by: 500) {
            let values = rows[start..<min(start + 500, rows.count)].map { row -> SQLQueryString in
                """
                (\(bind: row.id), \(bind: row.owner), \(bind: row.kind), '', '', '', '', \(bind: row.createdAt),
                 \(bind: row.dueAt), \(bind: row.about), \(bind: row.letter), \(bind: row.input))
                """
            }
            try await sql.raw(
                """
                INSERT INTO mail_outbox (id, owner, kind, recipient, sender, subject, message, created_at, due_at, about,
                    letter, input)
                VALUES \(values.joined(separator: ", "))
                """
            ).run()
        }
    }

    /// Inside the caller's transaction: the messages about `about` not yet sent are dropped (a reminder for a loan
    /// just returned). One a courier holds at this instant is on its way to the relay: it stays, and the record shows
    /// what became of it.
    package func withdraw(about: String, _ sql: any SQLDatabase) async throws {
        let now = Int64(clock.now.timeIntervalSince1970)
        try await sql.raw(
            """
            DELETE FROM mail_outbox WHERE about = \(bind: about) AND state = 'pending'
              AND (claimed_until IS NULL OR claimed_until <= \(bind: now))
            """
        ).run()
    }

    /// One message claimed for sending.
    package struct Claimed: Sendable, Equatable {
        package var id: String
        package var sender: String
        package var recipient: String
        /// Empty until it is written (`letter`).
        package var message: [UInt8]
        package var tries: Int
        package var createdAt: Date
        package var owner: String?
        package var kind: String
        /// The letter that writes it from `input`, when it has not been written yet.
        package var letter: String?
        package var input: String?
        /// Set once it is written, for the person's record.
        package var subject = ""
    }

    /// Claims up to `limit` messages due now that nobody holds, for `claim` seconds: on PostgreSQL rows another
    /// instance is claiming are skipped (`SKIP LOCKED`); SQLite has one writer.
    package func claim(limit: Int) async throws -> [Claimed] {
        let now = Int64(clock.now.timeIntervalSince1970)
        let skip = database.engine == .postgres ? " FOR UPDATE SKIP LOCKED" : ""
        return try await database.transaction { sql in
            try await sql.raw(
                """
                UPDATE mail_outbox SET claimed_until = \(bind: now + Int64(Self.claim))
                WHERE id IN (
                    SELECT id FROM mail_outbox
                    WHERE state = 'pending' AND due_at <= \(bind: now)
                      AND (claimed_until IS NULL OR claimed_until <= \(bind: now))
                    ORDER BY due_at, id LIMIT \(bind: limit)\(unsafeRaw: skip))
                RETURNING id, sender, recipient, message, tries, created_at, owner, kind, letter, input
                """
            ).all().map { row in
                let message = try row.decode(column: "message", as: String.self)
                return Claimed(
                    id: try row.decode(column: "id", as: String.self),
                    sender: try row.decode(column: "sender", as: String.self),
                    recipient: try row.decode(column: "recipient", as: String.self),
                    message: Array(message.utf8),
                    tries: try row.decode(column: "tries", as: Int.self),
                    createdAt: Timestamp.date(try row.decode(column: "created_at", as: String.self)) ?? .distantPast,
                    owner: try row.decode(column: "owner", as: String?.self),
                    kind: try row.decode(column: "kind", as: String.self),
                    letter: message.isEmpty ? try row.decode(column: "letter", as: String?.self) : nil,
                    input: message.isEmpty ? try row.decode(column: "input", as: String?.self) : nil)
            }.sorted { $0.id < $1.id }
        }
    }

    /// Claimed messages now written (`written`, with what they say and to whom), or dropped (`dropped`: their person
    /// has no confirmed address, or turned their kind off, by now).
    package func written(_ written: [Claimed], dropped: [String]) async throws {
        guard !written.isEmpty || !dropped.isEmpty else { return }
        try await database.transaction { sql in
            if !dropped.isEmpty {
                try await sql.raw("DELETE FROM mail_outbox WHERE id IN (\(binds: dropped))").run()
            }
            guard !written.isEmpty else { return }
            // One statement for the batch: a CASE per column.
            func each(_ value: (Claimed) -> String) -> SQLQueryString {
                "CASE id "
                    + written.map { "WHEN \(bind: $0.id) THEN \(bind: value($0)) " }.joined(separator: "")
                    + "END"
            }
            let subject: SQLQueryString = each { $0.subject }
            let recipient: SQLQueryString = each { $0.recipient }
            let sender: SQLQueryString = each { $0.sender }
            let message: SQLQueryString = each { String(decoding: $0.message, as: UTF8.self) }
            let query: SQLQueryString =
                "UPDATE mail_outbox SET recipient = " + recipient + ", sender = " + sender + ", subject = " + subject
                + ", message = " + message + ", input = NULL WHERE id IN (\(binds: written.map(\.id)))"
            try await sql.raw(query).run()
        }
    }

    /// The relay took them.
    package func sent(_ ids: [String]) async throws {
        guard !ids.isEmpty else { return }
        try await database.withConnection { sql in
            try await sql.raw(
                """
                UPDATE mail_outbox SET state = 'sent', sent_at = \(bind: Timestamp.string(clock.now)),
                    tries = tries + 1, claimed_until = NULL, error = NULL
                WHERE id IN (\(binds: ids))
                """
            ).run()
        }
    }

    /// The relay put it off (or could not be reached): tried again after a wait that doubles each time, from a
    /// minute to an hour; given up once it has waited `giveUpAfter`.
    package func putOff(_ message: Claimed, because why: String) async throws {
        let now = clock.now
        guard now.timeIntervalSince(message.createdAt) < Self.giveUpAfter else {
            return try await failed(message.id, because: "gave up after three days: \(why)")
        }
        let wait = min(3600, 60 * pow(2, Double(min(message.tries, 6))))
        try await database.withConnection { sql in
            try await sql.raw(
                """
                UPDATE mail_outbox SET tries = tries + 1, claimed_until = NULL, error = \(bind: why),
                    due_at = \(bind: Int64(now.timeIntervalSince1970 + wait))
                WHERE id = \(bind: message.id)
                """
            ).run()
        }
    }

    /// The relay refused it for good.
    package func failed(_ id: String, because why: String) async throws {
        try await database.withConnection { sql in
            try await sql.raw(
                """
                UPDATE mail_outbox SET state = 'failed', tries = tries + 1, claimed_until = NULL, error = \(bind: why)
                WHERE id = \(bind: id)
                """
            ).run()
        }
    }

    /// Forgets what was sent or given up more than `kept` ago.
    package func prune() async throws {
        let before = Timestamp.string(clock.now.addingTimeInterval(-Self.kept))
        try await database.withConnection { sql in
            try await sql.raw("DELETE FROM mail_outbox WHERE state <> 'pending' AND created_at < \(bind: before)")
                .run()
        }
    }

    /// Messages not yet sent (the admin's page says how many).
    /// Messages waiting to go, and given up on (`/metrics`).
    func counts() async throws -> (pending: Int, failed: Int) {
        try await database.read { sql in
            let rows = try await sql.raw("SELECT state, COUNT(*) AS n FROM mail_outbox GROUP BY state").all()
            var counts: [String: Int] = [:]
            for row in rows {
                counts[try row.decode(column: "state", as: String.self)] = try row.decode(column: "n", as: Int.self)
            }
            return (counts["pending"] ?? 0, counts["failed"] ?? 0)
        }
    }

    package func depth() async throws -> Int {
        try await database.read { sql in
            try await sql.raw("SELECT COUNT(*) AS n FROM mail_outbox WHERE state = 'pending'").first()?.decode(
                column: "n", as: Int.self) ?? 0
        }
    }

    /// One line of a person's record: what went to them, or was meant to, and when.
    package struct Sent: Sendable, Equatable {
        package var id: String
        package var kind: String
        package var subject: String
        package var createdAt: Date
        package var state: String
        package var sentAt: Date?
        /// How many times it was handed to the relay.
        package var tries: Int
    }

    /// `owner`'s record, newest first: the messages written for them (one still to be written is not theirs yet: it
    /// may find them without an address).
    package func record(of owner: String) async throws -> [Sent] {
        try await database.read { sql in
            try await sql.raw(
                """
                SELECT id, kind, subject, created_at, state, sent_at, tries FROM mail_outbox
                WHERE owner = \(bind: owner.lowercased()) AND message <> ''
                ORDER BY created_at DESC, id DESC LIMIT 200
                """
            ).all().map { row in
                Sent(
                    id: try row.decode(column: "id", as: String.self),
                    kind: try row.decode(column: "kind", as: String.self),
                    subject: try row.decode(column: "subject", as: String.self),
                    createdAt: Timestamp.date(try row.decode(column: "created_at", as: String.self)) ?? .distantPast,
                    state: try row.decode(column: "state", as: String.self),
                    sentAt: try row.decode(column: "sent_at", as: String?.self).flatMap(Timestamp.date),
                    tries: try row.decode(column: "tries", as: Int.self))
            }
        }
    }
}
