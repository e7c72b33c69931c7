import Foundation
import HTTPTypes
import OpenAPIRuntime
import QuadCore
import QuadTestSupport
import Testing

@testable import QuadKit
@testable import quad

@Suite("Retries and backoff")
struct RetryTests {
    /// A `next` that answers from a script of statuses (and counts its calls).
    final class Script: @unchecked Sendable {
        let lock = NSLock()
        var answers: [(Int, String?)]
        var calls = 0
        init(_ answers: [(Int, String?)]) { self.answers = answers }
        func next() throws -> (HTTPResponse, HTTPBody?) {
            let (status, retryAfter) = lock.withLock {
                calls += 1
                return answers.removeFirst()
            }
            if status == 0 { throw URLError(.cannotConnectToHost) }
            var fields = HTTPFields()
            if let retryAfter { fields[.retryAfter] = retryAfter }
            return (HTTPResponse(status: .init(code: status), headerFields: fields), nil)
        }
    }

    func run(
        _ middleware: RetryMiddleware, _ script: Script, method: HTTPRequest.Method = .get, key: String? = nil
    )
        async throws -> Int
    {
        var request = HTTPRequest(method: method, scheme: nil, authority: nil, path: "/api/rooms")
        if let key { request.headerFields[HTTPField.Name("Idempotency-Key")!] = key }
        let (response, _) = try await middleware.intercept(
            request, body: method == .post ? HTTPBody("{}") : nil, baseURL: URL(string: "http://x")!,
            operationID: "op"
        ) { _, _, _ in try script.next() }
        return response.status.code
    }

    @Test("Retry-After is honoured; otherwise waits grow exponentially with full jitter")
    func retryAfterAndBackoff() async throws {
        let instant = InstantClock()
        let retry = RetryMiddleware(
            maxAttempts: 5, backoff: Backoff(base: .seconds(1), cap: .seconds(30)), clock: instant, random: { 0.5 })
        let script = Script([(503, "7"), (0, nil), (429, nil), (0, nil), (200, nil)])
        #expect(try await run(retry, script) == 200)
        #expect(script.calls == 5)
        // 7 s as told, then half (the jitter draw) of 2 s, 4 s and 8 s.
        #expect(instant.sleeps == [.seconds(7), .seconds(1), .seconds(2), .seconds(4)])
    }

    @Test("A POST without an Idempotency-Key is never retried; with one it is")
    func postsNeedAKey() async throws {
        let retry = RetryMiddleware(maxAttempts: 3, clock: InstantClock())
        let unkeyed = Script([(503, nil), (200, nil)])
        #expect(try await run(retry, unkeyed, method: .post) == 503)
        #expect(unkeyed.calls == 1)
        let keyed = Script([(503, nil), (201, nil)])
        #expect(try await run(retry, keyed, method: .post, key: "intent-1") == 201)
        #expect(keyed.calls == 2)
    }

    @Test("Every booking and checkout carries an Idempotency-Key: the caller's intent, else a new one; reads none")
    func idempotencyKeys() async throws {
        let middleware = IdempotencyMiddleware()
        func key(
            _ operationID: String, method: HTTPRequest.Method = .post, given: String? = nil
        ) async throws
            -> String?
        {
            var request = HTTPRequest(method: method, scheme: nil, authority: nil, path: "/x")
            if let given { request.headerFields[HTTPField.Name("Idempotency-Key")!] = given }
            let (response, _) = try await middleware.intercept(
                request, body: nil, baseURL: URL(string: "http://x")!, operationID: operationID
            ) { request, _, _ in
                var fields = HTTPFields()
                if let key = request.headerFields[HTTPField.Name("Idempotency-Key")!] {
                    fields[HTTPField.Name("X-Key")!] = key
                }
                return (HTTPResponse(status: .ok, headerFields: fields), nil)
            }
            return response.headerFields[HTTPField.Name("X-Key")!]
        }
        let booking = try await key("bookRoom")
        let checkout = try await key("checkOutBook")
        #expect(booking != nil && checkout != nil && booking != checkout)
        #expect(try await key("bookRoom", given: "intent-7") == "intent-7")
        #expect(try await key("checkOutBook", given: "intent-8") == "intent-8")
        #expect(try await key("listRooms", method: .get) == nil)
        #expect(try await key("returnBook") == nil)
    }

