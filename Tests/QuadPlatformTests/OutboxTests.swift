import Foundation
import Logging
import QuadCore
import QuadMail
import QuadTestSupport
import SQLKit
import Testing

@testable import QuadPlatform
@testable import QuadServer

/// The outbox against a real SMTP server (aiosmtpd): what a transaction queued goes once it commits and never if it
/// rolls back; a relay that puts a message off gets it again later, one that refuses it is not asked again; and two
/// couriers on one database never send a message twice.
@Suite(.enabled(if: SMTPSink.available, "python3 with aiosmtpd (pip install -r e2e/requirements.txt)"))
struct OutboxTests {
    static func message(_ id: String, to address: String = "ada@example.org") -> MailMessage {
        MailMessage(
            from: MailAddress("quad@campus.example", name: "Quad"), to: MailAddress(address), subject: "Message \(id)",
            text: "This is \(id).", messageID: "<\(id)@campus.example>", date: Date(timeIntervalSince1970: 0))
    }

    static func courier(_ outbox: Outbox, _ sink: SMTPSink) throws -> MailCourier {
        MailCourier(
            outbox: outbox,
            client: SMTPClient(relay: try SMTPRelay(url: "smtp://127.0.0.1:\(sink.port)"), heloName: "campus.example"),
            logger: Logger(label: "test"))
    }

