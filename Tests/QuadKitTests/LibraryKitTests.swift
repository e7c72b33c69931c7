import Foundation
import QuadCore
import QuadTestSupport
import Testing

@testable import QuadKit

/// LibraryStore and `quad library` against a real Quad with the demo shelf.
@Suite("Library in the kit and the command line", .serialized)
struct LibraryKitTests {
    @MainActor
    func makeStore(_ server: LiveServer, as username: String?, offline: URL? = nil) async throws -> LibraryStore {
        var options = QuadClient.Options.forTests
        options.retry = RetryMiddleware(maxAttempts: 3, clock: InstantClock())
        let client = try await server.client(as: username, options: options)
        let session = KitSession(
            client: client, offline: OfflineStore(directory: offline ?? temporaryDirectory()),
            refresh: .init(interval: .seconds(30)))
        return LibraryStore(session: session)
    }

    @Test("LibraryStore: sort, search, add and edit with field messages, checkout once, return, multi-delete")
    @MainActor
    func store() async throws {
        try await LiveServer.with { server in
            let store = try await makeStore(server, as: "ada")
            #expect(await store.refresh())
            let count = store.books.count
            #expect(count > 10)
            let newest = store.visibleBooks
            store.sort = .oldest
            #expect(store.visibleBooks.map(\.id) == newest.map(\.id).reversed())
            #expect(newest.first?.title == "Le Petit Prince")
            store.searchText = "petit PRINCE"
            #expect(store.visibleBooks.map(\.title) == ["Le Petit Prince"])
            store.searchText = "saint-exupery"
            #expect(store.visibleBooks.map(\.title) == ["Le Petit Prince"])
            store.searchText = ""
            store.sort = .newest

            // A refused add names each field and adds nothing.
            #expect(await store.add(BookDraft(title: " ", author: "Someone", isbn: "12345")) == nil)
            #expect(store.message(for: "title") != nil)
            #expect(store.message(for: "isbn") != nil)
            #expect(store.message(for: "author") == nil)
            #expect(await store.refresh() && store.books.count == count)

            let added = try #require(
                await store.add(BookDraft(title: "Dune", author: "Frank Herbert", categories: "fiction, sf")))
            #expect(store.fieldErrors.isEmpty && store.lastError == nil)
            #expect(store.visibleBooks.first?.id == added.id && added.status == .available)

            // Editing changes only the fields given.
            let edited = try #require(await store.edit(added.id, BookDraft(title: "Dune Messiah")))
            #expect(edited.title == "Dune Messiah" && edited.author == "Frank Herbert")
            #expect(await store.edit(added.id, BookDraft(isbn: "9780441172710x")) == nil)
            #expect(store.message(for: "isbn") != nil)
            #expect(store.book(added.id)?.title == "Dune Messiah")

            // Two taps on Check out: one loan.
            async let first = store.checkOut(added.id)
            async let second = store.checkOut(added.id)
            let results = await [first, second]
            #expect(results.compactMap { $0 }.count == 1)
            #expect(store.book(added.id)?.status == .onLoan)
            #expect(store.book(added.id)?.borrower == "Ada Lovelace")
            // A book already out cannot be checked out again: the server's reason, no new loan.
            #expect(await store.checkOut(added.id) == nil && store.lastError != nil)
            #expect(try await store.session.client.book(id: added.id).loans?.count == 1)

            let back = try #require(await store.giveBack(added.id))
            #expect(back.status == .available && back.borrower == nil)

            // The same intent sent twice (a retry after a lost answer) checks out once.
            let key = UUID().uuidString
            let loansBefore = try await store.session.client.book(id: added.id).loans?.count ?? 0
            let once = try await store.session.client.checkOutBook(id: added.id, idempotencyKey: key)
            let twice = try await store.session.client.checkOutBook(id: added.id, idempotencyKey: key)
            #expect(once.status == .onLoan && twice.status == .onLoan)
            #expect(try await store.session.client.book(id: added.id).loans?.count == loansBefore + 1)

            // Multi-delete: all or none.
            let other = try #require(await store.add(BookDraft(title: "Emma", author: "Jane Austen")))
            #expect(await store.delete([added.id, other.id, 99_999]) == nil)
            #expect(await store.refresh() && store.book(other.id) != nil)
            #expect(await store.delete([added.id, other.id])?.sorted() == [added.id, other.id].sorted())
            #expect(store.book(added.id) == nil && store.book(other.id) == nil)
            #expect(await store.refresh() && store.books.count == count)
        }
    }

    @Test(
        "Two editors: the one who loaded the book before the other saved gets 'changed by someone else', not an overwrite"
    )
    @MainActor
    func twoEditors() async throws {
        try await LiveServer.with { server in
            let recorder = Recorder()
            var options = QuadClient.Options.forTests
            options.extraMiddlewares = [recorder]
            let grace = LibraryStore(
                session: KitSession(
                    client: try await server.client(as: "grace", options: options),
                    offline: OfflineStore(directory: temporaryDirectory())))
            let ada = try await makeStore(server, as: "ada")
            // Both have the shelf; each book comes with its ETag.
            #expect(await grace.refresh())
            #expect(await ada.refresh())
            let book = try #require(grace.books.first)
            let seen = try #require(grace.book(book.id)?.etag)
            #expect(ada.book(book.id)?.etag == seen)

            // Ada saves first.
            let first = try #require(await ada.edit(book.id, BookDraft(title: "Ada's title")))
            #expect(first.etag != nil && first.etag != seen)
            #expect(ada.book(book.id)?.etag == first.etag)

            // Grace's edit goes with the ETag she saw: refused, nothing of hers saved, and she is told why.
            #expect(await grace.edit(book.id, BookDraft(title: "Grace's title", publisher: "Grace Press")) == nil)
            let put = try #require(recorder.exchanges.last { $0.operationID == "updateBook" })
            #expect(put.ifMatch == seen && put.status == 412)
            #expect(grace.staleBook == book.id)
            #expect(grace.lastError?.contains("changed by someone else") == true)
            #expect(grace.fieldErrors.isEmpty)
            let onServer = try await grace.session.client.book(id: book.id)
            #expect(onServer.title == "Ada's title" && onServer.publisher == book.publisher)
            // Her shelf was refreshed: she sees Ada's change, and editing again (from it) works.
            #expect(grace.book(book.id)?.title == "Ada's title")
            let again = try #require(await grace.edit(book.id, BookDraft(publisher: "Grace Press")))
            #expect(again.title == "Ada's title" && again.publisher == "Grace Press")
            #expect(grace.staleBook == nil && grace.lastError == nil)
            #expect(recorder.exchanges.last { $0.operationID == "updateBook" }?.ifMatch == first.etag)

            // The client alone: a stale If-Match is a clear error, no If-Match edits unconditionally (as the
            // original clients did).
            do {
                _ = try await ada.session.client.updateBook(id: book.id, BookDraft(title: "Stale"), ifMatch: seen)
                Issue.record("a stale If-Match was accepted")
            } catch let error as KitError {
                #expect(error.isChangedBySomeoneElse)
                #expect(error.description.hasPrefix("book \(book.id) was changed by someone else since you loaded it"))
            }
            #expect(try await ada.session.client.updateBook(id: book.id, BookDraft(title: "Plain")).title == "Plain")
        }
    }

    @Test("An edit whose answer is lost is retried with its If-Match and still succeeds: its own change is no conflict")
    @MainActor
    func editRetry() async throws {
        try await LiveServer.with { server in
            let recorder = Recorder()
            var options = QuadClient.Options.forTests
            options.retry = RetryMiddleware(maxAttempts: 3, clock: InstantClock())
            options.extraMiddlewares = [recorder, LoseAnswers("updateBook")]
            let store = LibraryStore(
                session: KitSession(
                    client: try await server.client(as: "grace", options: options),
                    offline: OfflineStore(directory: temporaryDirectory())))
            #expect(await store.refresh())
            let book = try #require(store.books.first)
            let edited = try #require(
                await store.edit(book.id, BookDraft(title: " Retried  title ", isbn: "0-306-40615-2")))
            #expect(edited.title == "Retried title" && edited.isbn == "0306406152")
            #expect(store.lastError == nil && store.staleBook == nil)
            // The first answer was lost; the retry met that attempt's change (412), and the kit saw its own edit.
            let attempts = recorder.exchanges.filter { $0.operationID == "updateBook" }
            #expect(attempts.map(\.status) == [nil, 412])
            #expect(Set(attempts.map(\.ifMatch)) == [book.etag])
        }
    }

    @Test("A checkout whose answer is lost is retried with the same Idempotency-Key: one loan")
    @MainActor
    func checkoutRetry() async throws {
        try await LiveServer.with { server in
            let recorder = Recorder()
            var options = QuadClient.Options.forTests
            options.retry = RetryMiddleware(maxAttempts: 3, clock: InstantClock())
            options.extraMiddlewares = [recorder, LoseAnswers("checkOutBook")]
            let client = try await server.client(as: "grace", options: options)
            let store = LibraryStore(
                session: KitSession(client: client, offline: OfflineStore(directory: temporaryDirectory())))
            #expect(await store.refresh())
            let book = try #require(store.books.first { $0.status == .available })
            let loans = try await client.book(id: book.id).loans?.count ?? 0
            let result = try #require(await store.checkOut(book.id))
            #expect(result.status == .onLoan && result.borrower == "Grace Hopper")
            let attempts = recorder.exchanges.filter { $0.operationID == "checkOutBook" }
            #expect(attempts.count == 2)
            #expect(attempts.first?.idempotencyKey != nil)
            #expect(Set(attempts.map(\.idempotencyKey)).count == 1)
            #expect(try await client.book(id: book.id).loans?.count == loans + 1)
        }
    }

    @Test("LibraryStore offline: cached shelf at start, isOffline, writes refused and not sent, then recovery")
    @MainActor
    func offline() async throws {
        let folder = temporaryDirectory()
        var server = try await LiveServer.start()
        do {
            let store = try await makeStore(server, as: "ada", offline: folder)
            #expect(await store.refresh())
            let books = store.books
            await server.stop()
            #expect(!(await store.refresh()))
            #expect(store.isOffline && store.books == books && !store.canWrite)
            #expect(await store.add(BookDraft(title: "Offline", author: "Nobody")) == nil)
            #expect(store.lastError?.hasPrefix("You are offline") == true)

            // A new store (an app relaunch) opens with the shelf from disk.
            let relaunched = LibraryStore(
                session: KitSession(
                    client: QuadClient(serverURL: server.url, options: .forTests),
                    offline: OfflineStore(directory: folder)))
            #expect(relaunched.books == books && relaunched.lastUpdated != nil)

            server = try await server.restart()
            #expect(await store.refresh())
            #expect(!store.isOffline && store.canWrite)
            #expect(!store.books.contains { $0.title == "Offline" })
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    @Test("quad library edit: a book someone else changed since you saw it is not overwritten; one clear line")
    func commandLineEditConflict() async throws {
        guard CLI.binary != nil else { return }
        try await LiveServer.with { server in
            let cli = CLI(server: server.url, clock: server.clock)
            _ = try await cli.run(["login", "--username", "ada"], stdin: server.passwords["ada"]! + "\n")
            let add = try await cli.run(["library", "add", "--title", "Emma", "--author", "Jane Austen", "--json"])
            let book = try JSONDecoder().decode(BookRecord.self, from: Data(add.out.utf8))
            _ = try await cli.run(["library", "list"])

            // Grace changes the book from elsewhere.
            let grace = try await server.client(as: "grace")
            _ = try await grace.updateBook(id: book.id, BookDraft(publisher: "John Murray"))

            let refused = try await cli.run(["library", "edit", String(book.id), "--title", "Emma (annotated)"])
            #expect(refused.status == 1 && refused.out.isEmpty)
            #expect(refused.err.hasPrefix("quad: cannot edit book \(book.id): someone else changed it since you last"))
            #expect(refused.err.filter { $0 == "\n" }.count == 1)
            let kept = try await grace.book(id: book.id)
            #expect(kept.title == "Emma" && kept.publisher == "John Murray")

            // Having looked again, the edit goes through and keeps Grace's change.
            #expect(try await cli.run(["library", "show", String(book.id)]).status == 0)
            let saved = try await cli.run(["library", "edit", String(book.id), "--title", "Emma (annotated)"])
            #expect(saved.status == 0 && saved.out == "Saved \"Emma (annotated)\" (book \(book.id)).\n")
            #expect(try await grace.book(id: book.id).publisher == "John Murray")

            // --force saves whatever happened meanwhile.
            _ = try await grace.updateBook(id: book.id, BookDraft(publisher: "Penguin"))
            let forced = try await cli.run(["library", "edit", String(book.id), "--title", "Emma", "--force"])
            #expect(forced.status == 0)
            #expect(try await grace.book(id: book.id).title == "Emma")
        }
    }

    @Test("quad library: aligned table, search, show, add/edit errors in one line, checkout, return, delete")
    func commandLine() async throws {
        guard CLI.binary != nil else { return }
        try await LiveServer.with { server in
            let cli = CLI(server: server.url, clock: server.clock)
            _ = try await cli.run(["login", "--username", "ada"], stdin: server.passwords["ada"]! + "\n")

            let search = try await cli.run(["library", "list", "--search", "clean code"])
            #expect(search.status == 0 && search.err.isEmpty)
            let lines = search.out.split(separator: "\n", omittingEmptySubsequences: false)
            #expect(lines.count == 3 && lines[2].isEmpty)
            #expect(lines[0].hasPrefix("ID  TITLE       AUTHOR            STATUS"))
            #expect(lines[1].contains("  Clean Code  Robert C. Martin  on loan (Ada Lovelace until "))

            // Long authors are cut so the table stays readable.
            let long = try await cli.run(["library", "list", "-q", "design patterns"])
            #expect(long.out.contains("  Design Patterns  Erich Gamma, Richard Helm, Ra…  available\n"))

            let bad = try await cli.run(["library", "add", "--title", "X", "--author", "Y", "--isbn", "123"])
            #expect(bad.status == 1 && bad.out.isEmpty)
            #expect(bad.err.hasPrefix("quad: cannot add the book: isbn: ") && bad.err.filter { $0 == "\n" }.count == 1)

            let add = try await cli.run(["library", "add", "--title", "Dune", "--author", "Frank Herbert", "--json"])
            #expect(add.status == 0)
            let book = try JSONDecoder().decode(BookRecord.self, from: Data(add.out.utf8))
            #expect(book.title == "Dune" && book.status == .available)

            let edit = try await cli.run(["library", "edit", String(book.id), "--publisher", "Chilton"])
            #expect(edit.status == 0 && edit.out == "Saved \"Dune\" (book \(book.id)).\n")
            let checkout = try await cli.run(["library", "checkout", String(book.id)])
            #expect(checkout.status == 0 && checkout.out.hasPrefix("Checked out \"Dune\"; due back 20"))
            let again = try await cli.run(["library", "checkout", String(book.id)])
            #expect(again.status == 1 && again.err.hasPrefix("quad: ") && again.err.filter { $0 == "\n" }.count == 1)

            let show = try await cli.run(["library", "show", String(book.id)])
            #expect(show.status == 0)
            #expect(
                show.out.hasPrefix(
                    "Book \(book.id)\nTitle       Dune\nAuthor      Frank Herbert\nPublisher   Chilton\n"))
            #expect(show.out.contains("\nLoans\nBORROWER      OUT"))
            #expect(show.out.contains("Ada Lovelace  20"))

            let giveBack = try await cli.run(["library", "return", String(book.id)])
            #expect(giveBack.status == 0 && giveBack.out == "Returned \"Dune\".\n")
            let delete = try await cli.run(["library", "delete", String(book.id)])
            #expect(delete.status == 0 && delete.out == "Deleted 1 book.\n")
            let missing = try await cli.run(["library", "show", String(book.id)])
            #expect(missing.status == 1 && missing.err.hasPrefix("quad: ") && missing.err.hasSuffix("\n"))

            // Offline: the cached shelf with its age; writes refuse.
            _ = try await cli.run(["library", "list"])
            await server.stop()
            let offline = try await cli.run(["library", "list", "--sort", "oldest"])
            #expect(offline.status == 0 && isOfflineNote(offline.err, "books"))
            #expect(offline.out.contains("Le Petit Prince"))
            let refused = try await cli.run(["library", "return", "1"])
            #expect(refused.status == 3)
            #expect(refused.err.hasPrefix("quad: offline: cannot return book 1 while "))
        }
    }
}