    @Test("Gives up after the last attempt and returns the server's answer")
    func givesUp() async throws {
        let retry = RetryMiddleware(maxAttempts: 3, clock: InstantClock())
        let script = Script([(503, nil), (503, nil), (503, nil), (200, nil)])
        #expect(try await run(retry, script) == 503)
        #expect(script.calls == 3)
    }

    @Test("Full jitter stays within [0, min(cap, base·2ⁿ)]")
    func jitterBounds() {
        let backoff = Backoff(base: .milliseconds(250), cap: .seconds(5))
        #expect(backoff.ceiling(attempt: 0) == .milliseconds(250))
        #expect(backoff.ceiling(attempt: 3) == .seconds(2))
        #expect(backoff.ceiling(attempt: 10) == .seconds(5))
        for attempt in 0..<12 {
            let delay = backoff.delay(attempt: attempt)
            #expect(delay >= .zero && delay <= backoff.ceiling(attempt: attempt))
        }
        #expect(
            parseRetryAfter("Sun, 22 Nov 2026 05:00:30 GMT", now: Date(timeIntervalSince1970: 1_795_323_600))
                == .seconds(30))
    }
}

@Suite("Refresher")
struct RefresherTests {
    final class Counter: @unchecked Sendable {
        let lock = NSLock()
        var value = 0
        var failing = false
        func hit() throws {
            let fail = lock.withLock {
                value += 1
                return failing
            }
            if fail { throw KitError.offline("down") }
        }
        var count: Int { lock.withLock { value } }
    }

    @Test("Refreshes at once, then every interval (never under 5 s), with jitter")
    func interval() async throws {
        let clock = ManualClock()
        let counter = Counter()
        let refresher = Refresher(
            settings: .init(interval: .seconds(1), jitter: 0.1), clock: clock, random: { 1.0 }
        ) { try counter.hit() }
        #expect(await refresher.settings.interval == .seconds(5))
        await refresher.start()
        try await clock.waitForSleepers()
        #expect(counter.count == 1)
        // The wait is 5 s + 10 % jitter at the top of the draw.
        #expect(clock.sleeps.last == .seconds(5.5))
        clock.advance(by: .seconds(5.5))
        try await eventually("the second refresh") { counter.count == 2 }
        try await clock.waitForSleepers()
        let low = Refresher(settings: .init(interval: .seconds(10), jitter: 0.1), clock: clock, random: { 0 }) {}
        #expect(await low.nextDelay() == .seconds(9))
        await refresher.stop()
    }

    @Test("Backs off after errors and returns to the interval after a success")
    func backoff() async throws {
        let clock = ManualClock()
        let counter = Counter()
        counter.failing = true
        let refresher = Refresher(settings: .init(interval: .seconds(10), jitter: 0), clock: clock) {
            try counter.hit()
        }
        #expect(await refresher.refreshNow() == false)
        #expect(await refresher.nextDelay() == .seconds(20))
        #expect(await refresher.refreshNow() == false)
        #expect(await refresher.nextDelay() == .seconds(40))
        counter.lock.withLock { counter.failing = false }
        #expect(await refresher.refreshNow() == true)
        #expect(await refresher.nextDelay() == .seconds(10))
    }

    @Test("Pause stops polling; resume refreshes at once; live updates slow it to the safety net")
    func pauseResumeLive() async throws {
        let clock = ManualClock()
        let counter = Counter()
        let refresher = Refresher(
            settings: .init(interval: .seconds(10), liveInterval: .seconds(120), jitter: 0), clock: clock
        ) { try counter.hit() }
        await refresher.start()
        try await clock.waitForSleepers()
        await refresher.pause()
        try await eventually("the sleeper is gone") { clock.sleeperCount == 0 }
        // Nothing sleeps on the clock, so moving it a minute on can wake no refresh.
        clock.advance(by: .seconds(60))
        #expect(counter.count == 1)
        await refresher.resume()
        try await eventually("the immediate refresh on resume") { counter.count == 2 }
        try await clock.waitForSleepers()
        await refresher.setLive(true)
        #expect(await refresher.nextDelay() == .seconds(120))
        try await eventually("the loop sleeps on the safety net") { clock.sleeps.last == .seconds(120) }
        await refresher.stop()
    }

