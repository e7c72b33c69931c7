import Foundation

/// The rules for what people type about books; every field at fault is named, not just the first.
public enum BookValidation {
    public static let maxTextLength = 200
    public static let maxCategoryLength = 50
    public static let maxCategories = 20
    public static let maxPersonLength = 100
    /// Books deleted in one request at most: one write transaction stays short for everyone waiting on it.
    public static let maxDeletedAtOnce = 100

    /// A book's fields, checked and tidied: title and author required (1–200 characters), publisher at most
    /// 200, categories split and trimmed, the ISBN's checksum verified and the ISBN normalised.
    public struct Fields: Sendable, Equatable {
        public var title: String
        public var author: String
        public var publisher: String?
        public var categories: [String]
        public var isbn: String?

        public init(title: String, author: String, publisher: String?, categories: [String], isbn: String?) {
            self.title = title
            self.author = author
            self.publisher = publisher
            self.categories = categories
            self.isbn = isbn
        }
    }

    public static func book(
        title: String?, author: String?, publisher: String?, categories: [String], isbn: String?
    ) throws(ValidationFailure) -> Fields {
        var errors: [FieldError] = []
        let title = tidy(title)
        if title.isEmpty {
            errors.append(.init(field: "title", message: "A book needs a title."))
        } else if title.unicodeScalars.count > maxTextLength {
            errors.append(.init(field: "title", message: "A title is at most \(maxTextLength) characters."))
        }
        let author = tidy(author)
        if author.isEmpty {
            errors.append(.init(field: "author", message: "A book needs an author."))
        } else if author.unicodeScalars.count > maxTextLength {
            errors.append(.init(field: "author", message: "An author is at most \(maxTextLength) characters."))
        }
        let publisher = tidy(publisher)
        if publisher.unicodeScalars.count > maxTextLength {
            errors.append(.init(field: "publisher", message: "A publisher is at most \(maxTextLength) characters."))
        }
        var tags: [String] = []
        var seen = Set<String>()
        for category in categories.map({ tidy($0) }) where !category.isEmpty {
            if seen.insert(category.lowercased()).inserted { tags.append(category) }
        }
        if tags.contains(where: { HumanText.fault($0, max: maxCategoryLength) == .invisible }) {
            errors.append(
                .init(
                    field: "categories",
                    message: HumanText.message(.invisible, what: "A category", max: maxCategoryLength)))
        } else if tags.count > maxCategories || tags.contains(where: { $0.unicodeScalars.count > maxCategoryLength }) {
            errors.append(
                .init(
                    field: "categories",
                    message: "At most \(maxCategories) categories of at most \(maxCategoryLength) characters each."))
        }
        var normalised: String?
        if let isbn, !tidy(isbn).isEmpty {
            normalised = ISBN.normalise(isbn)
            if normalised == nil {
                errors.append(
                    .init(field: "isbn", message: "This is not a valid ISBN-10 or ISBN-13 (check the digits)."))
            }
        }
        for (field, value) in [("title", title), ("author", author), ("publisher", publisher)]
        where HumanText.fault(value, max: maxTextLength, required: false) == .invisible {
            errors.append(.init(field: field, message: HumanText.message(.invisible, what: "Text", max: maxTextLength)))
        }
        guard errors.isEmpty else { throw ValidationFailure(errors) }
        return Fields(
            title: title, author: author, publisher: publisher.isEmpty ? nil : publisher, categories: tags,
            isbn: normalised)
    }

    /// The original API's one comma-separated string, as tags: `"process, startups"` → `["process", "startups"]`.
    public static func categories(_ text: String) -> [String] {
        text.split(separator: ",").map { tidy(String($0)) }.filter { !$0.isEmpty }
    }

    /// Who a book is checked out to, as typed: 1 to 100 characters.
    public static func borrower(_ raw: String?, field: String = "lastCheckedOutBy") throws(ValidationFailure) -> String
    {
        guard !tidy(raw).isEmpty else { throw ValidationFailure(field: field, message: "Say who has the book.") }
        return try HumanText.checked(tidy(raw), field: field, what: "A name", max: maxPersonLength)
    }

    /// As `HumanText` keeps it, with runs of spaces made one (titles are often pasted).
    static func tidy(_ raw: String?) -> String {
        let raw = raw ?? ""
        // Far over any field's limit: left as it is, to be refused as too long.
        guard !HumanText.isFarOver(raw, max: maxTextLength) else { return raw }
        return HumanText.tidy(raw.split(separator: " ").joined(separator: " "))
    }
}

/// International Standard Book Numbers: ISBN-10 (mod 11, `X` for ten) and ISBN-13 (mod 10, weights 1 and 3).
public enum ISBN {
    /// The ISBN with spaces, hyphens and an `ISBN` prefix removed, when its check digit is right; else nil.
    /// `0-306-40615-2` → `0306406152`, `978-0-306-40615-7` → `9780306406157`, `080442957x` → `080442957X`.
    public static func normalise(_ raw: String) -> String? {
        var text = raw.uppercased().trimmingCharacters(in: .whitespaces)
        for prefix in ["ISBN-13:", "ISBN-10:", "ISBN13:", "ISBN10:", "ISBN:", "ISBN"] where text.hasPrefix(prefix) {
            text = String(text.dropFirst(prefix.count))
            break
        }
        let compact = text.filter { $0 != "-" && $0 != " " }
        switch compact.count {
        case 10 where isValid10(compact): return compact
        case 13 where isValid13(compact): return compact
        default: return nil
        }
    }

    static func isValid10(_ text: String) -> Bool {
        let characters = Array(text)
        var sum = 0
        for (index, character) in characters.enumerated() {
            let value: Int
            if let digit = character.wholeNumberValue, character.isASCII {
                value = digit
            } else if character == "X", index == 9 {
                value = 10
            } else {
                return false
            }
            sum += (10 - index) * value
        }
        return sum % 11 == 0
    }

    static func isValid13(_ text: String) -> Bool {
        var sum = 0
        for (index, character) in text.enumerated() {
            guard character.isASCII, let digit = character.wholeNumberValue else { return false }
            sum += digit * (index % 2 == 0 ? 1 : 3)
        }
        return sum % 10 == 0
    }
}
