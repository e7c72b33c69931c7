import Foundation
import NIOCore
import NIOPosix
import QuadTestSupport
import Testing

@testable import QuadPlatform
@testable import QuadServer

/// Event streams opened before the router (`FastPath`, `PipelineEventStream`) are the router's streams to
/// the client: the same head and frames, the same count of a client's streams, given back when the client goes.
@Suite struct PipelineEventStreamTests {
    /// How many streams the fast path opened, by its log lines.
    static func openedBeforeTheRouter(_ logs: LogLines) -> Int {
        logs.all.split(separator: "\n").filter { $0.contains(#""stream": pipeline"#) }.count
    }

    @Test func aStreamBeforeTheRouterIsTheRoutersAndCountsAgainstTheSameCap() async throws {
        let logs = LogLines()
        try await TestApp.run(
            at: TestTime.weekdayMorning,
            configure: {
                $0.loadDemoData = true
                $0.maxEventStreamsPerClient = 2
            }, live: true, logger: logs.logger
        ) { app, client in
            let port = try #require(client.port)
            // Percent-encoding is read by the router alone: the same types, through the router.
            try await RawStream.get("/api/events?types=room%2Croom", port: port) { routed in
                try await RawStream.get("/api/events?types=room", port: port) { fast in
                    let fastHead = try await fast.head()
                    let routedHead = try await routed.head()
                    #expect(Self.openedBeforeTheRouter(logs) == 1)
                    #expect(fastHead.status == "HTTP/1.1 200 OK")
                    // (The test application names no server; Quad's own says `Server: Quad` on every answer. The
                    // router's answer carries the id of its log line; the fast path writes no line with an id.)
                    #expect(
                        fastHead.fields.filter { !$0.hasPrefix("server:") }
                            == routedHead.fields.filter { !$0.hasPrefix("x-request-id:") },
                        "the same head, but for its Date")

                    // The client holds both of its two streams: a third is refused, whichever path it asks.
                    #expect(try await client.execute(uri: "/api/events", method: .get).status == .tooManyRequests)

                    // A booking reaches both, with the same frame.
                    #expect(try await client.book("ljerka", as: try await app.signedIn("ada")).status == .created)
                    let fastEvent = try await fast.read(until: "\n\n", after: "event: room")
                    let routedEvent = try await routed.read(until: "\n\n", after: "event: room")
                    #expect(fastEvent.contains(#""id":"ljerka""#) && fastEvent.contains(#""spots":42"#))
                    #expect(fastEvent == routedEvent)
                }
                // Its client gone, the stream gives its slot back at once (the router's notices at its next
                // heartbeat, 15 s on).
                try await eventually("the stream is given back") {
                    app.platform.eventStreams.held(by: "127.0.0.1") == 1
                }
            }
        }
    }

    /// A client reconnecting with the last id it saw is sent what it missed first, on either path.
    @Test func aReconnectingClientGetsWhatItMissed() async throws {
        let logs = LogLines()
        try await TestApp.run(
            at: TestTime.weekdayMorning, configure: { $0.loadDemoData = true }, live: true, logger: logs.logger
        ) { app, client in
            let port = try #require(client.port)
            let ada = try await app.signedIn("ada")
            let first = try await RawStream.get("/api/events?types=room", port: port) { stream in
                _ = try await stream.head()
                #expect(try await client.book("ljerka", as: ada).status == .created)
                return try await stream.read(until: "\n\n", after: "id: ")
            }
            let lastId = try #require(first.split(separator: "\n").first.map(String.init))
            #expect(try await client.book("mina", as: ada).status == .created)
            let missed = try await RawStream.get(
                "/api/events?types=room", port: port, headers: "Last-Event-ID: \(lastId)\r\n"
            ) { stream in
                _ = try await stream.head()
                return try await stream.read(until: "\n\n", after: "event: room")
            }
            #expect(Self.openedBeforeTheRouter(logs) == 2)
            #expect(missed.contains(#""id":"mina""#), "the booking made while away: \(missed)")
        }
    }

    /// The streams of one event loop follow the hub together, each still getting only its own: a person's private
    /// events reach their stream alone, a stream of some types hears no other, and a stream opened after an event
    /// does not get it.
    @Test func eachStreamGetsItsOwnEventsAlone() async throws {
        let logs = LogLines()
        try await TestApp.run(
            at: TestTime.weekdayMorning, configure: { $0.loadDemoData = true }, live: true, logger: logs.logger
        ) { app, client in
            let port = try #require(client.port)
            let ada = try await app.signedIn("ada")
            let bearer = "Authorization: \(try #require(ada[.authorization]))\r\n"
            // Once the router has signed her in, this instance remembers her session: her stream is the fast path's.
            #expect(try await client.execute(uri: "/api/me/bookings", method: .get, headers: ada).status == .ok)
            let hub = app.platform.events
            try await RawStream.get("/api/events", port: port, headers: bearer) { adas in
                try await RawStream.get("/api/events", port: port) { anyone in
                    try await RawStream.get("/api/events?types=room", port: port) { rooms in
                        for stream in [adas, anyone, rooms] { _ = try await stream.head() }
                        #expect(Self.openedBeforeTheRouter(logs) == 3, "Ada's stream too")
                        await hub.publishForTesting("test", "for ada", to: "ada")
                        await hub.publishForTesting("test", "for everyone")
                        #expect(try await client.book("ljerka", as: ada).status == .created)

                        #expect(try await adas.read(until: "\n", after: "event: test\ndata: ") == #""for ada""#)
                        #expect(try await adas.read(until: "\n", after: "event: test\ndata: ") == #""for everyone""#)
                        #expect(try await anyone.read(until: "\n", after: "event: test\ndata: ") == #""for everyone""#)
                        let room = try await rooms.read(until: "\n\n", after: "event: ")
                        #expect(room.hasPrefix("room\n") && room.contains(#""id":"ljerka""#), "\(room)")
                        #expect(try await anyone.read(until: "\n\n", after: "event: room").contains("ljerka"))
                        #expect(!rooms.seen.contains("event: test") && !anyone.seen.contains("for ada"))
                    }
                }
            }
            // Opened after them: none of the three events, unless it asks for what it missed.
            try await RawStream.get("/api/events", port: port, headers: bearer) { late in
                _ = try await late.head()
                await hub.publishForTesting("test", "later")
                #expect(try await late.read(until: "\n", after: "event: test\ndata: ") == #""later""#)
            }
        }
    }

    /// A client that stops reading is cut off once the connection can take no more and `EventStreams.backlog`
    /// frames more have waited, rather than holding the server's memory: its slot comes back.
    @Test func aReaderThatStopsReadingIsCutOff() async throws {
        try await TestApp.run(live: true) { app, client in
            let port = try #require(client.port)
            try await RawStream.get("/api/events", port: port) { stream in
                _ = try await stream.head()
                #expect(app.platform.eventStreams.held(by: "127.0.0.1") == 1)
                // 32 MB of events, read by nobody: more than the sockets' buffers on both sides hold.
                let payload = String(repeating: "x", count: 8 * 1024)
                for _ in 0..<4000 { await app.platform.events.publishForTesting("test", payload) }
                try await eventually("the stream is cut off") { app.platform.eventStreams.held(by: "127.0.0.1") == 0 }
            }
        }
    }

    /// What a client sends once its stream is open is not read as a request (its answer would land in the middle of
    /// the stream), be it another request or bytes that are no HTTP at all: the stream goes on as before.
    @Test func whatAClientSendsOnItsOpenStreamIsIgnored() async throws {
        let logs = LogLines()
        try await TestApp.run(
            at: TestTime.weekdayMorning, configure: { $0.loadDemoData = true }, live: true, logger: logs.logger
        ) { app, client in
            let port = try #require(client.port)
            try await RawStream.get("/api/events?types=room", port: port) { stream in
                _ = try await stream.head()
                #expect(Self.openedBeforeTheRouter(logs) == 1)
                try await stream.send("GET /api/rooms HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                try await stream.send("\u{0}\u{7f} this is no HTTP \r\n\r\n")
                #expect(try await client.book("ljerka", as: try await app.signedIn("ada")).status == .created)
                let event = try await stream.read(until: "\n\n", after: "event: room")
                #expect(event.contains(#""id":"ljerka""#))
                #expect(!stream.seen.dropFirst().contains("HTTP/1.1"), "no second answer on the stream")
                #expect(app.platform.eventStreams.held(by: "127.0.0.1") == 1)
            }
        }
    }

    /// An unknown query parameter, a signed-in caller the instance does not know yet and a HEAD are the router's.
    @Test func whatTheFastPathCannotReadGoesToTheRouter() async throws {
        let logs = LogLines()
        try await TestApp.run(
            at: TestTime.weekdayMorning, configure: { $0.loadDemoData = true }, live: true, logger: logs.logger
        ) { _, client in
            let port = try #require(client.port)
            for target in ["/api/events?types=room&other=1", "/api/events?types=room+book", "/api/events/"] {
                try await RawStream.get(target, port: port) { stream in _ = try await stream.head() }
            }
            let unknown = "Authorization: Bearer not-a-session\r\n"
            let refused = try await RawStream.get("/api/events", port: port, headers: unknown) { try await $0.head() }
            #expect(refused.status.hasPrefix("HTTP/1.1 401"))
            #expect(Self.openedBeforeTheRouter(logs) == 0)
            #expect(try await client.execute(uri: "/api/events", method: .head).status == .ok)
        }
    }
}

/// A raw HTTP/1.1 request on a connection of its own, read as its bytes arrive: streams never end, so a client that
/// waits for the whole answer cannot read them.
final class RawStream {
    private var iterator: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator
    private let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
    private var received = ""
    /// Everything received so far.
    private(set) var seen = ""

    private init(
        _ iterator: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator,
        outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
    ) {
        self.iterator = iterator
        self.outbound = outbound
    }

    /// Sends `text` as it is.
    func send(_ text: String) async throws { try await outbound.write(ByteBuffer(string: text)) }

    /// Sends `GET target` (with `headers`, each ending in CRLF) to 127.0.0.1:`port` and runs `body` with the answer
    /// as it comes; the connection closes when `body` returns.
    static func get<T: Sendable>(
        _ target: String, port: Int, headers: String = "", _ body: (RawStream) async throws -> T
    ) async throws -> T {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        return try await channel.executeThenClose { inbound, outbound in
            try await outbound.write(
                ByteBuffer(
                    string: "GET \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\(headers)\r\n"))
            return try await body(RawStream(inbound.makeAsyncIterator(), outbound: outbound))
        }
    }

    /// The answer's status line and its header fields but `Date`, sorted, once they have come.
    func head() async throws -> (status: String, fields: [String]) {
        let head = try await read(until: "\r\n\r\n", after: "")
        let lines = head.components(separatedBy: "\r\n")
        let fields = lines.dropFirst().filter { !$0.isEmpty && !$0.lowercased().hasPrefix("date:") }
        return (lines[0], fields.map { $0.lowercased() }.sorted())
    }

    /// What follows the first `marker` still unread, up to `end`, waiting for it to come; what was read up to there
    /// is consumed.
    func read(until end: String, after marker: String) async throws -> String {
        while true {
            // (`range(of: "")` finds nothing: an empty marker is the start.)
            let start = marker.isEmpty ? received.startIndex : received.range(of: marker)?.upperBound
            if let start, let stop = received.range(of: end, range: start..<received.endIndex) {
                let found = String(received[start..<stop.lowerBound])
                received = String(received[stop.upperBound...])
                return found
            }
            guard let chunk = try await iterator.next() else {
                throw ClosedEarly(received: received)
            }
            received += String(buffer: chunk)
            seen += String(buffer: chunk)
        }
    }

    struct ClosedEarly: Error { var received: String }
}
