import CompressNIO
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import NIOPosix
import QuadTestSupport
import Testing

@testable import QuadPlatform
@testable import QuadRooms
@testable import QuadServer

/// `GET /api/rooms` polls answered from the kept answer before the router (see `FastPath`) must be
/// indistinguishable from the router's answers, over a real connection.
@Suite struct FastPathTests {
    @Test func pollsGetTheRoutersAnswerAndSpendTheSameRateLimit() async throws {
        try await TestApp.run(
            at: TestTime.weekdayMorning,
            configure: {
                $0.loadDemoData = true
                $0.rateLimit = 0.01
                $0.rateBurst = 4
            }, live: true
        ) { _, client in
            // The first poll builds the kept answer through the router; the next ones are answered from it.
            let first = try await client.execute(uri: "/api/rooms", method: .get)
            let second = try await client.execute(uri: "/api/rooms", method: .get)
            #expect(first.status == .ok && second.status == .ok)
            #expect(second.body == first.body)
            let fields: [HTTPField.Name] = [
                .eTag, .cacheControl, .contentType, .contentLength, .rateLimitPolicy,
            ]
            for field in fields { #expect(second.headers[field] == first.headers[field], "\(field)") }
            #expect(first.headers[.rateLimit]?.contains("r=3") == true)
            #expect(second.headers[.rateLimit]?.contains("r=2") == true)

            let etag = try #require(first.headers[.eTag])
            let revalidated = try await client.execute(uri: "/api/rooms", method: .get, headers: [.ifNoneMatch: etag])
            #expect(revalidated.status == .notModified && revalidated.body.readableBytes == 0)
            #expect(revalidated.headers[.eTag] == etag && revalidated.headers[.rateLimit]?.contains("r=1") == true)

            _ = try await client.execute(uri: "/api/rooms", method: .get)
            // One budget for both paths: the fifth poll is refused, with the router's problem.
            let refused = try await client.execute(uri: "/api/rooms", method: .get)
            #expect(refused.status == .tooManyRequests)
            #expect(refused.headers[.retryAfter] != nil)
            #expect(refused.headers[.contentType] == "application/problem+json")
        }
    }

    /// Behind a trusted proxy, each client it forwards for has its own budget on both paths, as the router counts
    /// them (`ClientKey`): not one budget for everyone the proxy forwards.
    @Test func behindAProxyEachClientSpendsItsOwnBudget() async throws {
        try await TestApp.run(
            at: TestTime.weekdayMorning,
            configure: {
                $0.loadDemoData = true
                $0.rateLimit = 0.01
                $0.rateBurst = 4
                $0.trustedProxies = ["127.0.0.1", "::1"]
            }, live: true
        ) { _, client in
            func poll(from address: String) async throws -> String? {
                let response = try await client.execute(
                    uri: "/api/rooms", method: .get, headers: [.xForwardedFor: "198.51.100.9, " + address])
                #expect(response.status == .ok)
                return response.headers[.rateLimit]
            }
            // The first poll builds the kept answer through the router; the next ones are answered before it.
            var budgets: [String?] = []
            for address in ["192.0.2.1", "192.0.2.1", "192.0.2.2", "192.0.2.1"] {
                budgets.append(try await poll(from: address))
            }
            #expect(budgets.map { $0?.split(separator: ";")[1] } == ["r=3", "r=2", "r=3", "r=1"])
        }
    }

    /// Without a rate limit the answers are written as ready bytes: still the router's answer, and a 304.
    @Test func withoutARateLimitPollsGetTheSameAnswer() async throws {
        try await TestApp.run(at: TestTime.weekdayMorning, configure: { $0.loadDemoData = true }, live: true) {
            _, client in
            let first = try await client.execute(uri: "/api/rooms", method: .get)
            let second = try await client.execute(uri: "/api/rooms", method: .get)
            #expect(first.status == .ok && second.status == .ok)
            #expect(second.body == first.body)
            let fields: [HTTPField.Name] = [.eTag, .cacheControl, .contentType, .contentLength]
            for field in fields { #expect(second.headers[field] == first.headers[field], "\(field)") }
            #expect(second.headers[.date] != nil)
            let etag = try #require(first.headers[.eTag])
            let revalidated = try await client.execute(uri: "/api/rooms", method: .get, headers: [.ifNoneMatch: etag])
            #expect(revalidated.status == .notModified && revalidated.body.readableBytes == 0)
            #expect(revalidated.headers[.eTag] == etag && revalidated.headers[.cacheControl] == "no-cache")
            // The connection stays usable after both kinds of answer.
            #expect(try await client.execute(uri: "/api/rooms", method: .get).body == first.body)
        }
    }

    /// At the default level, where every answer has its log line and its id (`X-Request-Id`), a kept answer is still
    /// the router's, its id its own: a 304, a body small enough to share its head's buffer, and one larger.
    @Test(arguments: [0, 120])
    func withItsLogLineAKeptAnswerIsTheRouters(roomsAdded: Int) async throws {
        let logs = LogLines()
        try await TestApp.run(
            at: TestTime.weekdayMorning, configure: { $0.loadDemoData = true }, live: true, logger: logs.logger
        ) { app, client in
            try await Self.add(roomsAdded, roomsTo: app)
            let requestId = HTTPField.Name("X-Request-Id")!
            let routed = try await client.execute(uri: "/api/rooms", method: .get)
            let kept = try await client.execute(uri: "/api/rooms", method: .get)
            #expect(routed.status == .ok && kept.status == .ok && kept.body == routed.body)
            #expect(
                (routed.body.readableBytes > FastPath.inlineBody) == (roomsAdded > 0), "\(routed.body.readableBytes)")
            for field: HTTPField.Name in [.eTag, .cacheControl, .contentType, .contentLength] {
                #expect(kept.headers[field] == routed.headers[field], "\(field)")
            }
            let etag = try #require(kept.headers[.eTag])
            let revalidated = try await client.execute(uri: "/api/rooms", method: .get, headers: [.ifNoneMatch: etag])
            #expect(revalidated.status == .notModified && revalidated.body.readableBytes == 0)
            // Again, in the buffer the last 304 was written from (the connection keeps it): the same answer, its own id.
            let again = try await client.execute(uri: "/api/rooms", method: .get, headers: [.ifNoneMatch: etag])
            #expect(again.status == .notModified && again.body.readableBytes == 0 && again.headers[.eTag] == etag)
            let ids = [routed, kept, revalidated, again].compactMap { $0.headers[requestId] }
            #expect(Set(ids).count == 4, "an id each: \(ids)")
            for id in ids.dropFirst() { #expect(logs.all.contains(id), "the log line with \(id)") }
            let keptLines = logs.all.split(separator: "\n").filter { $0.contains(#""answer": kept"#) }
            #expect(keptLines.count == 3, "the 200 and the 304s answered before the router")
            #expect(keptLines.allSatisfy { $0.contains(#""ms": "#) }, "with the time each took: \(keptLines)")
            // The connection goes on after each.
            #expect(try await client.execute(uri: "/api/rooms", method: .get).body == routed.body)
        }
    }

    /// Answers the socket cannot take yet wait in the connection, each with its own id: a kept answer's id is written
    /// over the last one in place only when that answer is gone (else in a copy). Many polls, pipelined and not read
    /// until the server answers no more, fill the socket's buffers: of the demo's rooms (a body the connection keeps
    /// after the head) and of 120 more (a body written after it, the kept answer's own).
    @Test(arguments: [(roomsAdded: 0, count: 4000), (roomsAdded: 120, count: 600)])
    func pipelinedKeptAnswersThatWaitKeepTheirOwnIds(roomsAdded: Int, count: Int) async throws {
        let logs = LogLines()
        try await TestApp.run(
            at: TestTime.weekdayMorning, configure: { $0.loadDemoData = true }, live: true, logger: logs.logger
        ) { app, client in
            try await Self.add(roomsAdded, roomsTo: app)
            let port = try #require(client.port)
            let poll = "GET /api/rooms HTTP/1.1\r\nHost: quad.test\r\n\r\n"
            let close = "GET /health HTTP/1.1\r\nHost: quad.test\r\nConnection: close\r\n\r\n"
            // Builds the kept answer for this host first.
            let first = try await Self.exchange(port: port, poll + close)
            let body = try #require(first.first?.components(separatedBy: "\r\n\r\n").last)
            // Answers are written or wait to be before any is read, until the server stops reading
            // (`aClientThatReadsNoAnswerIsReadNoMore`).
            let (answered, answers) = try await Self.unread(
                port: port, String(repeating: poll, count: count) + close, logs: logs)
            #expect(answered > 0)
            #expect(answers.count == count + 1)
            let polls = answers.prefix(count)
            #expect(
                (body.utf8.count > FastPath.keptAnswerBuffer) == (roomsAdded > 0),
                "\(body.utf8.count) bytes, \(count) times: megabytes")
            #expect(polls.allSatisfy { $0.hasPrefix("200") && $0.hasSuffix("\r\n\r\n" + body) })
            let ids = polls.compactMap { Self.field("x-request-id", in: $0) }
            #expect(ids.count == count && Set(ids).count == count, "an id each: \(Set(ids).count) of \(count)")
            let log = logs.all
            #expect(ids.allSatisfy { log.contains($0) }, "each id is its log line's")
        }
    }

    /// A client that pipelines polls and reads none of its answers is no longer read once they back up: what waits for
    /// it stays bounded (about what one read brought, answered), rather than an answer for every poll it sent. When it
    /// reads, the server reads on, and every poll is answered, in order, nothing lost.
    @Test func aClientThatReadsNoAnswerIsReadNoMore() async throws {
        let logs = LogLines()
        try await TestApp.run(
            at: TestTime.weekdayMorning, configure: { $0.loadDemoData = true }, live: true, logger: logs.logger
        ) { _, client in
            let port = try #require(client.port)
            let first = try await Self.exchange(
                port: port,
                "GET /api/rooms HTTP/1.1\r\nHost: quad.test\r\n\r\n"
                    + "GET /health HTTP/1.1\r\nHost: quad.test\r\nConnection: close\r\n\r\n")
            let answer = try #require(first.first)
            let etag = try #require(Self.field("etag", in: answer))
            // Revalidations: 304s of about 550 bytes. Between the two sides, the server's send buffer takes at most
            // `tcp_wmem`'s largest (4 MB here), the client's receive buffer 64 kB (set), and one read brings 64 kB of
            // polls (about 700): four times the send buffer's worth of 304s is more than all of them hold.
            let poll = "GET /api/rooms HTTP/1.1\r\nHost: quad.test\r\nIf-None-Match: \(etag)\r\n\r\n"
            let sendBuffer =
                (try? String(contentsOfFile: "/proc/sys/net/ipv4/tcp_wmem", encoding: .utf8))
                .flatMap { $0.split(whereSeparator: \.isWhitespace).last.flatMap { Int($0) } } ?? 4 << 20
            let count = max(30_000, 4 * sendBuffer / 550)
            let close = "GET /health HTTP/1.1\r\nHost: quad.test\r\nConnection: close\r\n\r\n"
            let (answered, answers) = try await Self.unread(
                port: port, String(repeating: poll, count: count) + close, logs: logs, receiveBuffer: 64 << 10)
            #expect(answered > 0 && answered < count / 2, "\(answered) of \(count) answered before any was read")
            #expect(answers.count == count + 1)
            #expect(answers.prefix(count).allSatisfy { $0.hasPrefix("304") }, "every poll revalidated")
            #expect(answers.last?.hasPrefix("200") == true, "then the last request, answered by the router")
        }
    }

    /// People signed in poll too, with a bearer token or a browser's cookies: once their session is known, their
    /// polls are answered before the router, as the router answers them (private, their own rate limit), and a
    /// token or cookie it does not know goes to the router, which refuses it.
    @Test func signedInPollsGetTheRoutersAnswer() async throws {
        try await TestApp.run(
            at: TestTime.weekdayMorning,
            configure: {
                $0.loadDemoData = true
                $0.rateLimit = 0.01
                $0.rateBurst = 6
            }, live: true
        ) { app, client in
            _ = try await client.execute(uri: "/api/rooms", method: .get)  // the kept answer, for visitors
            let bearer = try await app.signedIn("ada")
            let token = String(try #require(bearer[.authorization]).dropFirst("Bearer ".count))
            let asked: [HTTPFields] = [
                [.authorization: "Bearer \(token)"],
                [.cookie: "quad_csrf=abcdefghijklmnopqrstuvwxyz0123456789ABCD; quad_session=\(token); quad_lang=en"],
            ]
            for headers in asked {
                let first = try await client.execute(uri: "/api/rooms", method: .get, headers: headers)
                let second = try await client.execute(uri: "/api/rooms", method: .get, headers: headers)
                #expect(first.status == .ok && second.status == .ok)
                #expect(second.body == first.body)
                for field: HTTPField.Name in [.eTag, .cacheControl, .contentType, .contentLength, .rateLimitPolicy] {
                    #expect(second.headers[field] == first.headers[field], "\(field)")
                }
                #expect(second.headers[.cacheControl] == "private, no-cache")
                var again = headers
                again[.ifNoneMatch] = try #require(first.headers[.eTag])
                let revalidated = try await client.execute(uri: "/api/rooms", method: .get, headers: again)
                #expect(revalidated.status == .notModified && revalidated.headers[.cacheControl] == "private, no-cache")
            }
            // Ada's own budget, spent by her six polls on either path; the address's is untouched.
            let spent = try await client.execute(uri: "/api/rooms", method: .get, headers: asked[0])
            #expect(spent.status == .tooManyRequests)
            #expect(try await client.execute(uri: "/api/rooms", method: .get).status == .ok)

        }
    }

    /// A poll's header fields are read in any case and over as many lines as they come, as the router reads them: a
    /// browser's cookies in two `Cookie` lines sign its polls in (the router's answer, then the kept one, alike), an
    /// `If-None-Match` in capitals revalidates them, and cookies without the session leave a visitor.
    @Test func fieldsAreReadInAnyCaseAndOverSeveralLines() async throws {
        try await TestApp.run(at: TestTime.weekdayMorning, configure: { $0.loadDemoData = true }, live: true) {
            app, client in
            let port = try #require(client.port)
            let bearer = try await app.signedIn("ada")
            let token = String(try #require(bearer[.authorization]).dropFirst("Bearer ".count))
            let poll =
                "GET /api/rooms HTTP/1.1\r\nhost: quad.test\r\ncookie: quad_lang=en\r\nCOOKIE: quad_session=\(token)\r\n"
            // One at a time: a request pipelined behind one the router answers is the router's too.
            let polls = try await Self.inTurn(port: port, Array(repeating: poll + "\r\n", count: 3))
            let etags = polls.map { Self.field("etag", in: $0) }
            for answer in polls {
                #expect(answer.hasPrefix("200") && Self.field("cache-control", in: answer) == "private, no-cache")
            }
            let etag = try #require(etags.first ?? nil)
            #expect(etags.allSatisfy { $0 == etag }, "\(etags)")
            #expect(Set(polls.map { $0.components(separatedBy: "\r\n\r\n").last }).count == 1, "the same rooms")

            let revalidated = try await Self.inTurn(
                port: port, Array(repeating: poll + "IF-NONE-MATCH: \(etag)\r\n\r\n", count: 2))
            #expect(revalidated.allSatisfy { $0.hasPrefix("304") }, "\(revalidated)")

            let visitor =
                "GET /api/rooms HTTP/1.1\r\nHost: quad.test\r\nCookie: quad_lang=en\r\nCookie: quad_x=1\r\n\r\n"
            let visits = try await Self.inTurn(port: port, [visitor, visitor])
            #expect(visits.allSatisfy { $0.hasPrefix("200") && Self.field("cache-control", in: $0) == "no-cache" })
        }
    }

    /// A field's value in a raw answer (its head's first line of that name, in any case).
    private static func field(_ name: String, in answer: String) -> String? {
        let head = answer.components(separatedBy: "\r\n\r\n")[0]
        for line in head.components(separatedBy: "\r\n").dropFirst() {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == name { return parts[1].trimmingCharacters(in: .whitespaces) }
        }
        return nil
    }

    /// Sends raw requests on one kept-alive connection, each once the answer before it is whole (by its
    /// `Content-Length`; a 304 has no body), and returns the answers as `exchange` does.
    static func inTurn(port: Int, _ requests: [String]) async throws -> [String] {
        let channel = try await connection(port: port)
        return try await channel.executeThenClose { inbound, outbound in
            var answers: [String] = []
            var received = ""
            var chunks = inbound.makeAsyncIterator()
            for request in requests {
                try await outbound.write(ByteBuffer(string: request))
                while true {
                    if let end = received.range(of: "\r\n\r\n") {
                        let head = String(received[..<end.lowerBound])
                        let length =
                            head.hasPrefix("HTTP/1.1 304") ? 0 : Int(Self.field("content-length", in: head) ?? "") ?? 0
                        let body = received[end.upperBound...]
                        if body.utf8.count >= length {
                            let whole = received.utf8.count - body.utf8.count + length
                            answers.append(String(String(received.utf8.prefix(whole))!.dropFirst("HTTP/1.1 ".count)))
                            received = String(String(received.utf8.dropFirst(whole))!)
                            break
                        }
                    }
                    guard let chunk = try await chunks.next() else { return answers }
                    received += String(buffer: chunk)
                }
            }
            return answers
        }
    }

    /// A token the fast path does not know goes to the router, which refuses it; a sign-out takes effect on the
    /// very next poll.
    @Test func aSignOutTakesEffectOnTheNextPoll() async throws {
        try await TestApp.run(at: TestTime.weekdayMorning, configure: { $0.loadDemoData = true }, live: true) {
            app, client in
            let bearer = try await app.signedIn("ada")
            for _ in 0..<3 {
                #expect(try await client.execute(uri: "/api/rooms", method: .get, headers: bearer).status == .ok)
            }
            let unknown = try await client.execute(
                uri: "/api/rooms", method: .get, headers: [.authorization: "Bearer not-a-session-token"])
            #expect(unknown.status == .unauthorized)
            #expect(
                try await client.execute(uri: "/api/sessions/current", method: .delete, headers: bearer).status
                    == .noContent)
            let ended = try await client.execute(uri: "/api/rooms", method: .get, headers: bearer)
            #expect(ended.status == .unauthorized)
        }
    }

    /// The specials and the shelf are polled as the rooms are, and answered the same way before the router (the
    /// shelf with names for people signed in only).
    @Test(arguments: ["/api/specials", "/api/books"])
    func otherPollsGetTheRoutersAnswer(path: String) async throws {
        try await TestApp.run(at: TestTime.weekdayMorning, configure: { $0.loadDemoData = true }, live: true) {
            app, client in
            let bearer = try await app.signedIn("ada")
            for headers in [HTTPFields(), bearer, HTTPFields()] {
                let first = try await client.execute(uri: path, method: .get, headers: headers)
                let second = try await client.execute(uri: path, method: .get, headers: headers)
                #expect(first.status == .ok && second.body == first.body)
                for field: HTTPField.Name in [.eTag, .cacheControl, .contentType, .contentLength] {
                    #expect(second.headers[field] == first.headers[field], "\(field)")
                }
            }
        }
    }

    /// The car parks and departures, polled by every open timetable, are kept and answered before the router as the
    /// router answers them, to visitors and to people signed in.
    @Test(arguments: ["/api/parkings", "/api/departures"])
    func timetableListsGetTheRoutersAnswer(path: String) async throws {
        let logs = LogLines()
        // Without the demo's simulator, whose car parks and shuttles change every few seconds: the kept answer is
        // dropped with each change, so two polls in a row rarely meet it on a busy machine.
        try await TestApp.run(
            at: TestTime.weekdayMorning, configure: { $0.loadDemoData = true }, live: true, services: false,
            logger: logs.logger
        ) {
            app, client in
            let bearer = try await app.signedIn("ada")
            for headers in [HTTPFields(), bearer] {
                // The demo's feeds may change the answer between two polls: two in a row with one ETag are the
                // router's answer, then the kept one.
                try await eventually("two polls in a row get the same answer") {
                    let first = try await client.execute(uri: path, method: .get, headers: headers)
                    let second = try await client.execute(uri: path, method: .get, headers: headers)
                    #expect(first.status == .ok && second.status == .ok)
                    guard second.headers[.eTag] == first.headers[.eTag] else { return false }
                    #expect(second.body == first.body)
                    for field: HTTPField.Name in [.cacheControl, .contentType, .contentLength] {
                        #expect(second.headers[field] == first.headers[field], "\(field)")
                    }
                    return true
                }
            }
            let answeredBeforeTheRouter = logs.all.split(separator: "\n").filter {
                $0.contains("GET \(path) 200") && $0.contains(#""answer": kept"#)
            }
            #expect(answeredBeforeTheRouter.count >= 2)
        }
    }

    /// Apps and browsers ask for gzip: before the router too they get the gzipped bytes (made once per change),
    /// the weak ETag and `Vary`, as the router sends them, and a 304 for either form's ETag.
    @Test(arguments: ["/api/rooms", "/api/specials", "/api/books"])
    func gzipPollsGetTheRoutersAnswer(path: String) async throws {
        try await TestApp.run(at: TestTime.weekdayMorning, configure: { $0.loadDemoData = true }, live: true) {
            app, client in
            let bearer = try await app.signedIn("ada")
            var gzip = bearer
            gzip[.acceptEncoding] = "gzip, deflate, br"
            let plain = try await client.execute(uri: path, method: .get, headers: bearer)
            let first = try await client.execute(uri: path, method: .get, headers: gzip)
            let second = try await client.execute(uri: path, method: .get, headers: gzip)
            #expect(first.headers[.contentEncoding] == "gzip" && second.body == first.body)
            for field: HTTPField.Name in [.eTag, .cacheControl, .contentType, .contentLength, .contentEncoding, .vary] {
                #expect(second.headers[field] == first.headers[field], "\(field)")
            }
            var body = first.body
            #expect(try body.decompress(with: .gzip()) == plain.body)
            let etag = try #require(plain.headers[.eTag])
            #expect(first.headers[.eTag] == "W/" + etag && plain.headers[.vary] == "Accept-Encoding")
            for sent in [etag, "W/" + etag] {
                var conditional = gzip
                conditional[.ifNoneMatch] = sent
                let revalidated = try await client.execute(uri: path, method: .get, headers: conditional)
                #expect(revalidated.status == .notModified && revalidated.body.readableBytes == 0)
            }
        }
    }

    @Test func aBookingShowsInTheNextPoll() async throws {
        try await TestApp.run(at: TestTime.weekdayMorning, configure: { $0.loadDemoData = true }, live: true) {
            app, client in
            _ = try await client.execute(uri: "/api/rooms", method: .get)
            let before = try await client.execute(uri: "/api/rooms", method: .get)
            #expect(try spots(of: "mina", in: before) == 39)
            #expect(try await client.book("mina", as: try await app.signedIn("ada")).status == .created)
            let after = try await client.execute(uri: "/api/rooms", method: .get)
            #expect(try spots(of: "mina", in: after) == 38)
            #expect(after.headers[.eTag] != before.headers[.eTag])
        }
    }

    /// A client that pipelines gets its answers in the order it asked, even when a later request could
    /// be answered from the kept answer before an earlier one that goes through the router.
    @Test func pipelinedRequestsAreAnsweredInOrder() async throws {
        try await TestApp.run(at: TestTime.weekdayMorning, configure: { $0.loadDemoData = true }, live: true) {
            _, client in
            let port = try #require(client.port)
            let poll = "GET /api/rooms HTTP/1.1\r\nHost: quad.test\r\n\r\n"
            // Builds the kept answer for this host first.
            _ = try await Self.exchange(
                port: port, poll + "GET /health HTTP/1.1\r\nHost: quad.test\r\nConnection: close\r\n\r\n")
            let answers = try await Self.exchange(
                port: port,
                "GET /api/rooms?minSpots=30 HTTP/1.1\r\nHost: quad.test\r\n\r\n" + poll
                    + "GET /health HTTP/1.1\r\nHost: quad.test\r\nConnection: close\r\n\r\n")
            #expect(answers.count == 3)
            guard answers.count == 3 else { return }
            #expect(answers[0].contains("\"id\":\"helmold\"") && !answers[0].contains("\"id\":\"mostafa\""))
            #expect(answers[1].contains("\"id\":\"mostafa\""))
            #expect(!answers[2].contains("\"rooms\""))
        }
    }

    /// Polls are read ahead of the decoder (`RequestScanner`), one sent in pieces too; a request the scanner leaves
    /// is the decoder's, with all that follows it: a `GET` with a body (`Content-Length`) that is another request gets
    /// one answer, and the request in its body none.
    @Test func pollsReadAheadOfTheDecoderAndWhatTheyLeaveIsTheDecoders() async throws {
        try await TestApp.run(at: TestTime.weekdayMorning, configure: { $0.loadDemoData = true }, live: true) {
            _, client in
            let port = try #require(client.port)
            let poll = "GET /api/rooms HTTP/1.1\r\nHost: quad.test\r\n\r\n"
            let close = "GET /health HTTP/1.1\r\nHost: quad.test\r\nConnection: close\r\n\r\n"
            // Builds the kept answer for this host first.
            _ = try await Self.exchange(port: port, poll + close)

            let inBody = "GET /api/books HTTP/1.1\r\nHost: quad.test\r\n\r\n"
            let carrier =
                "GET /api/rooms HTTP/1.1\r\nHost: quad.test\r\nContent-Length: \(inBody.utf8.count)\r\n\r\n" + inBody
            let answers = try await Self.exchange(port: port, poll + poll + carrier + poll + close)
            #expect(answers.count == 5, "\(answers.map { $0.prefix(40) })")
            #expect(answers.prefix(4).allSatisfy { $0.hasPrefix("200") && $0.contains("\"rooms\"") })
            #expect(!answers.contains { $0.contains("\"books\"") })

            let pieces = try await Self.exchange(
                port: port, "GET /api/rooms HT", "TP/1.1\r\nHost: quad", ".test\r\n", "\r\n" + close)
            #expect(pieces.count == 2 && pieces[0].hasPrefix("200") && pieces[0].contains("\"rooms\""))
        }
    }

    /// A `HEAD` is answered without a body, kept answer or not, and the next request on the connection is read and
    /// answered as sent (the request decoder does not tell the response encoder about a `HEAD`: `decoupleDecoder`).
    @Test func aHeadHasNoBodyAndTheNextRequestIsAnswered() async throws {
        try await TestApp.run(at: TestTime.weekdayMorning, configure: { $0.loadDemoData = true }, live: true) {
            _, client in
            let port = try #require(client.port)
            let poll = "GET /api/rooms HTTP/1.1\r\nHost: quad.test\r\n\r\n"
            let answers = try await Self.exchange(
                port: port,
                poll + "HEAD /api/rooms HTTP/1.1\r\nHost: quad.test\r\n\r\n" + poll
                    + "HEAD /health HTTP/1.1\r\nHost: quad.test\r\nConnection: close\r\n\r\n")
            #expect(answers.count == 4)
            guard answers.count == 4 else { return }
            #expect(answers[0].hasPrefix("200") && answers[0].contains("\"rooms\""))
            #expect(
                answers[1].hasPrefix("200") && answers[1].hasSuffix("\r\n\r\n"), "no body: \(answers[1].suffix(80))")
            #expect(answers[2].hasPrefix("200") && answers[2].contains("\"rooms\""))
            #expect(answers[3].hasPrefix("200") && answers[3].hasSuffix("\r\n\r\n"))
        }
    }

    /// Adds `count` rooms and says so, as a room's creation does: the kept list is made again, larger.
    private static func add(_ count: Int, roomsTo app: TestApp) async throws {
        for index in 0..<count {
            _ = try await app.features.rooms.store.create(
                RoomRecord(
                    id: "added-\(index)", name: "Added \(index)", building: "North Hall", capacity: 4, seats: 4))
        }
        if count > 0 { await app.features.rooms.changed("added-0", spots: 4, .created) }
    }

    private func spots(of room: String, in response: TestResponse) throws -> Int? {
        let list = try JSONDecoder().decode(RoomList.self, from: Data(buffer: response.body))
        return list.rooms.first { $0.id == room }?.spots
    }

    /// Sends `requests` on a connection of its own and reads nothing until the server answers no more here (the log's
    /// kept answers stop growing), then every answer, split as `exchange` splits them; with how many were answered
    /// before any was read. `receiveBuffer`: the client's socket's (else the system's, which grows).
    private static func unread(
        port: Int, _ requests: String, logs: LogLines, receiveBuffer: Int? = nil
    ) async throws -> (answeredUnread: Int, answers: [String]) {
        let keptLines = { logs.all.split(separator: "\n").count { $0.contains(#""answer": kept"#) } }
        let before = keptLines()
        let channel = try await connection(port: port, receiveBuffer: receiveBuffer)
        return try await channel.executeThenClose { inbound, outbound in
            async let sent: Void = outbound.write(ByteBuffer(string: requests))
            let answered = try await settled("the server answers no more") { keptLines() - before }
            var received = ""
            for try await chunk in inbound { received += String(buffer: chunk) }
            try await sent
            return (answered, received.components(separatedBy: "HTTP/1.1 ").dropFirst().map { $0 })
        }
    }

    /// A raw connection to the test server.
    private static func connection(
        port: Int, receiveBuffer: Int? = nil
    ) async throws -> NIOAsyncChannel<ByteBuffer, ByteBuffer> {
        var bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        if let receiveBuffer {
            bootstrap = bootstrap.channelOption(.socketOption(.so_rcvbuf), value: .init(receiveBuffer))
        }
        return try await bootstrap.connect(host: "127.0.0.1", port: port) { channel in
            channel.eventLoop.makeCompletedFuture {
                try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
            }
        }
    }

    /// Sends raw bytes on one connection (each piece written on its own) and returns the responses, split, once the
    /// server closes it.
    static func exchange(port: Int, _ pieces: String...) async throws -> [String] {
        let channel = try await connection(port: port)
        return try await channel.executeThenClose { inbound, outbound in
            for piece in pieces { try await outbound.write(ByteBuffer(string: piece)) }
            var received = ""
            for try await chunk in inbound { received += String(buffer: chunk) }
            return received.components(separatedBy: "HTTP/1.1 ").dropFirst().map { $0 }
        }
    }
}
