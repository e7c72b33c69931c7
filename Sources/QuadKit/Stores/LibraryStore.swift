import Foundation
import Observation
import QuadCore

/// The single source of truth for the library screens: the shelf (kept on disk for offline use), sorted
/// newest or oldest first and searched as you type, plus adding, editing (with the server's validation
/// messages per field), checking out (one Idempotency-Key per intent), returning and deleting several at
/// once. Writes are refused offline, never queued.
@MainActor
@Observable
public final class LibraryStore {
    /// Every book, as the server last sent them.
    public private(set) var books: [BookRecord] = []
    public var sort: BookSort = .newest
    /// Words that must all appear in the title, author or categories (case and accents ignored).
    public var searchText = ""
    public private(set) var isOffline = false
    public private(set) var lastUpdated: Date?
    public private(set) var lastError: String?
    /// The messages of the last refused add or edit, by field (`title`, `isbn`…); empty after a success.
    public private(set) var fieldErrors: [FieldError] = []
    /// Books with a checkout or return under way: repeat taps on them are ignored.
    public private(set) var busy: Set<Int> = []
    /// The book whose last edit was refused because someone else had changed it since it was loaded (412).
    public private(set) var staleBook: Int?

    public let session: KitSession
    /// Polling and live updates: the lifecycle every store shares.
    @ObservationIgnored public private(set) var link: LiveLink?
    private var refresher: Refresher? { link?.refresher }
    /// One Idempotency-Key per intent to check a book out, kept until the server gives a definite answer.
    @ObservationIgnored private var intents: [Int: String] = [:]
    @ObservationIgnored private var lastFailure: KitError?

    static let booksKey = "books"

    public init(session: KitSession) {
        self.session = session
        link = LiveLink(session: session) { [weak self] in try await self?.fetch() }
        loadCached()
    }

    // MARK: Reading

    /// The books to show: searched, then in `sort` order (by when added, then by id).
    public var visibleBooks: [BookRecord] { BookRecord.listed(books, query: searchText, sort: sort) }

    public func book(_ id: Int) -> BookRecord? { books.first { $0.id == id } }

    /// The message for one field of the last refused add or edit.
    public func message(for field: String) -> String? { fieldErrors.first { $0.field == field }?.message }

    public var age: TimeInterval? { lastUpdated.map { session.clock.now.timeIntervalSince($0) } }

    /// Whether write buttons should be enabled.
    public var canWrite: Bool { !isOffline }

    // MARK: Lifecycle

    public func loadCached() {
        guard let entry = session.offline?.load([BookRecord].self, for: Self.booksKey) else { return }
        books = entry.value
        lastUpdated = entry.savedAt
    }

    /// A `book` or `reset` event refreshes the shelf.
    public func apply(_ event: ServerEvent) async {
        if event.kind == .book || event.kind == .reset { await refresher?.refreshAfterChange() }
    }

    private func fetch() async throws {
        do {
            let fetched = try await session.client.books(sort: .newest)
            let now = session.clock.now
            books = fetched.value
            // A book out on loan settles any checkout whose answer was lost: the next checkout (after a
            // return) is a new intent, not a replay of that one.
            for book in books where book.status != .available && !busy.contains(book.id) { intents[book.id] = nil }
            lastUpdated = now
            isOffline = false
            lastError = nil
            try? session.offline?.save(fetched.value, for: Self.booksKey, at: now, etag: fetched.etag)
        } catch {
            throw failed(error)
        }
    }

    // MARK: Writing

    /// Adds a book; nil when refused (`fieldErrors` and `lastError` say why).
    @discardableResult
    public func add(_ draft: BookDraft) async -> BookRecord? {
        await write("adding a book") { try await self.session.client.addBook(draft) }
    }

