import Foundation
import Logging
import QuadCore
import QuadPlatform
import SQLKit

/// Mail for a loan falling due: two days before, on its day, and once overdue (`LoanStanding`, as the notifications
/// page shows it), each stage once per loan. The stage is recorded (`loan_reminders`) in the transaction that queues
/// its message, under the book's lock, so two instances never both send it and a return never crosses it. A stage
/// missed while Quad was down is not sent late: only where the loan stands now. A returned loan's reminder that has not
/// gone yet is withdrawn in the return's transaction (`closeLoan`), so nobody is reminded of a book they brought back.
extension LibraryStore {
    static let remindersMigration = Migration(
        id: 302, name: "library loan reminders mailed",
        statements: [
            "CREATE TABLE loan_reminders (loan_id BIGINT NOT NULL, stage TEXT NOT NULL, PRIMARY KEY (loan_id, stage))"
        ])

    /// What a book's loan reminders are queued about: at most one loan of a book is open, and the one before's
    /// reminders were withdrawn when it closed.
    static func about(_ bookId: Int) -> String { "book-loan:\(bookId)" }

    /// A loan whose standing now was not mailed yet.
    struct DueLoan: Codable, Sendable {
        let loanId: Int
        let bookId: Int
        let username: String
        let title: String
        let dueAt: Date
        let stage: MailKind
    }

    /// The open loans of people with an account whose stage now (due soon, today, overdue) has no reminder yet.
    func unreminded(now: Date, clock: CampusClock) async throws -> [DueLoan] {
        // Nothing due beyond `soonDays` and a day (a time zone's offset) stands anywhere but "on loan".
        let horizon = Self.text(now.addingTimeInterval(Double(LoanStanding.soonDays + 1) * 86_400))
        return try await database.read { sql in
            let open =
                "l.returned_at IS NULL AND l.username IS NOT NULL AND l.due_at <= \(bind: horizon)" as SQLQueryString
            let sent = Set(
                try await sql.raw(
                    "SELECT r.loan_id, r.stage FROM loan_reminders r JOIN book_loans l ON l.id = r.loan_id WHERE \(open)"
                ).all().map {
                    "\(try $0.decode(column: "loan_id", as: Int.self)) \(try $0.decode(column: "stage", as: String.self))"
                })
            return try await sql.raw(
                """
                SELECT l.id, l.book_id, l.username, l.due_at, b.title FROM book_loans l JOIN books b ON b.id = l.book_id
                WHERE \(open) ORDER BY l.due_at, l.id
                """
            ).all().compactMap { row -> DueLoan? in
                let loanId = try row.decode(column: "id", as: Int.self)
                let dueAt = Self.date(try row.decode(column: "due_at", as: String.self))
                guard let stage = MailKind(reminding: LoanStanding(dueAt: dueAt, now: now, clock: clock)),
                    !sent.contains("\(loanId) \(stage.rawValue)")
                else { return nil }
                return DueLoan(
                    loanId: loanId, bookId: try row.decode(column: "book_id", as: Int.self),
                    username: try row.decode(column: "username", as: String.self),
                    title: try row.decode(column: "title", as: String.self), dueAt: dueAt, stage: stage)
            }
        }
    }

    /// Under the book's lock: `loan`'s stage recorded and, unless the loan closed meanwhile or another instance got
    /// there first, its message queued (when the person gets this kind of mail). True when a message was queued.
    func remind(_ loan: DueLoan, clock: CampusClock) async throws -> Bool {
        try await database.transaction { sql in
            _ = try await self.locked(loan.bookId, sql)
            let open = try await sql.raw(
                "SELECT id FROM book_loans WHERE book_id = \(bind: loan.bookId) AND returned_at IS NULL"
            ).first()?.decode(column: "id", as: Int.self)
            guard open == loan.loanId,
                try await sql.raw(
                    """
                    INSERT INTO loan_reminders (loan_id, stage) VALUES (\(bind: loan.loanId), \(bind: loan.stage.rawValue))
                    ON CONFLICT DO NOTHING RETURNING loan_id
                    """
                ).first() != nil
            else { return false }
            return try await self.mail.send(
                loan.stage, to: loan.username, about: Self.about(loan.bookId), letter: Self.loanLetter,
                LoanNote(loan: loan, timeZone: clock.timeZone.identifier), sql)
        }
    }

    /// Inside a change that ends the book's open loan (a return, a checkout to someone else, a removal): its
    /// reminders not yet sent are withdrawn and its record of stages forgotten.
    func forgetReminders(ofBook id: Int, _ sql: any SQLDatabase) async throws {
        try await mail.withdraw(about: Self.about(id), sql)
        try await sql.raw(
            """
            DELETE FROM loan_reminders WHERE loan_id IN (
                SELECT id FROM book_loans WHERE book_id = \(bind: id) AND returned_at IS NULL)
            """
        ).run()
    }

    /// What a reminder is written from: the loan, and the campus's time zone.
    struct LoanNote: Codable, Sendable {
        let loan: DueLoan
        let timeZone: String
    }

    /// A loan's reminder: the title, when it is (or was) due, where their loans are.
    static let loanLetter = LetterKind<LoanNote>("loan") { note, mail in
        letter(note.loan, clock: CampusClock(timeZone: TimeZone(identifier: note.timeZone) ?? .gmt), mail)
    }

    /// The reminder as `mail`'s reader reads it: the title, when it is (or was) due, where their loans are.
    static func letter(_ loan: DueLoan, clock: CampusClock, _ mail: MailContext) -> Letter<NewsLetter> {
        let t = mail.t
        let when = t(
            "time.dayAndTime",
            ["date": t.longDate(clock.date(of: loan.dueAt)), "time": clock.time(of: loan.dueAt).description])
        return .news(
            subject: t("mail.loan.\(loan.stage.rawValue).subject", ["title": loan.title]),
            news: t("mail.loan.\(loan.stage.rawValue).body", ["title": loan.title, "when": when]),
            seeAt: t("mail.loan.seeAt"), path: "/notifications#loans", why: t("mail.loan.why"), template: "mail-loan",
            mail)
    }
}

extension Library {
    /// Every minute: each loan that reached a new stage gets its one reminder (none when Quad sends no mail).
    func remindDueLoans() async {
        guard mail.isOn else { return }
        do {
            let clock = await campusClock()
            var mailed = false
            for loan in try await store.unreminded(now: platform.clock.now, clock: clock) {
                mailed = try await store.remind(loan, clock: clock) || mailed
            }
            if mailed { mail.wake() }
        } catch {
            Logger(label: "quad.library").error("Reminding of loans due failed: \(error)")
        }
    }
}
