import Foundation
import QuadCore
import QuadPlatform

/// A shelf of twenty-one real, well-known books in several categories; a few are out (to the demo people
/// and to a name typed at the desk) and one is overdue.
enum LibraryDemo {
    static let books: [(title: String, author: String, publisher: String, categories: String, isbn: String)] = [
        ("Running Lean", "Ash Maurya", "O'Reilly", "process, startups", "9781449305178"),
        ("The Lean Startup", "Eric Ries", "Crown Business", "process, startups", "9780307887894"),
        ("The Pragmatic Programmer", "Andrew Hunt, David Thomas", "Addison-Wesley", "programming", "9780201616224"),
        ("Clean Code", "Robert C. Martin", "Prentice Hall", "programming", "9780132350884"),
        (
            "Design Patterns", "Erich Gamma, Richard Helm, Ralph Johnson, John Vlissides", "Addison-Wesley",
            "programming, design", "9780201633610"
        ),
        (
            "Structure and Interpretation of Computer Programs", "Harold Abelson, Gerald Jay Sussman", "MIT Press",
            "programming, computer science", "9780262510875"
        ),
        ("The Mythical Man-Month", "Frederick P. Brooks Jr.", "Addison-Wesley", "process", "9780201835953"),
        ("Refactoring", "Martin Fowler", "Addison-Wesley", "programming", "9780134757599"),
        (
            "The C Programming Language", "Brian W. Kernighan, Dennis M. Ritchie", "Prentice Hall", "programming",
            "9780131103627"
        ),
        (
            "Introduction to Algorithms", "Thomas H. Cormen, Charles E. Leiserson, Ronald L. Rivest, Clifford Stein",
            "MIT Press", "computer science", "9780262033848"
        ),
        ("The Design of Everyday Things", "Don Norman", "Basic Books", "design", "9780465050659"),
        ("Don't Make Me Think", "Steve Krug", "New Riders", "design, web", "9780321965516"),
        ("Thinking, Fast and Slow", "Daniel Kahneman", "Farrar, Straus and Giroux", "psychology", "9780374533557"),
        ("Sapiens", "Yuval Noah Harari", "Harper", "history", "9780062316097"),
        ("A Brief History of Time", "Stephen Hawking", "Bantam", "science", "9780553380163"),
        ("The Selfish Gene", "Richard Dawkins", "Oxford University Press", "science", "9780198788607"),
        ("Gödel, Escher, Bach", "Douglas Hofstadter", "Basic Books", "science, computer science", "9780465026562"),
        ("Nineteen Eighty-Four", "George Orwell", "Signet Classics", "fiction", "9780451524935"),
        ("Pride and Prejudice", "Jane Austen", "Penguin Classics", "fiction", "9780141439518"),
        ("Les Misérables", "Victor Hugo", "Le Livre de Poche", "fiction, français", "9782253096337"),
        ("Le Petit Prince", "Antoine de Saint-Exupéry", "Gallimard", "fiction, français", "9782070612758"),
    ]

    /// Who has what: (title, borrower, username, days ago). More than 14 days ago is overdue.
    static let loans: [(title: String, person: String, username: String?, daysAgo: Double)] = [
        ("Clean Code", "Ada Lovelace", "ada", 3),
        ("Sapiens", "Grace Hopper", "grace", 6),
        ("Running Lean", "Prolific Pablo", nil, 1),
        ("The Mythical Man-Month", "Kier", "kier", 20),
    ]

    static func load(_ library: Library) async throws {
        let now = library.platform.clock.now
        let store = library.store
        for (index, book) in books.enumerated() {
            let fields = try BookValidation.book(
                title: book.title, author: book.author, publisher: book.publisher,
                categories: BookValidation.categories(book.categories), isbn: book.isbn)
            // Added a day apart, the first book longest ago, so "newest" and "oldest" differ.
            let added = now.addingTimeInterval(-Double(books.count - index) * 86_400 - 3600)
            var loan = LoanAction.none
            if let out = loans.first(where: { $0.title == book.title }) {
                loan = .checkOut(
                    person: out.person, username: out.username, at: now.addingTimeInterval(-out.daysAgo * 86_400))
            }
            _ = try await store.create(fields, loan: loan, now: added)
        }
    }
}
