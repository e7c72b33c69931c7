import ArgumentParser
import Foundation
import QuadCore
import QuadKit

/// `quad library list|show|add|edit|checkout|return|delete`.
struct LibraryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "library",
        abstract: "The library's books: list, show, add, edit, check out, return, wait in line, delete.",
        subcommands: [
            LibraryList.self, LibraryShow.self, LibraryAdd.self, LibraryEdit.self, LibraryCheckout.self,
            LibraryReturn.self, LibraryHold.self, LibraryDelete.self,
        ])
}

/// The fields `add` and `edit` take.
struct BookFields: ParsableArguments {
    @Option(help: "The title.") var title: String?
    @Option(help: "The author.") var author: String?
    @Option(help: "The publisher.") var publisher: String?
    @Option(help: "Categories, comma-separated.") var categories: String?
    @Option(help: "The ISBN-10 or ISBN-13.") var isbn: String?

    var draft: BookDraft {
        BookDraft(title: title, author: author, publisher: publisher, categories: categories, isbn: isbn)
    }
}

extension ClientContext {
    /// Prints a book the server answered with, or its JSON.
    func show(_ book: BookRecord, _ message: String) throws {
        if json {
            try printJSON(book)
        } else {
            print(message + "\n")
        }
    }

    /// The error for a refused library write: the fields at fault in one line.
    func libraryError(_ error: any Error, doing: String) -> CLIError {
        let kit = KitError.from(error)
        if case .invalid = kit { return .failed("cannot \(doing): \(kit.description)") }
        return writeError(kit, doing: doing)
    }

    static let etagsKey = "book-etags"

    /// Each book's ETag as this command line last saw it (`list`, `show` and every write answer), by id.
    func seenETags() -> [Int: String] {
        offline.load([Int: String].self, for: Self.etagsKey)?.value ?? [:]
    }

    /// Keeps the ETags of the books just seen, so a later `edit` sends them as `If-Match`.
    func remember(_ books: [BookRecord]) {
        var etags = seenETags()
        for book in books { etags[book.id] = book.etag }
        try? offline.save(etags, for: Self.etagsKey, at: clock.now)
    }
}

struct LibraryList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "List books, newest first (cached ones when offline).")

    @OptionGroup var options: ClientOptions
    @Option(help: "newest or oldest first.") var sort: String = "newest"
    @Option(name: [.customShort("q"), .long], help: "Only books whose title, author or categories have these words.")
    var search: String?

    func validate() throws {
        guard BookSort(rawValue: sort) != nil else { throw ValidationError("--sort is newest or oldest") }
    }

    func run() async throws {
        try await runClient {
            let context = try ClientContext(options)
            let fetched = try await context.fetchOrCached("books", noun: "books") {
                try await context.client.books().value
            }
            if !fetched.offline { context.remember(fetched.value) }
            let books = BookRecord.listed(
                fetched.value, query: search ?? "", sort: BookSort(rawValue: sort) ?? .newest)
            if context.json {
                struct Output: Encodable {
                    var books: [BookRecord]
                    var offline: Bool
                    var updatedAt: Date?
                }
                try context.printJSON(Output(books: books, offline: fetched.offline, updatedAt: fetched.updatedAt))
                return
            }
            if fetched.offline { context.noteOffline("books", savedAt: fetched.updatedAt) }
            context.print(TerminalText.booksTable(books, style: context.style))
        }
    }
}

struct LibraryShow: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "show", abstract: "Show a book and its loans.")

    @OptionGroup var options: ClientOptions
    @Argument(help: "The book's id.") var id: Int

    func run() async throws {
        try await runClient {
            let context = try ClientContext(options)
            let book: BookRecord
            do {
                book = try await context.client.book(id: id)
                context.remember([book])
                try? context.offline.save(book, for: "book-\(id)", at: context.clock.now)
            } catch {
                // Offline: the book as last shown (with its loans), else as the last list had it.
                let kit = KitError.from(error)
                guard kit.isOffline else { throw kit }
                let cached =
                    context.offline.load(BookRecord.self, for: "book-\(id)").map { ($0.value, $0.savedAt) }
                    ?? context.offline.load([BookRecord].self, for: "books").flatMap { entry in
                        entry.value.first { $0.id == id }.map { ($0, entry.savedAt) }
                    }
                guard let (saved, savedAt) = cached else {
                    throw CLIError.offline(
                        "offline: \(context.serverURL.absoluteString) is unreachable and book \(id) is not cached")
                }
                book = saved
                context.note(
                    "Offline: showing book \(id) as saved \(TerminalText.age(context.clock.now.timeIntervalSince(savedAt))).",
                    .yellow)
            }
            if context.json {
                try context.printJSON(book)
            } else {
                context.print(TerminalText.bookDetail(book, style: context.style))
            }
        }
    }
}

