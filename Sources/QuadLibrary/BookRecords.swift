import Foundation
import QuadCore
import QuadPlatform
import SQLKit

/// Books as a CSV file (`RecordSet`): their catalogue, without loans. Each row goes through the validators of
/// `POST /api/books`. A row with an id is that book (added with that id when Quad has none); a row without one is the
/// first book Quad has with the same title, author and ISBN that no other row names, else a new book.
struct BookRecords: RecordSet {
    let library: Library

    let kind = "books"
    let columns = ["id", "title", "author", "publisher", "categories", "isbn"]
    let required = ["title", "author"]

    func rows() async throws -> [[String]] {
        try await library.store.all().map { book in
            [
                String(book.id), book.title, book.author, book.publisher ?? "",
                book.categories.joined(separator: ", "), book.isbn ?? "",
            ]
        }
    }

    struct Row {
        var row: RecordRow
        var id: Int?
        var fields: BookValidation.Fields
    }

    func apply(_ rows: [RecordRow], errors: RowErrors) async throws -> ImportSummary {
        var errors = errors
        var checked: [Row] = []
        var ids: [Int: Int] = [:]
        for row in rows {
            let id = errors.check(row, "id") { () throws -> Int? in
                guard let text = row["id"]?.trimmingCharacters(in: .whitespaces), !text.isEmpty else { return nil }
                guard let id = Int(text), id > 0, id <= Int(Int32.max) else {
                    throw ValidationFailure(
                        field: "id", message: "A book's id is a whole number, or empty for a new one.")
                }
                return id
            }
            let fields = errors.check(row, "") {
                try BookValidation.book(
                    title: row["title"], author: row["author"], publisher: row["publisher"],
                    categories: BookValidation.categories(row["categories"] ?? ""), isbn: row["isbn"])
            }
            guard let id, let fields else { continue }
            if let id, let first = ids.updateValue(row.number, forKey: id) {
                errors.add(row, field: "id", "The book \(id) is on row \(first) too.")
            }
            checked.append(Row(row: row, id: id, fields: fields))
        }
        try errors.throwIfAny()
        return try await library.importBooks(checked)
    }
}

extension Library {
    /// Applies checked rows in one transaction; each book added or changed is announced once it is committed.
    func importBooks(_ rows: [BookRecords.Row]) async throws -> ImportSummary {
        let books = try await store.all()
        var byId = Dictionary(books.map { ($0.id, $0) }) { first, _ in first }
        let now = platform.clock.now
        let store = self.store
        // Who each row is: its id's book, else the first unnamed book alike.
        let named = Set(rows.compactMap(\.id))
        var alike: [String: [Book]] = [:]
        for book in books where !named.contains(book.id) {
            alike[Self.identity(Self.fields(book)), default: []].append(book)
        }
        var targets: [Book?] = []
        for item in rows {
            if let id = item.id {
                targets.append(byId[id])
            } else {
                let key = Self.identity(item.fields)
                targets.append(alike[key]?.first)
                if alike[key]?.isEmpty == false { alike[key]?.removeFirst() }
            }
        }
        let matched = targets
        let (summary, touched) = try await platform.database.transaction { sql in
            var summary = ImportSummary()
            var touched: [(Int, Change.Kind)] = []
            var namedNew = false
            for (item, target) in zip(rows, matched) {
                guard let target else {
                    let id = try await store.insert(item.fields, id: item.id, now: now, sql)
                    namedNew = namedNew || item.id != nil
                    summary.added += 1
                    touched.append((id, .created))
                    continue
                }
                if Self.fields(target) == item.fields {
                    summary.unchanged += 1
                    continue
                }
                try await LibraryStore.write(item.fields, to: target.id, sql)
                summary.changed += 1
                touched.append((target.id, .updated))
            }
            if namedNew { try await store.followNamedIds(sql) }
            return (summary, touched)
        }
        byId = Dictionary(try await store.all().map { ($0.id, $0) }) { first, _ in first }
        for (id, kind) in touched { await changed(byId[id], id: id, kind) }
        return summary
    }

    /// What an import compares of a book: its catalogue fields.
    static func fields(_ book: Book) -> BookValidation.Fields {
        BookValidation.Fields(
            title: book.title, author: book.author, publisher: book.publisher, categories: book.categories,
            isbn: book.isbn)
    }

    /// Two books are alike when their title, author and ISBN are, without case.
    static func identity(_ fields: BookValidation.Fields) -> String {
        [fields.title.lowercased(), fields.author.lowercased(), fields.isbn ?? ""].joined(separator: "\u{1F}")
    }
}
