import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOConcurrencyHelpers
import OpenAPIRuntime
import QuadCore
import QuadKit
import QuadPlatform
import QuadServer
import ServiceLifecycle

/// A real Quad listening on a free port of 127.0.0.1, with the demo data, on a SQLite file that outlives a
/// stop so the same server can start again (for offline and recovery tests). Its clock starts at 10:00 on the first
/// weekday from the tests' instant (`QUAD_TEST_NOW`; `TestTime.weekdayMorning`) or at the one a test chooses, and runs
/// on across a restart.
public final class LiveServer: @unchecked Sendable {
    public static let adminToken = "kit-test-admin-token-0123456789"

    public let port: Int
    public let databasePath: String
    public let clock: OffsetClock
    /// The demo people's passwords, read from what the server announced on its first start.
    public let passwords: [String: String]
    private var task: Task<Void, any Error>?
    private let group: ServiceGroup

    public var url: URL { URL(string: "http://127.0.0.1:\(port)")! }

    private init(
        port: Int, databasePath: String, clock: OffsetClock, passwords: [String: String],
        task: Task<Void, any Error>, group: ServiceGroup
    ) {
        self.group = group
        self.clock = clock
        self.port = port
        self.databasePath = databasePath
        self.passwords = passwords
        self.task = task
    }

    /// Starts a server: on `port` (0: any free one) and `databasePath` (nil: a new file), its clock at `at` (nil:
    /// the tests' instant) or running on from `clock`.
    public static func start(
        port: Int = 0, databasePath: String? = nil, passwords: [String: String] = [:], at instant: Date? = nil,
        clock: OffsetClock? = nil, configure: (inout ServerConfiguration) -> Void = { _ in }
    ) async throws
        -> LiveServer
    {
        let path =
            databasePath
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("quadkit-\(UUID()).sqlite").path
        var configuration = ServerConfiguration()
        configuration.hostname = "127.0.0.1"
        configuration.port = port
        configuration.database = .sqlite(path: path)
        configuration.adminToken = adminToken
        configuration.rateLimit = 0
        configuration.passwordCost = 4
        configuration.logLevel = .error
        // With the demo campus open (its Library Wing and Engineering keep hours) unless a test chooses its time.
        let clock = clock ?? TestTime.clock(at: instant ?? TestTime.weekdayMorning)
        configuration.clock = clock
        configure(&configuration)
        let (lines, continuation) = AsyncStream<String>.makeStream()
        let app = try await buildApplication(configuration) { line in continuation.yield(line) }
        let group = ServiceGroup(
            configuration: .init(services: [app], gracefulShutdownSignals: [], logger: Logger(label: "quadkit-test")))
        let task = Task { try await group.run() }
        var found = passwords
        var listening: Int?
        let timeout = Task {
            try await Task.sleep(for: .seconds(30))
            continuation.finish()
        }
        for await line in lines {
            for entry in line.split(separator: "\n") {
                // "  ada (member): <password>"
                let parts = entry.trimmingCharacters(in: .whitespaces).split(separator: " ")
                if parts.count == 3, parts[1].hasPrefix("("), parts[1].hasSuffix("):") {
                    found[String(parts[0])] = String(parts[2])
                }
            }
            if let range = line.range(of: "listening on http://127.0.0.1:") {
                listening = Int(line[range.upperBound...].trimmingCharacters(in: .whitespaces))
                break
            }
        }
        timeout.cancel()
        guard let listening else {
            await group.triggerGracefulShutdown()
            throw KitError.timedOut("starting the server")
        }
        let server = LiveServer(
            port: listening, databasePath: path, clock: clock, passwords: found, task: task, group: group)
        // A port a stopped server of this process may come back on is not taken by another: its test reads
        // "offline" there, and would get this server's answers instead (seen on a busy machine).
        if port == 0, stoppedPorts.withLockedValue({ $0.contains(listening) }) {
            await server.stop()
            return try await start(
                port: 0, databasePath: databasePath, passwords: passwords, at: instant, clock: clock,
                configure: configure)
        }
        return server
    }

    /// Stops listening (open connections are closed); the database file stays.
    public func stop() async {
        guard task != nil else { return }
        await group.triggerGracefulShutdown()
        _ = try? await task?.value
        task = nil
        Self.stoppedPorts.withLockedValue { _ = $0.insert(port) }
    }

    /// The ports of this process's stopped servers, which `restart` may bring back.
    static let stoppedPorts = NIOLockedValueBox<Set<Int>>([])

