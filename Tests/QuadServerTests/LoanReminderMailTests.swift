import Foundation
import QuadCore
import QuadTestSupport
import Testing

@testable import QuadAccounts
@testable import QuadLibrary
@testable import QuadPlatform
@testable import QuadServer

/// A loan falling due reaches its borrower by mail (through a real SMTP server, aiosmtpd): two days before, on the
/// day, and once overdue, each once, in their language; never a kind they turned off, never after the book is back.
@Suite(.enabled(if: SMTPSink.available, "python3 with aiosmtpd (pip install -r e2e/requirements.txt)"))
struct LoanReminderMailTests {
    static let campus = CampusClock(timeZone: TestTime.melbourne)
    /// A Monday, 10:00 on the demo campus (Melbourne): a three-day loan is due Thursday at 10:00.
    static let monday = TestTime.next(LocalTime(hour: 10), where: { $0.weekday == 1 })

    /// `days` after Monday, at `time` on the campus's clock.
    static func at(_ days: Int, _ time: LocalTime) -> Date {
        campus.instant(campus.date(of: monday).adding(days: days), time)
    }

    /// Lea, Sam and Kim each borrow a book for three days, Lea's and Kim's mail in English, Sam's in French.
    static func lend(_ app: TestApp) async throws -> [String: Int] {
        let accounts = app.features.accounts
        let library = app.features.library
        var books: [String: Int] = [:]
        for (username, language) in [("lea", Language.english), ("sam", .french), ("kim", .english)] {
            _ = try await app.signedIn(username)
            _ = try await accounts.change(
                username, displayName: nil, role: nil, studentId: nil, password: nil,
                email: "\(username)@example.org", mailLanguage: language)
            var input = BookInput()
            input.title = .value("Dune, \(username)’s copy")
            input.author = .value("Frank Herbert")
            let reader = try #require(try await app.person(username))
            let book = try await library.create(input, by: reader)
            _ = try await library.checkOut(book.id, by: reader, name: nil)
            books[username] = book.id
        }
        return books
    }

    /// What was written for `username`, oldest first: each message's kind.
    static func kinds(_ app: TestApp, _ username: String) async throws -> [String] {
        try await app.platform.outbox.record(of: username).reversed().map(\.kind)
    }