    /// Changes only the fields in `draft`; nil when refused. The book's ETag as last seen (from the list or the
    /// last answer about it) goes as `If-Match`, so an edit never silently overwrites someone else's: when the
    /// book changed meanwhile, nothing is saved, `staleBook` names it, `lastError` says it was changed by someone
    /// else, and the shelf is refreshed to show their change (editing again then works from it).
    @discardableResult
    public func edit(_ id: Int, _ draft: BookDraft) async -> BookRecord? {
        staleBook = nil
        let seen = book(id)?.etag
        let edited = await write("editing a book") {
            try await self.session.client.updateBook(id: id, draft, ifMatch: seen)
        }
        if edited == nil, let failure = lastFailure, failure.isChangedBySomeoneElse {
            await refresh()
            staleBook = id
            lastError = failure.description
        }
        return edited
    }

    /// Checks the book out to the signed-in person. A repeat tap while it runs is ignored (nil); a retry
    /// after a lost answer reuses the same Idempotency-Key, so the book is checked out once.
    @discardableResult
    public func checkOut(_ id: Int) async -> BookRecord? {
        guard !busy.contains(id) else { return nil }
        busy.insert(id)
        defer { busy.remove(id) }
        let key = intents[id] ?? UUID().uuidString
        intents[id] = key
        let result = await write("checking out") {
            try await self.session.client.checkOutBook(id: id, idempotencyKey: key)
        }
        // Keep the key only when the answer was lost on the way: the next try is the same intent.
        if !isOffline { intents[id] = nil }
        return result
    }

    @discardableResult
    public func giveBack(_ id: Int) async -> BookRecord? {
        guard !busy.contains(id) else { return nil }
        busy.insert(id)
        defer { busy.remove(id) }
        let result = await write("returning") { try await self.session.client.returnBook(id: id) }
        if result != nil { intents[id] = nil }
        return result
    }

    /// Waits in line for a book on loan; where the person stands (nil when refused: `lastError` says why). It is
    /// held for them when it comes back (`NotificationsStore` hears of it).
    @discardableResult
    public func hold(_ id: Int) async -> WaitingPlaceRecord? {
        guard !isOffline else {
            refuseOffline("waiting in line")
            return nil
        }
        do {
            let place = try await session.client.holdBook(id: id, idempotencyKey: UUID().uuidString)
            lastError = nil
            return place
        } catch {
            _ = failed(error)
            return nil
        }
    }

    /// Deletes all of `ids` or none; the ids deleted, nil when refused.
    @discardableResult
    public func delete(_ ids: Set<Int>) async -> [Int]? {
        guard !ids.isEmpty else { return [] }
        guard !isOffline else {
            refuseOffline("deleting")
            return nil
        }
        do {
            let deleted = try await session.client.deleteBooks(ids: ids.sorted())
            books.removeAll { deleted.contains($0.id) }
            saveBooks()
            lastError = nil
            return deleted
        } catch {
            _ = failed(error)
            return nil
        }
    }

    private func write(_ doing: String, _ body: () async throws -> BookRecord) async -> BookRecord? {
        guard !isOffline else {
            refuseOffline(doing)
            return nil
        }
        do {
            var book = try await body()
            book.loans = nil
            if let index = books.firstIndex(where: { $0.id == book.id }) {
                books[index] = book
            } else {
                books.append(book)
            }
            saveBooks()
            fieldErrors = []
            lastError = nil
            return book
        } catch {
            _ = failed(error)
            return nil
        }
    }

    private func refuseOffline(_ doing: String) {
        lastError =
            KitError.writeRefusedOffline(
                "You are offline: \(doing) needs a connection, and is not queued."
            ).description
    }

    private func failed(_ error: any Error) -> KitError {
        let kit = KitError.from(error)
        lastFailure = kit
        if kit.isOffline { isOffline = true }
        if case .invalid(_, let errors) = kit { fieldErrors = errors } else { fieldErrors = [] }
        lastError = kit.description
        return kit
    }

    private func saveBooks() {
        try? session.offline?.save(books, for: Self.booksKey, at: lastUpdated ?? session.clock.now)
    }
}

extension LibraryStore: LiveStore {}