    /// The same server again, on the same port and database.
    public func restart() async throws -> LiveServer {
        await stop()
        Self.stoppedPorts.withLockedValue { _ = $0.remove(port) }
        var lastError: (any Error)?
        for _ in 0..<50 {
            do {
                return try await LiveServer.start(
                    port: port, databasePath: databasePath, passwords: passwords, clock: clock)
            } catch {
                lastError = error
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        throw lastError!
    }

    /// Runs `body` with a started server (its clock at `at`, or the tests' instant), stopped afterwards.
    public static func with(
        isolation: isolated (any Actor)? = #isolation, at instant: Date? = nil,
        _ body: (LiveServer) async throws -> Void
    ) async throws {
        let server = try await start(at: instant)
        do {
            try await body(server)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    /// A client signed in as a demo person.
    public func client(as username: String? = nil, options: QuadClient.Options = .init()) async throws -> QuadClient {
        var options = options
        if options.retry == nil { options.retry = RetryMiddleware(clock: InstantClock(base: clock)) }
        // The kit counts down and ages its data on the server's clock, as it would on a device set right.
        if options.clock is SystemClock { options.clock = clock }
        if options.timeout == QuadClient.Options().timeout { options.timeout = QuadClient.Options.forTests.timeout }
        let client = QuadClient(serverURL: url, options: options)
        if let username { _ = try await client.signIn(username: username, password: passwords[username] ?? "") }
        return client
    }
}

extension QuadClient.Options {
    /// The kit's options with the patience of a test machine. The suite starts some 400 tests at once on two
    /// cores: a request waits for the CPU, not the network, and the kit's 20 s (an app's patience) was exceeded
    /// in CI (URLError -1001). No kit test is about a slow server; an unreachable one is refused at once.
    public static var forTests: QuadClient.Options {
        var options = QuadClient.Options()
        options.timeout = 120
        return options
    }
}

/// A clock whose sleeps return at once (recording what was asked), for retries in tests; it reads `base`.
public final class InstantClock: KitClock, @unchecked Sendable {
    private let lock = NSLock()
    private var recorded: [Duration] = []
    private let base: any QuadClock
    public init(base: any QuadClock = TestTime.clock()) { self.base = base }
    public var now: Date { base.now }
    public var sleeps: [Duration] { lock.withLock { recorded } }
    public func sleep(for duration: Duration) async throws {
        lock.withLock { recorded.append(duration) }
        try Task.checkCancellation()
        await Task.yield()
    }
}

/// Records every request and response that reaches the network (innermost middleware).
public final class Recorder: ClientMiddleware, @unchecked Sendable {
    public struct Exchange: Sendable {
        public var operationID: String
        public var method: HTTPRequest.Method
        public var path: String
        public var idempotencyKey: String?
        public var ifNoneMatch: String?
        public var ifMatch: String?
        public var status: Int?
    }

    private let lock = NSLock()
    private var recorded: [Exchange] = []
    public var exchanges: [Exchange] { lock.withLock { recorded } }

    public init() {}

    public func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var exchange = Exchange(
            operationID: operationID, method: request.method, path: request.path ?? "",
            idempotencyKey: request.headerFields[HTTPField.Name("Idempotency-Key")!],
            ifNoneMatch: request.headerFields[.ifNoneMatch], ifMatch: request.headerFields[.ifMatch])
        do {
            let (response, body) = try await next(request, body, baseURL)
            exchange.status = response.status.code
            lock.withLock { recorded.append(exchange) }
            return (response, body)
        } catch {
            lock.withLock { recorded.append(exchange) }
            throw error
        }
    }
}

/// Lets the first `count` requests of an operation reach the server, then loses their answers (as dropped
/// connections would), so the client must retry.
public final class LoseAnswers: ClientMiddleware, @unchecked Sendable {
    let operationID: String
    private let lock = NSLock()
    private var left: Int

    public init(_ operationID: String, count: Int = 1) {
        self.operationID = operationID
        self.left = count
    }

    public func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        let result = try await next(request, body, baseURL)
        guard operationID == self.operationID else { return result }
        let loseIt = lock.withLock { () -> Bool in
            defer { left -= 1 }
            return left > 0
        }
        if loseIt { throw URLError(.networkConnectionLost) }
        return result
    }
}

public func temporaryDirectory() -> URL {
    FileManager.default.temporaryDirectory.appendingPathComponent("quadkit-\(UUID())")
}
