import Foundation
import QuadCore
import QuadTestSupport
import Testing

@testable import QuadKit

/// The `quad` binary (built beside the tests) against a real server: output, files, errors, exit codes.
@Suite("quad command line", .serialized, .enabled(if: CLI.binary != nil))
struct CLITests {
    static let allRooms = """
        ID       ROOM     BUILDING      FREE  OF  HOLDS  STATUS
        helmold  Helmold  Engineering     86  86    100  available
        septima  Septima  Engineering     84  84     90  available
        ljerka   Ljerka   North Hall      43  43     50  available
        mina     Mina     Library Wing    39  39     45  available
        yana     Yana     North Hall      34  34     40  available
        painter  Painter  Library Wing    16  16     20  available
        mostafa  Mostafa  North Hall       4   4     12  available
        alexis   Alexis   Library Wing     0   0      8  full

        """

    @Test("login keeps a private token; rooms, book, cancel print tables and lines; errors are one line")
    func session() async throws {
        try await LiveServer.with { server in
            let cli = CLI(server: server.url, clock: server.clock)
            let login = try await cli.run(["login", "--username", "ada"], stdin: server.passwords["ada"]! + "\n")
            #expect(login.status == 0)
            #expect(login.out == "Signed in to \(server.url.absoluteString) as Ada Lovelace.\n")
            let attributes = try FileManager.default.attributesOfItem(
                atPath: cli.config.appendingPathComponent("credentials.json").path)
            #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
            let folder = try FileManager.default.attributesOfItem(atPath: cli.config.path)
            #expect((folder[.posixPermissions] as? NSNumber)?.intValue == 0o700)

            let rooms = try await cli.run(["rooms"])
            #expect(rooms.status == 0 && rooms.err.isEmpty)
            #expect(rooms.out == Self.allRooms)

            let filtered = try await cli.run(["rooms", "--min-spots", "30", "--building", "north hall"])
            #expect(
                filtered.out == """
                    ID      ROOM    BUILDING    FREE  OF  HOLDS  STATUS
                    ljerka  Ljerka  North Hall    43  43     50  available
                    yana    Yana    North Hall    34  34     40  available

                    """)

            let book = try await cli.run(["book", "Mostafa"])
            #expect(book.status == 0)
            #expect(book.out.hasPrefix("Booked a spot in Mostafa (North Hall); 3 left. Booking "))
            let after = try await cli.run(["rooms", "--building", "North Hall", "--min-spots", "1"])
            #expect(after.out.contains("mostafa  Mostafa  North Hall     3   4     12  running low · booked by you\n"))

            let full = try await cli.run(["book", "alexis"])
            #expect(full.status == 1 && full.out.isEmpty)
            #expect(
                full.err.hasPrefix("quad: ") && full.err.hasSuffix("\n") && full.err.filter { $0 == "\n" }.count == 1)

            let unknown = try await cli.run(["book", "nowhere"])
            #expect(unknown.status == 1)
            #expect(unknown.err == "quad: there is no room \"nowhere\" (see `quad rooms`)\n")

            let json = try await cli.run(["rooms", "--json"])
            struct Output: Decodable {
                var rooms: [Room]
                var offline: Bool
            }
            let decoded = try JSONDecoder().decode(Output.self, from: Data(json.out.utf8))
            #expect(decoded.rooms.count == 8 && !decoded.offline)
            #expect(decoded.rooms.first { $0.id == "mostafa" }?.spots == 3)

            let cancel = try await cli.run(["cancel", "mostafa"])
            #expect(cancel.status == 0 && cancel.out == "Cancelled your booking in Mostafa.\n")
            let again = try await cli.run(["cancel", "mostafa"])
            #expect(again.status == 1 && again.err == "quad: you have no booking in \"mostafa\"\n")

            let badServer = try await cli.run(["rooms", "--server", "nope"])
            #expect(badServer.status == 2 && badServer.err == "quad: --server: \"nope\" is not an http(s) URL\n")