struct LibraryAdd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "add", abstract: "Add a book (signed in).")

    @OptionGroup var options: ClientOptions
    @OptionGroup var fields: BookFields

    func run() async throws {
        try await runClient {
            let context = try ClientContext(options)
            let book: BookRecord
            do { book = try await context.client.addBook(fields.draft) } catch {
                throw context.libraryError(error, doing: "add the book")
            }
            context.remember([book])
            try context.show(book, "Added \"\(book.title)\" as book \(book.id).")
        }
    }
}

struct LibraryEdit: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "edit",
        abstract: "Change a book's fields (only those given).",
        discussion: """
            The book must be as you last saw it (with `list`, `show` or a change made here): when someone else \
            changed it since, nothing is saved and the command says so; `show` it, then edit again.
            """)

    @OptionGroup var options: ClientOptions
    @Argument(help: "The book's id.") var id: Int
    @OptionGroup var fields: BookFields
    @Flag(help: "Save even if someone else changed the book since you last saw it.") var force = false

    func validate() throws {
        if fields.draft.isEmpty { throw ValidationError("name at least one field to change (--title, --author…)") }
    }

    func run() async throws {
        try await runClient {
            let context = try ClientContext(options)
            let book: BookRecord
            do {
                // The ETag last seen here; a book never seen is read first, so the edit applies to what it is now.
                var seen = force ? nil : context.seenETags()[id]
                if !force, seen == nil { seen = try await context.client.book(id: id).etag }
                book = try await context.client.updateBook(id: id, fields.draft, ifMatch: seen)
            } catch let error as KitError where error.isChangedBySomeoneElse {
                throw CLIError.failed(
                    "cannot edit book \(id): someone else changed it since you last loaded it, so nothing was saved; "
                        + "run `quad library show \(id)` to see it, then edit again (or add --force)")
            } catch {
                throw context.libraryError(error, doing: "edit book \(id)")
            }
            context.remember([book])
            try context.show(book, "Saved \"\(book.title)\" (book \(book.id)).")
        }
    }
}

struct LibraryCheckout: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "checkout", abstract: "Check a book out to yourself (signed in).")

    @OptionGroup var options: ClientOptions
    @Argument(help: "The book's id.") var id: Int

    func run() async throws {
        try await runClient {
            let context = try ClientContext(options, signedIn: true)
            let book: BookRecord
            // One key for this intent: retries repeat it, so a lost answer never checks out twice.
            do { book = try await context.client.checkOutBook(id: id, idempotencyKey: UUID().uuidString) } catch {
                throw context.libraryError(error, doing: "check out book \(id)")
            }
            context.remember([book])
            let due = book.dueAt.map { "; due back " + String($0.prefix(10)) } ?? ""
            try context.show(book, "Checked out \"\(book.title)\"\(due).")
        }
    }
}

struct LibraryReturn: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "return", abstract: "Return a book (signed in).")

    @OptionGroup var options: ClientOptions
    @Argument(help: "The book's id.") var id: Int

    func run() async throws {
        try await runClient {
            let context = try ClientContext(options)
            let book: BookRecord
            do { book = try await context.client.returnBook(id: id) } catch {
                throw context.libraryError(error, doing: "return book \(id)")
            }
            context.remember([book])
            try context.show(book, "Returned \"\(book.title)\".")
        }
    }
}

struct LibraryDelete: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete", abstract: "Delete books, all of them or none (signed in).")

    @OptionGroup var options: ClientOptions
    @Argument(help: "The books' ids.") var ids: [Int]

    func validate() throws {
        if ids.isEmpty { throw ValidationError("name at least one book id") }
    }

    func run() async throws {
        try await runClient {
            let context = try ClientContext(options)
            let count: Int
            do { count = try await context.client.deleteBooks(ids: ids).count } catch {
                throw context.libraryError(error, doing: "delete")
            }
            if context.json {
                struct Output: Encodable { var deleted: Int }
                try context.printJSON(Output(deleted: count))
            } else {
                context.print(count == 1 ? "Deleted 1 book.\n" : "Deleted \(count) books.\n")
            }
        }
    }
}
