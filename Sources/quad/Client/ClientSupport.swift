import ArgumentParser
import Foundation
import QuadCore
import QuadKit
import QuadPlatform
import QuadServer

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Options every client command takes.
struct ClientOptions: ParsableArguments {
    @Option(help: "The Quad server [QUAD_SERVER] (default http://127.0.0.1:8080).")
    var server: String?

    @Flag(help: "Print JSON for scripts instead of tables.")
    var json = false

    func serverURL() throws -> URL {
        let raw =
            server ?? ProcessInfo.processInfo.environment["QUAD_SERVER"].flatMap { $0.isEmpty ? nil : $0 }
            ?? "http://127.0.0.1:8080"
        guard let url = URL(string: raw), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme),
            url.host != nil
        else {
            throw CLIError.usage("--server: \"\(raw)\" is not an http(s) URL")
        }
        return url
    }
}

/// A failure of a client command: one line on stderr, and its exit code.
enum CLIError: Error {
    case usage(String)
    case failed(String)
    case offline(String)

    var exitCode: Int32 {
        switch self {
        case .usage: 2
        case .failed: 1
        case .offline: 3
        }
    }

    var message: String {
        switch self {
        case .usage(let message), .failed(let message), .offline(let message): message
        }
    }
}

/// The user's saved sign-ins, one per server, in `credentials.json` (mode 0600) in the config folder:
/// `$QUAD_CONFIG_DIR`, else `$XDG_CONFIG_HOME/quad`, else `~/.config/quad`.
struct Credentials: Codable {
    struct Entry: Codable {
        var token: String
        var username: String
    }

    var servers: [String: Entry] = [:]

    static var directory: URL {
        let environment = ProcessInfo.processInfo.environment
        if let custom = environment["QUAD_CONFIG_DIR"], !custom.isEmpty { return URL(fileURLWithPath: custom) }
        if let xdg = environment["XDG_CONFIG_HOME"], !xdg.isEmpty {
            return URL(fileURLWithPath: xdg).appendingPathComponent("quad")
        }
        return FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".config/quad")
    }

    static var file: URL { directory.appendingPathComponent("credentials.json") }

    static func key(_ server: URL) -> String {
        var text = server.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        return text
    }

    static func load() -> Credentials {
        guard let data = try? Data(contentsOf: file) else { return Credentials() }
        return (try? JSONDecoder().decode(Credentials.self, from: data)) ?? Credentials()
    }

    /// Written to a private temporary file, then renamed over the old one: never readable by others.
    func save() throws {
        let manager = FileManager.default
        try manager.createDirectory(
            at: Self.directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let data = try encoder.encode(self)
        let temporary = Self.directory.appendingPathComponent(".credentials-\(UUID().uuidString)")
        // Created 0600 by open(2) itself: FileManager would create it first and narrow the mode after.
        let descriptor = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard descriptor >= 0 else { throw CLIError.failed("could not write \(Self.file.path)") }
        let written = data.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        let synced = fsync(descriptor) == 0
        close(descriptor)
        guard written == data.count, synced else {
            try? manager.removeItem(at: temporary)
            throw CLIError.failed("could not write \(Self.file.path)")
        }
        if rename(temporary.path, Self.file.path) != 0 {
            try? manager.removeItem(at: temporary)
            throw CLIError.failed("could not write \(Self.file.path)")
        }
    }

    static func token(for server: URL) -> String? { load().servers[key(server)]?.token }
}

/// What client commands share: the server, the saved token, output style and error reporting.
struct ClientContext {
    let serverURL: URL
    let client: QuadClient
    let offline: OfflineStore
    let json: Bool
    /// How stdout, and stderr, may be decorated: each by whether it is a terminal (and `NO_COLOR`).
    let style: TerminalStyle
    let errorStyle: TerminalStyle
    /// The real clock, or a test's (`QUAD_NOW` with `QUAD_TESTING=on`, as `quad serve` reads them).
    let clock: any KitClock