            // Offline: the last rooms with their age; writes refuse and say nothing was sent.
            _ = try await cli.run(["rooms"])
            await server.stop()
            let offline = try await cli.run(["rooms"])
            #expect(offline.status == 0)
            #expect(isOfflineNote(offline.err, "rooms"))
            #expect(offline.out == Self.allRooms)
            let refused = try await cli.run(["book", "yana"])
            #expect(refused.status == 3)
            #expect(
                refused.err
                    == "quad: offline: cannot book while \(server.url.absoluteString) is unreachable; nothing was sent\n"
            )
        }
    }

    @Test("rooms --at finds rooms for a time; book --at books a time or a series; bookings; checkin")
    func roomsInTime() async throws {
        // A Tuesday, 09:50 on the demo campus (Melbourne).
        let tuesday = TestTime.next(LocalTime(hour: 9, minute: 50), where: { $0.weekday == 2 })
        try await LiveServer.with(at: tuesday) { server in
            let cli = CLI(server: server.url, clock: server.clock)
            _ = try await cli.run(["login", "--username", "ada"], stdin: server.passwords["ada"]! + "\n")
            let team = try await cli.run(["book", "ljerka", "--at", "10:00", "--for", "1h", "--whole-room"])
            #expect(team.status == 0, "\(team.err)")
            #expect(
                team.out.hasPrefix("Booked the whole of Ljerka on \(TestTime.melbourneDate(tuesday)), 10:00–11:00."))

            let found = try await cli.run(["rooms", "--at", "10:00", "--for", "30m", "--people", "40"])
            #expect(
                found.out == """
                    ID       ROOM     FREE  FITS
                    helmold  Helmold    86  yes
                    septima  Septima    84  yes
                    mina     Mina       39  whole room
                    yana     Yana       34  whole room
                    ljerka   Ljerka      0  next free at 11:00
                    alexis   Alexis      0  not that day
                    mostafa  Mostafa     4  not that day
                    painter  Painter    16  not that day

                    """)

            let weekly = try await cli.run(
                [
                    "book", "Mina", "--at", "14:00", "--for", "90", "--every", "week", "--until",
                    "\(TestTime.melbourneDate(tuesday).adding(days: 14))",
                ])
            #expect(weekly.status == 0, "\(weekly.err)")
            let day = TestTime.melbourneDate(tuesday)
            let group = try await cli.run(["book", "septima", "--at", "16:00", "--for", "30m", "--people", "6"])
            #expect(group.out.hasPrefix("Booked 6 seats in Septima on \(day), 16:00–16:30."), "\(group.err)")
            let both = try await cli.run(["book", "septima", "--at", "17:00", "--whole-room", "--people", "6"])
            #expect(both.status == 64 || both.status == 2, "\(both.err)")
            let bookings = try await cli.run(["bookings"])
            #expect(
                bookings.out == """
                    ROOM     WHEN                    WHAT            CHECK-IN
                    Ljerka   \(day) 10:00–11:00  whole room      —
                    Mina     \(day) 14:00–15:30  a seat, series  —
                    Septima  \(day) 16:00–16:30  6 seats         by 16:15
                    Mina     \(day.adding(days: 7)) 14:00–15:30  a seat, series  —
                    Mina     \(day.adding(days: 14)) 14:00–15:30  a seat, series  —

                    """)

            // From 09:45 Ljerka's booking can be checked in (it is 09:50); nothing else can.
            let checkin = try await cli.run(["checkin"])
            #expect(checkin.status == 0 && checkin.out == "Checked in to Ljerka.\n", "\(checkin.err)")
            let again = try await cli.run(["checkin", "mina"])
            #expect(again.status == 1 && again.err == "quad: you have no booking to check in now in \"mina\"\n")
            let bad = try await cli.run(["book", "mina", "--at", "10:10"])
            #expect(bad.status == 1 && bad.err.hasPrefix("quad: Start on the quarter hour"))
            let usage = try await cli.run(["rooms", "--people", "3"])
            #expect(usage.status == 2)
        }
    }

    @Test("No cache and no server: one line, exit 3; a wrong password: one line, exit 1")
    func failures() async throws {
        try await LiveServer.with { server in
            let cli = CLI(server: URL(string: "http://127.0.0.1:1")!)
            let result = try await cli.run(["rooms"])
            #expect(result.status == 3)
            #expect(result.err == "quad: offline: http://127.0.0.1:1 is unreachable and no rooms are cached yet\n")
            let wrong = try await CLI(server: server.url, clock: server.clock).run(
                ["login", "--username", "ada"], stdin: "wrong-password\n")
            #expect(wrong.status == 1)
            #expect(wrong.err.hasPrefix("quad: Not signed in: ") && wrong.err.filter { $0 == "\n" }.count == 1)
        }
    }

    @Test("stops shows a student's stops and chooses others; specials watch, watched and unwatch a product")
    func stopsAndWatchedProducts() async throws {
        try await LiveServer.with { server in
            let cli = CLI(server: server.url, clock: server.clock)
            _ = try await cli.run(["login", "--username", "kier"], stdin: server.passwords["kier"]! + "\n")
            let stops = try await cli.run(["stops"])
            #expect(stops.status == 0 && stops.err.isEmpty)
            #expect(
                stops.out == """
                    ID             STOP
                    caulfield      Caulfield
                    clayton        Clayton          yours
                    clayton-halls  Clayton – Halls

                    """)
            let chosen = try await cli.run(["stops", "clayton-halls", "caulfield"])
            #expect(chosen.status == 0)
            #expect(chosen.out.split(separator: "\n").filter { $0.hasSuffix("yours") }.count == 2)
            // Kier's shuttles now come from those stops first.
            let kier = try await server.client(as: "kier")
            let first = try #require(try await kier.schedules().value.stops.first)
            #expect(["Caulfield", "Clayton – Halls"].contains(first.departure), "\(first)")
            let unknown = try await cli.run(["stops", "nowhere"])
            #expect(unknown.status == 1 && unknown.err.hasPrefix("quad: ") && unknown.err.contains("nowhere"))
            #expect(try await kier.myStops().chosen == ["clayton-halls", "caulfield"], "a refused choice changes none")
            let none = try await cli.run(["stops", "--none"])
            #expect(none.status == 0 && !none.out.contains("yours"))
            let both = try await cli.run(["stops", "clayton", "--none"])
            #expect(both.status == 2 && both.err == "quad: give stop ids or --none, not both\n")

            // A product: watched, put on special by the manager, no longer watched.
            let romaine = try #require(
                try await kier.specials().value.managerSpecials.first { $0.displayName == "Organic Romaine Hearts" })
            #expect(try await cli.run(["specials", "watched"]).out.hasPrefix("You watch no product"))
            let watch = try await cli.run(["specials", "watch", romaine.id])
            #expect(watch.status == 0 && watch.out.hasPrefix("You will be told"))
            #expect(try await cli.run(["specials", "watched"]).out.contains("Organic Romaine Hearts  $3.92\n"))
            let admin = QuadClient(serverURL: server.url, token: LiveServer.adminToken, options: .forTests)
            _ = try await admin.raw(
                .patch, "/api/specials/\(romaine.id)", body: Data(#"{"price":"2.99"}"#.utf8),
                operationID: "updateSpecial")
            #expect(
                try await cli.run(["specials", "watched"]).out.contains(
                    "Organic Romaine Hearts  $2.99  on special, was $3.92\n"))
            #expect(try await cli.run(["specials", "unwatch", romaine.id]).status == 0)
            #expect(try await kier.watchedSpecials().specials.isEmpty)
            let missing = try await cli.run(["specials", "watch", "nosuchthing1"])
            #expect(missing.status == 1 && missing.err == "quad: There is no special nosuchthing1.\n")
            // Someone who is no student has no stops.
            let ada = CLI(server: server.url, clock: server.clock)
            _ = try await ada.run(["login", "--username", "ada"], stdin: server.passwords["ada"]! + "\n")
            let adaStops = try await ada.run(["stops"])
            #expect(adaStops.status == 1 && adaStops.err == "quad: Your account is not linked to a student.\n")
        }
    }

    @Test("watch rooms prints each change as it happens")
    func watch() async throws {
        try await LiveServer.with { server in
            let cli = CLI(server: server.url, clock: server.clock)
            let watcher = try cli.start(["watch", "rooms"])
            // Said once its event stream is open.
            try await eventually("the watcher is listening") { watcher.err.contains("Watching") }
            let grace = try await server.client(as: "grace")
            _ = try await grace.book(roomId: "yana", idempotencyKey: UUID().uuidString)
            try await eventually("the change is printed") { watcher.out.contains("Yana: 33 of 40 free, available\n") }
            watcher.stop()
        }
    }
}