    @Test(arguments: TestDatabase.engines)
    func whatWasQueuedGoesOnceAndWhatWasRefusedStops(engine: Database.Engine) async throws {
        let sink = try SMTPSink(["--refuse", "nobody@example.org", "--defer", "1"])
        defer { sink.stop() }
        try await TestApp.run(engine) { app, _ in
            let outbox = Outbox(database: app.platform.database, clock: app.clock)
            try await app.platform.database.transaction { sql in
                try await outbox.enqueue(Self.message("a"), id: "a", kind: "test", owner: "ada", sql)
                try await outbox.enqueue(Self.message("b"), id: "b", kind: "test", owner: "ada", sql)
                try await outbox.enqueue(
                    Self.message("c", to: "nobody@example.org"), id: "c", kind: "test", owner: "bob", sql)
            }
            // A change that rolled back sends nothing.
            struct RolledBack: Error {}
            await #expect(throws: RolledBack.self) {
                try await app.platform.database.transaction { sql in
                    try await outbox.enqueue(Self.message("x"), id: "x", kind: "test", owner: "ada", sql)
                    throw RolledBack()
                }
            }
            #expect(try await outbox.depth() == 3)

            let courier = try Self.courier(outbox, sink)
            #expect(try await courier.deliverDue() == 3)
            // "a" was put off (451), "b" went, "c" was refused (550).
            #expect(try sink.messages().map { $0["message_id"] as? String } == ["<b@campus.example>"])
            let record = try await outbox.record(of: "ada").sorted { $0.id < $1.id }
            #expect(record.map(\.state) == ["pending", "sent"])
            #expect(try await outbox.record(of: "bob").map(\.state) == ["failed"])
            // Nothing is due until the wait is over; then "a" goes, once.
            #expect(try await courier.deliverDue() == 0)
            app.clock.advance(by: .seconds(61))
            #expect(try await courier.deliverDue() == 1)
            #expect(try await courier.deliverDue() == 0)
            #expect(
                try sink.messages().map { $0["message_id"] as? String } == ["<b@campus.example>", "<a@campus.example>"])
            #expect(try await outbox.depth() == 0)
        }
    }

    /// A message to be written as it goes is queued with the change that causes it, in the same transaction (all of
    /// a transaction's in one statement, just before it commits), or not at all when the change rolls back.
    @Test(arguments: TestDatabase.engines)
    func aMessageWrittenAsItGoesIsQueuedWithItsChangeOrNotAtAll(engine: Database.Engine) async throws {
        try await TestApp.run(engine) { app, _ in
            let outbox = Outbox(database: app.platform.database, clock: app.clock)
            @Sendable func queue(_ owner: String, _ sql: any SQLDatabase) async throws {
                try await outbox.enqueue(letter: "test", input: "{}", kind: "offer", owner: owner, about: nil, sql)
            }
            try await app.platform.database.transaction { sql in
                try await queue("ada", sql)
                try await queue("bob", sql)
                // Not written yet: it waits for the transaction's end.
                let seen = try await sql.raw("SELECT COUNT(*) AS n FROM mail_outbox").first()?.decode(
                    column: "n", as: Int.self)
                #expect(seen == 0)
            }
            #expect(try await outbox.depth() == 2)
            struct RolledBack: Error {}
            await #expect(throws: RolledBack.self) {
                try await app.platform.database.transaction { sql in
                    try await queue("ada", sql)
                    throw RolledBack()
                }
            }
            #expect(try await outbox.depth() == 2)
            // Outside a transaction, it is written at once.
            try await app.platform.database.withConnection { try await queue("cy", $0) }
            #expect(try await outbox.depth() == 3)
            // Nobody's record shows a message until it is written.
            #expect(try await outbox.record(of: "ada").isEmpty)
        }
    }

    @Test(arguments: TestDatabase.engines)
    func twoCouriersNeverSendAMessageTwice(engine: Database.Engine) async throws {
        let sink = try SMTPSink()
        defer { sink.stop() }
        try await TestApp.run(engine) { app, _ in
            let outbox = Outbox(database: app.platform.database, clock: app.clock)
            let ids = (0..<60).map { String(format: "m%02d", $0) }
            try await app.platform.database.transaction { sql in
                for id in ids { try await outbox.enqueue(Self.message(id), id: id, kind: "test", owner: nil, sql) }
            }
            let (first, second) = (try Self.courier(outbox, sink), try Self.courier(outbox, sink))
            async let one: Void = { while try await first.deliverDue(limit: 5) > 0 {} }()
            async let two: Void = { while try await second.deliverDue(limit: 5) > 0 {} }()
            _ = try await (one, two)
            let sent = try sink.messages().compactMap { $0["message_id"] as? String }
            #expect(sent.count == ids.count)
            #expect(Set(sent) == Set(ids.map { "<\($0)@campus.example>" }))
        }
    }

    /// Delivers until nothing is left to claim: how many this courier sent.
    static func drain(_ courier: MailCourier) async throws -> Int {
        var delivered = 0
        while true {
            let claimed = try await courier.deliverDue()
            if claimed == 0 { return delivered }
            delivered += claimed
        }
    }

    /// Two instances, each with its own pool on one PostgreSQL database, deliver a thousand queued messages between
    /// them: every one arrives, none twice (`FOR UPDATE SKIP LOCKED`), and both did some of the work.
    @Test(.enabled(if: TestDatabase.postgresURL != nil, "QUAD_TEST_POSTGRES_URL"))
    func twoInstancesOnOnePostgreSQLDeliverAThousandMessagesOnceEach() async throws {
        let sink = try SMTPSink()
        defer { sink.stop() }
        try await TwoInstances.run { first, second in
            let outboxes = [first, second].map { Outbox(database: $0.platform.database, clock: $0.platform.clock) }
            let ids = (0..<1000).map { String(format: "m%04d", $0) }
            for batch in stride(from: 0, to: ids.count, by: 100) {
                try await first.platform.database.transaction { sql in
                    for id in ids[batch..<batch + 100] {
                        try await outboxes[0].enqueue(Self.message(id), id: id, kind: "test", owner: nil, sql)
                    }
                }
            }
            let couriers = try outboxes.map { try Self.courier($0, sink) }
            async let one = Self.drain(couriers[0])
            async let two = Self.drain(couriers[1])
            let (byFirst, bySecond) = try await (one, two)
            let sent = try sink.messages().compactMap { $0["message_id"] as? String }
            #expect(sent.count == 1000)
            #expect(Set(sent) == Set(ids.map { "<\($0)@campus.example>" }))
            #expect(byFirst + bySecond == 1000)
            #expect(byFirst > 0 && bySecond > 0)
            #expect(try await outboxes[1].depth() == 0)
        }
    }

    @Test func theLogsNeverShowAnAddress() {
        #expect(
            MailCourier.withoutAddresses("RCPT TO: 550 5.1.1 <ada@example.org>: Recipient address rejected")
                == "RCPT TO: 550 5.1.1 <(an address)>: Recipient address rejected")
    }
}