    /// `signedIn`: the command acts as the person signed in with `quad login`, and stops here when no one is.
    init(_ options: ClientOptions, signedIn: Bool = false) throws {
        serverURL = try options.serverURL()
        // A command line answers quickly: two retries, short waits.
        var kitOptions = QuadClient.Options()
        kitOptions.retry = RetryMiddleware(maxAttempts: 3, backoff: Backoff(base: .milliseconds(200), cap: .seconds(2)))
        // `QUAD_TIMEOUT` (seconds) for slow links, or a test server sharing a busy machine.
        kitOptions.timeout = ProcessInfo.processInfo.environment["QUAD_TIMEOUT"].flatMap { TimeInterval($0) } ?? 10
        do {
            clock =
                try ServerConfiguration.testingClock(environment: ProcessInfo.processInfo.environment) ?? SystemClock()
        } catch let error as ConfigurationError {
            throw CLIError.usage(error.description)
        }
        kitOptions.clock = clock
        offline = OfflineStore(directory: OfflineStore.defaultDirectory(server: serverURL))
        // Responses kept between runs: the next run revalidates them (a 304 when nothing changed).
        kitOptions.cacheDirectory = offline.httpCacheDirectory
        let token = Credentials.token(for: serverURL)
        if signedIn, token == nil { throw CLIError.failed("not signed in: run `quad login`") }
        client = QuadClient(serverURL: serverURL, token: token, options: kitOptions)
        json = options.json
        style = TerminalStyle.detect(
            isTTY: isatty(STDOUT_FILENO) == 1, environment: ProcessInfo.processInfo.environment)
        errorStyle = TerminalStyle.detect(
            isTTY: isatty(STDERR_FILENO) == 1, environment: ProcessInfo.processInfo.environment)
    }

    func print(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }

    /// A line on stderr, coloured only when stderr itself is a terminal.
    func note(_ text: String, _ colour: TerminalStyle.Colour? = nil) {
        FileHandle.standardError.write(Data((errorStyle.paint(text, colour) + "\n").utf8))
    }

    func printJSON(_ value: some Encodable) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        print(String(decoding: try encoder.encode(value), as: UTF8.self) + "\n")
    }

    /// A resource as a listing command shows it: fresh from the server, or (offline) the copy kept last time.
    struct Fetched<Value> {
        var value: Value
        var offline: Bool
        /// Now, or when the offline copy was saved.
        var updatedAt: Date
    }

    /// Fetches a resource and keeps it under `key` for the next offline run. When the server is unreachable,
    /// the copy kept last time, or an offline error saying no `noun` are cached yet; other failures throw.
    func fetchOrCached<Value: Codable & Sendable>(
        _ key: String, noun: String, _ fetch: () async throws -> Value
    ) async throws -> Fetched<Value> {
        do {
            let value = try await fetch()
            let now = clock.now
            try? offline.save(value, for: key, at: now)
            return Fetched(value: value, offline: false, updatedAt: now)
        } catch {
            let kit = KitError.from(error)
            guard kit.isOffline else { throw kit }
            guard let cached = offline.load(Value.self, for: key) else {
                throw CLIError.offline(
                    "offline: \(serverURL.absoluteString) is unreachable and no \(noun) are cached yet")
            }
            return Fetched(value: cached.value, offline: true, updatedAt: cached.savedAt)
        }
    }

    /// Says on stderr how old the `noun` shown offline are.
    func noteOffline(_ noun: String, savedAt: Date) {
        note("Offline: showing \(noun) saved \(TerminalText.age(clock.now.timeIntervalSince(savedAt))).", .yellow)
    }

    /// The error for a failed write: offline ones say nothing was done.
    func writeError(_ error: any Error, doing: String) -> CLIError {
        let kit = KitError.from(error)
        if kit.isOffline {
            return .offline(
                "offline: cannot \(doing) while \(serverURL.absoluteString) is unreachable; nothing was sent")
        }
        return .failed(kit.description)
    }
}

/// Runs a client command's body, turning every failure into one line on stderr and an exit code.
func runClient(_ body: () async throws -> Void) async throws {
    do {
        try await body()
    } catch let error as CLIError {
        FileHandle.standardError.write(Data("quad: \(oneLine(error.message))\n".utf8))
        throw ExitCode(error.exitCode)
    } catch let error as ExitCode {
        throw error
    } catch {
        let kit = KitError.from(error)
        FileHandle.standardError.write(Data("quad: \(oneLine(kit.description))\n".utf8))
        throw ExitCode(kit.isOffline ? 3 : 1)
    }
}

/// A message on one line, whatever it quotes (a server's detail, a decoding error), made visible.
func oneLine(_ text: String) -> String {
    TerminalText.visible(
        text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            .joined(separator: " "))
}

/// Finds a room by id or by name (without case) in the server's list.
func resolveRoom(_ query: String, client: QuadClient) async throws -> Room {
    let rooms = try await client.rooms().value
    if let room = rooms.first(where: { $0.id == query }) { return room }
    let matches = rooms.filter { $0.name.caseInsensitiveCompare(query) == .orderedSame }
    guard let room = matches.first else { throw CLIError.failed("there is no room \"\(query)\" (see `quad rooms`)") }
    return room
}
