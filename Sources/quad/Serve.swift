import ArgumentParser
import Foundation
import Hummingbird
import Logging
import QuadPlatform
import QuadServer
import ServiceLifecycle
import UnixSignals

/// `quad serve`: runs the server until SIGINT or SIGTERM.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the Quad server.",
        discussion: """
            Every option also reads an environment variable (shown in brackets); the option wins.
            Also read: QUAD_ADMIN_TOKEN (admin bearer token; generated and printed once when unset),
            QUAD_RATE_LIMIT (requests per second per client, default 20, 0 = off), QUAD_RATE_BURST (default 40),
            QUAD_EVENT_HEARTBEAT (seconds between keep-alive comments on event streams, default 15).
            """
    )

    @Option(help: "Address to listen on [QUAD_HOSTNAME] (default 127.0.0.1).")
    var hostname: String?

    @Option(help: "Port to listen on [QUAD_PORT] (default 8080).")
    var port: String?

    @Option(
        help: "A SQLite file, sqlite:PATH, :memory: or a postgres:// URL [QUAD_DATABASE_URL] (default quad.sqlite).")
    var database: String?

    @Option(help: "trace, debug, info, notice, warning, error or critical [QUAD_LOG_LEVEL] (default info).")
    var logLevel: String?

    @Flag(help: "Do not load demo data into a new database [QUAD_DEMO=off].")
    var noDemo = false

    @Option(
        help: ArgumentHelp(
            "Testing only: start the clock at this ISO 8601 instant [QUAD_NOW]; refused unless QUAD_TESTING=on.",
            visibility: .hidden))
    var now: String?

    func run() async throws {
        var flags: [ServerConfiguration.Setting: String] = [:]
        flags[.hostname] = hostname
        flags[.port] = port
        flags[.database] = database
        flags[.logLevel] = logLevel
        if noDemo { flags[.demo] = "off" }
        flags[.now] = now

        let configuration: ServerConfiguration
        do {
            configuration = try ServerConfiguration(environment: ProcessInfo.processInfo.environment, flags: flags)
        } catch let error as ConfigurationError {
            // One line naming the setting, no usage text and no trace.
            FileHandle.standardError.write(Data("quad: \(error.description)\n".utf8))
            throw ExitCode(2)
        }
        // Every logger of the process (a feature's own label too) writes as the server's does, off the request's path.
        LoggingSystem.bootstrap { label -> any LogHandler in
            configuration.logJSON ? JSONLogHandler(label: label) : TextLogHandler(label: label)
        }
        defer {
            LogWriter.standardError.flush()
            LogWriter.standardOutput.flush()
        }
        let app: any ApplicationProtocol
        do {
            app = try await buildApplication(configuration)
        } catch {
            LogWriter.standardOutput.flush()
            FileHandle.standardError.write(Data("quad: could not start: \(String(describing: error))\n".utf8))
            throw ExitCode(1)
        }
        // The first signal drains and stops; a second one means "now".
        let impatience = Task {
            var count = 0
            for await _ in await UnixSignalsSequence(trapping: .sigint, .sigterm) {
                count += 1
                if count >= 2 { Foundation.exit(130) }
            }
        }
        defer { impatience.cancel() }
        try await app.runService()
    }
}