/// Runs the `quad` binary with its own config and cache folders.
struct CLI {
    static let binary: URL? = {
        let directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for candidate in [directory, directory.deletingLastPathComponent()] {
            let url = candidate.appendingPathComponent("quad")
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        return nil
    }()

    let server: URL
    let config = temporaryDirectory()
    let cache = temporaryDirectory()
    /// Environment variables to set (a value) or remove (nil) for the commands.
    var environment: [String: String?] = [:]
    /// The test server's clock: commands run at its time (`QUAD_NOW`, testing mode), as a device set right would.
    var clock: (any QuadClock)? = nil

    struct Result {
        var out: String
        var err: String
        var status: Int32
    }

    /// A running command whose output grows as it prints.
    final class Running: @unchecked Sendable {
        let process: Process
        private let lock = NSLock()
        private var outData = Data()
        private var errData = Data()
        var out: String { lock.withLock { String(decoding: outData, as: UTF8.self) } }
        var err: String { lock.withLock { String(decoding: errData, as: UTF8.self) } }

        init(process: Process, out: Pipe, err: Pipe) {
            self.process = process
            out.fileHandleForReading.readabilityHandler = { [weak self] handle in
                let data = handle.availableData
                self?.lock.withLock { self?.outData.append(data) }
            }
            err.fileHandleForReading.readabilityHandler = { [weak self] handle in
                let data = handle.availableData
                self?.lock.withLock { self?.errData.append(data) }
            }
        }

        func stop() {
            process.terminate()
            process.waitUntilExit()
        }
    }

    func process(_ arguments: [String]) -> Process {
        let process = Process()
        process.executableURL = CLI.binary
        process.arguments =
            arguments.contains("--server") ? arguments : arguments + ["--server", server.absoluteString]
        var environment = ProcessInfo.processInfo.environment
        environment["QUAD_CONFIG_DIR"] = config.path
        environment["QUAD_CACHE_DIR"] = cache.path
        environment["NO_COLOR"] = nil
        // The server shares this test process with every other suite running at once.
        environment["QUAD_TIMEOUT"] = "60"
        if let clock {
            environment["QUAD_TESTING"] = "on"
            environment["QUAD_NOW"] = clock.now.formatted(.iso8601)
        }
        for (name, value) in self.environment { environment[name] = value }
        process.environment = environment
        return process
    }

    func start(_ arguments: [String]) throws -> Running {
        let process = process(arguments)
        let (out, err) = (Pipe(), Pipe())
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        let running = Running(process: process, out: out, err: err)
        try process.run()
        return running
    }

    func run(_ arguments: [String], stdin: String? = nil) async throws -> Result {
        try await execute(process(arguments), stdin: stdin)
    }

    /// Runs `process` to its end, feeding it `stdin`, and collects what it printed.
    func execute(_ process: Process, stdin: String? = nil) async throws -> Result {
        let (out, err, input) = (Pipe(), Pipe(), Pipe())
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input
        try process.run()
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try input.fileHandleForWriting.close()
        // Blocking reads and the wait run on threads of their own, never on the tests' (and server's) task pool.
        let (outData, errData) = await withCheckedContinuation { continuation in
            nonisolated(unsafe) let process = process
            Thread {
                let group = DispatchGroup()
                let errData = DataBox()
                group.enter()
                Thread {
                    errData.data = err.fileHandleForReading.readDataToEndOfFile()
                    group.leave()
                }.start()
                let outData = out.fileHandleForReading.readDataToEndOfFile()
                group.wait()
                process.waitUntilExit()
                continuation.resume(returning: (outData, errData.data))
            }.start()
        }
        return Result(
            out: String(decoding: outData, as: UTF8.self), err: String(decoding: errData, as: UTF8.self),
            status: process.terminationStatus)
    }
}

/// Whether `text` is the one-line note a read prints offline: "Offline: showing WHAT saved AGE." (the age is
/// "just now" on a quiet machine, some seconds on a busy one).
func isOfflineNote(_ text: String, _ what: String) -> Bool {
    let prefix = "Offline: showing \(what) saved "
    guard text.hasPrefix(prefix), text.hasSuffix(".\n") else { return false }
    let age = text.dropFirst(prefix.count).dropLast(2)
    return age == "just now" || (age.hasSuffix(" s ago") && Int(age.dropLast(6)) != nil)
}

final class DataBox: @unchecked Sendable {
    var data = Data()
}