    @Test("Concurrent refreshes are coalesced into one")
    func coalesced() async throws {
        let counter = Counter()
        let gate = AsyncStream<Void>.makeStream()
        let refresher = Refresher(clock: ManualClock()) {
            try counter.hit()
            for await _ in gate.stream { break }
        }
        async let first = refresher.refreshNow()
        async let second = refresher.refreshNow()
        async let third = refresher.refreshNow()
        try await eventually("the refresh started") { counter.count == 1 }
        try await eventually("the others joined it") { await refresher.joined == 2 }
        gate.continuation.yield()
        let results = await [first, second, third]
        #expect(results == [true, true, true])
        #expect(counter.count == 1)
        #expect(await refresher.runs == 1)
    }
}

extension RefresherTests {
    @Test("A change announced while a refresh runs makes it run once more (many changes, one more run)")
    func changeDuringRefresh() async throws {
        let counter = Counter()
        let gate = AsyncStream<Void>.makeStream()
        let refresher = Refresher(clock: ManualClock()) {
            try counter.hit()
            if counter.count == 1 { for await _ in gate.stream { break } }
        }
        async let first = refresher.refreshNow()
        try await eventually("the first refresh started") { counter.count == 1 }
        // It read before these changes: joining it is not enough.
        async let changed = refresher.refreshAfterChange()
        async let changedAgain = refresher.refreshAfterChange()
        try await eventually("both changes joined it") { await refresher.joined == 2 }
        #expect(counter.count == 1)
        gate.continuation.yield()
        #expect(await [first, changed, changedAgain] == [true, true, true])
        #expect(counter.count == 2)
        #expect(await refresher.runs == 2)

        // A change applied in place while a refresh runs: it runs again; with none running, nothing happens.
        await refresher.noteChange()
        #expect(counter.count == 2)
        let slow = AsyncStream<Void>.makeStream()
        let second = Refresher(clock: ManualClock()) {
            try counter.hit()
            if counter.count == 3 { for await _ in slow.stream { break } }
        }
        async let running = second.refreshNow()
        try await eventually("the refresh started") { counter.count == 3 }
        await second.noteChange()
        slow.continuation.yield()
        #expect(await running)
        #expect(counter.count == 4)
        // Once it is over, a refresh is a run of its own.
        #expect(await second.refreshNow())
        #expect(counter.count == 5)
    }
}

@Suite("Server-Sent Events decoding")
struct ParserTests {
    @Test("Events split across chunks at any byte, with comments, CRLF and multi-line data")
    func chunked() async throws {
        let text =
            "retry: 2000\r\n\r\n: heartbeat\n\nid: 7\nevent: room\ndata: {\"id\":\"a\",\ndata: \"spots\":3}\n\nid: 8\nevent: reset\ndata: {}\n\n"
        let bytes = Array(text.utf8)
        for size in [1, 2, 3, 7, bytes.count] {
            let (chunks, input) = AsyncThrowingStream<ArraySlice<UInt8>, any Error>.makeStream()
            var index = 0
            while index < bytes.count {
                input.yield(bytes[index..<min(index + size, bytes.count)])
                index += size
            }
            input.finish()
            var state = ServerEventState()
            var events: [ServerEvent] = []
            for try await decoded in chunks.asDecodedServerSentEvents() {
                if let event = state.take(decoded) { events.append(event) }
            }
            #expect(
                events == [
                    ServerEvent(id: "7", type: "room", data: "{\"id\":\"a\",\n\"spots\":3}"),
                    ServerEvent(id: "8", type: "reset", data: "{}"),
                ])
            #expect(state.lastEventId == "8")
            #expect(state.retry == .seconds(2))
        }
    }
}

@Suite("Offline store and terminal output")
struct StorageAndTerminalTests {
    static let rooms = [
        Room(id: "ljerka", name: "Ljerka", building: "North Hall", capacity: 50, spots: 43, seats: 43),
        Room(id: "alexis", name: "Alexis", building: "Library Wing", capacity: 8, spots: 0, seats: 0),
        // Holds twelve people, offers four seats: "3 of 4, holds 12".
        Room(id: "mostafa", name: "Mostafa", building: "North Hall", capacity: 12, spots: 3, seats: 4),
        Room(id: "helmold", name: "Helmold", building: "Engineering", capacity: 100, spots: 86, seats: 86),
    ]

