import Foundation
import QuadCore
import QuadKit

extension TerminalText {
    /// The shelf as a table: id, title, author (long ones cut with "…"), status (and who has it, until when).
    static func booksTable(_ books: [BookRecord], style: TerminalStyle = .plain) -> String {
        guard !books.isEmpty else { return "No books match.\n" }
        var table = TextTable(columns: [.init("ID", .right), .init("TITLE"), .init("AUTHOR"), .init("STATUS")])
        for book in books {
            table.add([
                .init(String(book.id), .dim), .init(SpecialsMosaic.fit(book.title, 40)),
                .init(SpecialsMosaic.fit(book.author, 30)), statusCell(book),
            ])
        }
        return table.render(style: style)
    }

    static func statusCell(_ book: BookRecord) -> TextTable.Cell {
        let due = book.dueAt.map { " until " + String($0.prefix(10)) } ?? ""
        let who = book.borrower.map { " (\($0)\(due))" } ?? ""
        switch book.status {
        case .available: return .init("available", .green)
        case .onLoan: return .init("on loan" + who, .yellow)
        case .overdue: return .init("overdue" + who, .red)
        }
    }

    /// One book: its fields, one a line with aligned labels, then its loans.
    static func bookDetail(_ book: BookRecord, style: TerminalStyle = .plain) -> String {
        let status = statusCell(book)
        let fields: [(String, String)] = [
            ("Title", book.title), ("Author", book.author), ("Publisher", book.publisher),
            ("Categories", book.categories), ("ISBN", book.isbn ?? ""), ("Added", book.addedAt),
            ("Status", style.paint(status.text, status.colour)),
        ]
        let width = fields.map { $0.0.count }.max() ?? 0
        var text = "Book \(book.id)\n"
        for (label, value) in fields where !value.isEmpty {
            // The status is painted already (and so made visible); every other value is the server's text.
            let shown = label == "Status" ? value : TerminalText.visible(value)
            text += label.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + shown + "\n"
        }
        if let loans = book.loans, !loans.isEmpty {
            var table = TextTable(columns: [.init("BORROWER"), .init("OUT"), .init("DUE"), .init("RETURNED")])
            for loan in loans {
                table.add([
                    .init(loan.person), .init(loan.checkedOutAt), .init(loan.dueAt),
                    .init(loan.returnedAt ?? "not yet", loan.returnedAt == nil ? .yellow : nil),
                ])
            }
            text += "\nLoans\n" + table.render(style: style)
        }
        return text
    }
}