    @Test(arguments: TestDatabase.engines)
    func eachStageIsMailedOnceInTheBorrowersLanguageAndNeverAfterTheReturn(engine: Database.Engine) async throws {
        let sink = try SMTPSink()
        defer { sink.stop() }
        try await TestApp.run(
            engine, at: Self.monday,
            configure: {
                sink.quad(&$0); $0.loadDemoData = true; $0.loanDays = 3
            }
        ) { app, _ in
            let library = app.features.library
            let books = try await Self.lend(app)
            try await app.features.accounts.addresses.setChoicesOff("sam", [.dueSoon])
            func advance(to instant: Date) async throws {
                app.clock.advance(by: .seconds(instant.timeIntervalSince(app.clock.now)))
                // The minute's keeper runs by itself; asked again at once, it finds nothing more to send.
                await library.remindDueLoans()
                await library.remindDueLoans()
                // The courier writes each message as it takes it (or drops it, for a kind its person turned off), and
                // the outbox knows they went before the clock jumps hours on (a claim that old would have lapsed).
                try await eventually("the outbox wrote and sent what was due") {
                    try await app.platform.outbox.depth() == 0
                }
            }

            // Monday: due in three days, nothing yet.
            try await advance(to: Self.at(0, LocalTime(hour: 23, minute: 59)))
            #expect(try await Self.kinds(app, "lea").isEmpty)

            // Tuesday, just after midnight: due in two days. Sam turned that kind off.
            try await advance(to: Self.at(1, LocalTime(hour: 0, minute: 1)))
            #expect(try await Self.kinds(app, "lea") == ["dueSoon"])
            #expect(try await Self.kinds(app, "kim") == ["dueSoon"])
            #expect(try await Self.kinds(app, "sam").isEmpty)
            try await eventually("two reminders reached the relay") { try sink.messages().count == 2 }
            let soon = try #require(try sink.messages().first { $0["rcpt_tos"] as? [String] == ["lea@example.org"] })
            #expect(soon["subject"] as? String == "Due back in two days: Dune, lea’s copy")
            let parts = soon["parts"] as? [[String: Any]] ?? []
            let text = try #require(parts.first { $0["type"] as? String == "text/plain" }?["body"] as? String)
            let html = try #require(parts.first { $0["type"] as? String == "text/html" }?["body"] as? String)
            let due = "Thursday \(Self.campus.date(of: Self.at(3, LocalTime(hour: 10))).day)"
            #expect(text.contains("Dune, lea’s copy is due back at the library on \(due)"))
            #expect(text.contains(", 10:00."))
            #expect(text.contains("https://quad.campus.example/notifications#loans"))
            #expect(html.contains("href=\"https://quad.campus.example/notifications#loans\""))
            let headers = soon["headers"] as? [String: String] ?? [:]
            #expect(headers["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click")

            // Kim brings the book back on Wednesday: nothing more comes to Kim.
            app.clock.advance(by: .seconds(Self.at(2, LocalTime(hour: 12)).timeIntervalSince(app.clock.now)))
            _ = try await library.giveBack(try #require(books["kim"]), by: try #require(try await app.person("kim")))

            // Thursday, the due day: Lea in English, Sam in French.
            try await advance(to: Self.at(3, LocalTime(hour: 0, minute: 1)))
            #expect(try await Self.kinds(app, "lea") == ["dueSoon", "dueToday"])
            #expect(try await Self.kinds(app, "sam") == ["dueToday"])
            #expect(try await Self.kinds(app, "kim") == ["dueSoon"])
            try await eventually("four reminders reached the relay") { try sink.messages().count == 4 }
            let today = try #require(try sink.messages().first { $0["rcpt_tos"] as? [String] == ["sam@example.org"] })
            #expect(today["subject"] as? String == "À rendre aujourd’hui : Dune, sam’s copy")

            // Sam returns it in the morning; at 10:00 Lea's is overdue.
            app.clock.advance(by: .seconds(Self.at(3, LocalTime(hour: 9)).timeIntervalSince(app.clock.now)))
            _ = try await library.giveBack(try #require(books["sam"]), by: try #require(try await app.person("sam")))
            try await advance(to: Self.at(3, LocalTime(hour: 10, minute: 1)))
            try await advance(to: Self.at(4, LocalTime(hour: 10, minute: 1)))
            #expect(try await Self.kinds(app, "lea") == ["dueSoon", "dueToday", "overdue"])
            #expect(try await Self.kinds(app, "sam") == ["dueToday"])
            try await eventually("five reminders reached the relay") { try sink.messages().count == 5 }
            let overdue = try #require(try sink.messages().last)
            #expect(overdue["subject"] as? String == "Overdue: Dune, lea’s copy")
            try await eventually("nothing waits in the outbox") { try await app.platform.outbox.depth() == 0 }
            #expect(try sink.messages().count == 5)
        }
    }

    /// A reminder the relay could not take yet is withdrawn when its book comes back: it never goes, while another
    /// loan's stays queued.
    @Test func aReturnedLoansQueuedReminderIsWithdrawn() async throws {
        // A relay that is down: a sink's port, once it stopped.
        let down = try SMTPSink()
        down.stop()
        try await TestApp.run(
            at: Self.monday,
            configure: {
                down.quad(&$0); $0.loadDemoData = true; $0.loanDays = 3
            }
        ) { app, _ in
            let library = app.features.library
            let books = try await Self.lend(app)
            app.clock.advance(by: .seconds(Self.at(1, LocalTime(hour: 0, minute: 1)).timeIntervalSince(app.clock.now)))
            await library.remindDueLoans()
            // The courier wrote each and tried it once and put it off (a message it holds at the instant of a return still goes).
            try await eventually("both were tried") {
                let kim = try await app.platform.outbox.record(of: "kim").first?.tries
                let lea = try await app.platform.outbox.record(of: "lea").first?.tries
                return kim == 1 && lea == 1
            }

            _ = try await library.giveBack(try #require(books["kim"]), by: try #require(try await app.person("kim")))
            #expect(try await app.platform.outbox.record(of: "kim").isEmpty)
            #expect(try await app.platform.outbox.record(of: "lea").map(\.state) == ["pending"])
            #expect(try await app.platform.outbox.depth() == 2)
        }
    }
}