    @Test("The last good response is written atomically and read back with its date")
    func offlineStore() throws {
        let store = OfflineStore(directory: temporaryDirectory())
        #expect(store.load([Room].self, for: "rooms") == nil)
        let date = Date(timeIntervalSince1970: 1_800_000_000)
        try store.save(Self.rooms, for: "rooms", at: date, etag: "\"abc\"")
        let entry = try #require(store.load([Room].self, for: "rooms"))
        #expect(entry.value == Self.rooms)
        #expect(entry.savedAt == date)
        #expect(entry.etag == "\"abc\"")
        // A damaged file is treated as no data, not a crash.
        try Data("{not json".utf8).write(to: store.directory.appendingPathComponent("rooms.json"))
        #expect(store.load([Room].self, for: "rooms") == nil)
    }

    @Test("The rooms table, plain (golden)")
    func roomsTablePlain() {
        let text = TerminalText.roomsTable(Room.sortedForBooking(Self.rooms), booked: ["mostafa"])
        #expect(
            text == """
                ID       ROOM     BUILDING      FREE  OF  HOLDS  STATUS
                helmold  Helmold  Engineering     86  86    100  available
                ljerka   Ljerka   North Hall      43  43     50  available
                mostafa  Mostafa  North Hall       3   4     12  running low · booked by you
                alexis   Alexis   Library Wing     0   0      8  full

                """)
        #expect(TerminalText.roomsTable([]) == "No rooms match.\n")
    }

    @Test("Text from a server reaches the terminal visible: no escape, line break or bidi override acts")
    func terminalTextIsVisible() {
        let rooms = [
            Room(id: "x", name: "\u{1B}]0;pwned\u{7}\u{1B}[2J", building: "North\r\nHall", capacity: 4, spots: 1),
            Room(id: "y", name: "abc\u{202E}fdp", building: "Wing\u{0}", capacity: 4, spots: 0),
        ]
        for style in [TerminalStyle.plain, TerminalStyle(colour: true)] {
            let text = TerminalText.roomsTable(rooms, style: style)
            let escapes = text.unicodeScalars.filter { $0 == "\u{1B}" }.count
            // Only the table's own colour codes (two per painted cell) remain; the names' are shown as symbols.
            #expect(style.colour ? escapes > 0 : escapes == 0)
            #expect(text.contains("␛]0;pwned␇␛[2J"))
            #expect(text.contains("North␍␊Hall") && text.contains("abc<U+202E>fdp") && text.contains("Wing␀"))
            #expect(!text.contains("\u{202E}") && !text.contains("\u{7}") && !text.contains("\r"))
            #expect(text.split(separator: "\n").count == 3)
        }
        #expect(TerminalText.visible("plain text, café") == "plain text, café")
        #expect(TerminalText.visible("two\nlines", lines: true) == "two\nlines")
    }

    @Test("Colour only on a terminal without NO_COLOR; padding stays aligned when coloured")
    func colour() {
        #expect(TerminalStyle.detect(isTTY: true, environment: [:]).colour)
        #expect(!TerminalStyle.detect(isTTY: false, environment: [:]).colour)
        #expect(!TerminalStyle.detect(isTTY: true, environment: ["NO_COLOR": "1"]).colour)
        #expect(!TerminalStyle.detect(isTTY: true, environment: ["TERM": "dumb"]).colour)
        let coloured = TerminalText.roomsTable([Self.rooms[1]], style: TerminalStyle(colour: true))
        #expect(
            coloured == """
                \u{1B}[1mID\u{1B}[0m      \u{1B}[1mROOM\u{1B}[0m    \u{1B}[1mBUILDING\u{1B}[0m      \u{1B}[1mFREE\u{1B}[0m  \u{1B}[1mOF\u{1B}[0m  \u{1B}[1mHOLDS\u{1B}[0m  \u{1B}[1mSTATUS\u{1B}[0m
                \u{1B}[2malexis\u{1B}[0m  Alexis  Library Wing     0   0      8  \u{1B}[31mfull\u{1B}[0m

                """)
        let stripped = coloured.replacingOccurrences(of: "\u{1B}\\[[0-9]+m", with: "", options: .regularExpression)
        #expect(stripped == TerminalText.roomsTable([Self.rooms[1]]))
    }

    @Test("Ages read as people say them")
    func ages() {
        #expect(TerminalText.age(2) == "just now")
        #expect(TerminalText.age(42) == "42 s ago")
        #expect(TerminalText.age(300) == "5 min ago")
        #expect(TerminalText.age(3 * 3600 + 5) == "3 h ago")
        #expect(TerminalText.age(86400) == "1 day ago")
        #expect(TerminalText.age(3 * 86400) == "3 days ago")
    }
}
