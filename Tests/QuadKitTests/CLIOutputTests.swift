import Foundation
import HTTPTypes
import OpenAPIRuntime
import QuadCore
import QuadTestSupport
import Testing

@testable import QuadKit
@testable import quad

/// The `quad` binary's output as a person sees it: the specials mosaic (golden, at 40 and 80 columns, piped
/// and on a real terminal), colour and NO_COLOR, one-line usage errors, and reads while the server is away.
@Suite(
    "quad command line: output, terminals, usage errors, offline reads", .serialized, .enabled(if: CLI.binary != nil))
struct CLIOutputTests {
    /// Replaces the demo specials with `SpecialsKitTests.fixed`, so the mosaic's golden output applies.
    static func showOnlyFixedSpecials(on server: LiveServer) async throws {
        let admin = QuadClient(serverURL: server.url, token: LiveServer.adminToken, options: .forTests)
        _ = try await admin.raw(
            .put, "/api/specials/settings", body: Data(#"{"canvasUnit":16,"currency":"USD"}"#.utf8),
            operationID: "updateSpecialsSettings")
        let all = try JSONDecoder().decode(
            SpecialsList.self,
            from: try await admin.get(path: "/api/specials/all", operationID: "listAllSpecials").value)
        for special in all.managerSpecials {
            let (response, _) = try await admin.send(
                .init(method: .delete, scheme: nil, authority: nil, path: "/api/specials/\(special.id)"),
                operationID: "deleteSpecial")
            #expect(response.status.code == 204)
        }
        for special in SpecialsKitTests.fixed.managerSpecials {
            // The server refuses a price above the original (the fixed list's "9.00" against "10.00"); equal
            // prices draw the same tile: no original shown.
            let body: [String: Any] = [
                "display_name": special.displayName, "width": special.width, "height": special.height,
                "original_price": max(special.originalPrice, special.price).description,
                "price": special.price.description,
            ]
            _ = try await admin.raw(
                .post, "/api/specials", body: try JSONSerialization.data(withJSONObject: body),
                operationID: "createSpecial")
        }
    }

    @Test("quad specials prints the golden mosaic at 40 and 80 columns (--width, $COLUMNS), with no escapes in a pipe")
    func mosaicGoldens() async throws {
        try await LiveServer.with { server in
            try await Self.showOnlyFixedSpecials(on: server)
            var cli = CLI(server: server.url, clock: server.clock)
            let forty = try await cli.run(["specials", "--width", "40"])
            #expect(forty.status == 0 && forty.err.isEmpty)
            #expect(forty.out == SpecialsKitTests.golden40)
            let eighty = try await cli.run(["specials", "--width", "80"])
            #expect(eighty.status == 0 && eighty.out == SpecialsKitTests.golden80)
            // Not a terminal: the width comes from $COLUMNS.
            cli.environment["COLUMNS"] = "40"
            #expect(try await cli.run(["specials"]).out == SpecialsKitTests.golden40)
        }
    }

    @Test(
        "On a terminal: sized to its width, colour and strike-through; NO_COLOR and the Linux console turn them off",
        .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script")))
    func onATerminal() async throws {
        try await LiveServer.with { server in
            try await Self.showOnlyFixedSpecials(on: server)
            var cli = CLI(server: server.url, clock: server.clock)
            cli.environment["COLUMNS"] = nil
            cli.environment["TERM"] = "xterm-256color"

            // An 80-column terminal: the mosaic fills it, the original prices struck through.
            let styled = try await cli.runOnTerminal(["specials"], columns: 80)
            #expect(styled.status == 0)
            #expect(
                styled.out
                    == SpecialsMosaic.render(
                        SpecialsKitTests.fixed, width: 80, style: TerminalStyle(colour: true, strikethrough: true)))
            #expect(styled.out.contains("\u{1B}[9m$2.00\u{1B}[29m") && !styled.out.contains("was $2.00"))
            let rooms = try await cli.runOnTerminal(["rooms"], columns: 80)
            #expect(rooms.out.hasPrefix("\u{1B}[1mID\u{1B}[0m") && rooms.out.contains("\u{1B}[31mfull\u{1B}[0m"))

            // NO_COLOR: the plain golden output at the terminal's 40 columns, and a plain table.
            cli.environment["NO_COLOR"] = "1"
            #expect(try await cli.runOnTerminal(["specials"], columns: 40).out == SpecialsKitTests.golden40)
            #expect(try await cli.runOnTerminal(["rooms"], columns: 80).out == CLITests.allRooms)

            // The Linux console shows no strike-through: the original is written out instead.
            cli.environment["NO_COLOR"] = nil
            cli.environment["TERM"] = "linux"
            #expect(try await cli.runOnTerminal(["specials"], columns: 80).out == SpecialsKitTests.golden80)

            // Offline: the note about the data's age is yellow on the terminal, plain when stderr is a file.
            await server.stop()
            cli.environment["TERM"] = "xterm-256color"
            let offline = try await cli.runOnTerminal(["rooms"], columns: 80)
            #expect(offline.status == 0)
            // (The age is "just now" unless the machine is slow: only its place is checked.)
            #expect(offline.out.hasPrefix("\u{1B}[33mOffline: showing rooms saved "))
            #expect(
                offline.out.contains(" ago.\u{1B}[0m\n\u{1B}[1mID")
                    || offline.out.contains("just now.\u{1B}[0m\n\u{1B}[1mID"))
            let folder = temporaryDirectory()
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let file = folder.appendingPathComponent("stderr.txt")
            let redirected = try await cli.runOnTerminal(["rooms"], columns: 80, stderrTo: file)
            #expect(redirected.status == 0 && redirected.out.hasPrefix("\u{1B}[1mID\u{1B}[0m"))
            let note = try String(contentsOf: file, encoding: .utf8)
            #expect(note.hasPrefix("Offline: showing rooms saved ") && note.hasSuffix(".\n"))
            #expect(!note.contains("\u{1B}") && note.filter { $0 == "\n" }.count == 1)
        }
    }

    @Test("A usage error is one line on stderr and exit 2; --help still prints the help")
    func usageErrors() async throws {
        let cli = CLI(server: URL(string: "http://127.0.0.1:1")!)
        func isOneLine(_ text: String) -> Bool {
            text.hasPrefix("quad: ") && text.hasSuffix("\n") && text.filter { $0 == "\n" }.count == 1
        }
        let narrow = try await cli.run(["specials", "--width", "3"])
        #expect(narrow.status == 2 && narrow.out.isEmpty && narrow.err == "quad: --width must be 8 or more\n")
        let missing = try await cli.run(["book"])
        #expect(missing.status == 2 && isOneLine(missing.err) && missing.err.contains("<room>"))
        let unknown = try await cli.run(["rooms", "--colour"])
        #expect(unknown.status == 2 && isOneLine(unknown.err) && unknown.err.contains("--colour"))
        let badDate = try await cli.run(["timetable", "--date", "tuesday"])
        #expect(badDate.status == 2 && badDate.err == "quad: --date must be a day as YYYY-MM-DD\n")
        let help = try await cli.run(["rooms", "--help"])
        #expect(help.status == 0 && help.err.isEmpty && help.out.contains("--min-spots"))
    }

    @Test("Without --server the commands use http://127.0.0.1:8080; the token goes to $XDG_CONFIG_HOME/quad, mode 0600")
    func defaultsAndConfigFolder() async throws {
        try await LiveServer.with { server in
            var cli = CLI(server: server.url, clock: server.clock)
            let xdg = temporaryDirectory()
            cli.environment["QUAD_CONFIG_DIR"] = .some(nil)
            cli.environment["QUAD_SERVER"] = .some(nil)
            cli.environment["XDG_CONFIG_HOME"] = xdg.path
            let login = try await cli.run(["login", "--username", "ada"], stdin: server.passwords["ada"]! + "\n")
            #expect(login.status == 0)
            let file = xdg.appendingPathComponent("quad/credentials.json")
            let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
            #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
            let saved = try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any]
            #expect((saved?["servers"] as? [String: Any])?.keys.sorted() == [server.url.absoluteString])

            // `quad logout` names the server it would sign out of before any request: the default one.
            let process = cli.process(["logout"])
            process.arguments = ["logout"]
            let logout = try await cli.execute(process)
            #expect(logout.status == 1 && logout.err == "quad: not signed in to http://127.0.0.1:8080\n")
            let signedOut = try await cli.run(["logout"])
            #expect(signedOut.status == 0 && signedOut.out == "Signed out.\n")
        }
    }

    @Test("quad logout forgets the person's cached timetable and kept responses; public data stays for offline use")
    func logoutForgetsPersonalData() async throws {
        try await LiveServer.with { server in
            let cli = CLI(server: server.url, clock: server.clock)
            _ = try await cli.run(["login", "--username", "kier"], stdin: server.passwords["kier"]! + "\n")
            #expect(try await cli.run(["timetable"]).status == 0)
            #expect(try await cli.run(["rooms"]).status == 0)
            let http = cli.cache.appendingPathComponent(OfflineStore.safeName(server.url.absoluteString))
                .appendingPathComponent("http")
            #expect(try FileManager.default.contentsOfDirectory(atPath: http.path).isEmpty == false)

            #expect(try await cli.run(["logout"]).status == 0)
            #expect(!FileManager.default.fileExists(atPath: http.path))
            await server.stop()
            let timetable = try await cli.run(["timetable"])
            #expect(timetable.status == 3 && timetable.out.isEmpty)
            #expect(timetable.err.hasSuffix("no timetable is cached yet\n"))
            let rooms = try await cli.run(["rooms"])
            #expect(rooms.status == 0 && rooms.out == CLITests.allRooms)
        }
    }

    @Test("Offline, quad library show prints the book as last seen (or as the list had it), with its age")
    func libraryShowOffline() async throws {
        try await LiveServer.with { server in
            let cli = CLI(server: server.url, clock: server.clock)
            struct Listed: Decodable { var books: [BookRecord] }
            let list = try JSONDecoder().decode(
                Listed.self, from: Data(try await cli.run(["library", "list", "--json"]).out.utf8))
            let (first, second) = (list.books[0].id, list.books[1].id)
            let shown = try await cli.run(["library", "show", String(first)])
            #expect(shown.status == 0 && shown.out.hasPrefix("Book \(first)\nTitle "))

            await server.stop()
            let again = try await cli.run(["library", "show", String(first)])
            #expect(again.status == 0 && again.out == shown.out)
            #expect(
                again.err.hasPrefix("Offline: showing book \(first) as saved ") && again.err.hasSuffix(" ago.\n")
                    || again.err == "Offline: showing book \(first) as saved just now.\n")
            let fromList = try await cli.run(["library", "show", String(second)])
            #expect(
                fromList.status == 0 && fromList.out.hasPrefix("Book \(second)\nTitle       \(list.books[1].title)\n"))
            let unknown = try await cli.run(["library", "show", "99999"])
            #expect(unknown.status == 3 && unknown.out.isEmpty)
            #expect(
                unknown.err
                    == "quad: offline: \(server.url.absoluteString) is unreachable and book 99999 is not cached\n")
        }
    }

    @Test("Offline, quad watch rooms shows the cached rooms with their age, then goes live when the server is back")
    func watchOffline() async throws {
        var server = try await LiveServer.start()
        let cli = CLI(server: server.url, clock: server.clock)
        var watcher: CLI.Running?
        do {
            #expect(try await cli.run(["rooms"]).status == 0)
            await server.stop()
            let running = try cli.start(["watch", "rooms"])
            watcher = running
            try await eventually("the cached rooms are shown") { running.err.contains("Waiting for the server") }
            #expect(running.err.hasPrefix("Offline: showing rooms saved "))
            #expect(running.out == CLITests.allRooms)

            server = try await server.restart()
            try await eventually("back online", timeout: .seconds(60)) { running.err.contains("Back online.\n") }
            try await eventually("the fresh table") { running.out == CLITests.allRooms + CLITests.allRooms }
            let grace = try await server.client(as: "grace")
            _ = try await grace.book(roomId: "yana", idempotencyKey: UUID().uuidString)
            try await eventually("the change is printed") { running.out.contains("Yana: 33 of 40 free, available\n") }
        } catch {
            watcher?.stop()
            await server.stop()
            throw error
        }
        watcher?.stop()
        await server.stop()
    }
}

extension CLI {
    /// Runs the command on a pseudo-terminal `columns` wide (through util-linux `script`), as a person at a
    /// terminal would: stdout is a TTY, so colour and the terminal's width apply. The output's CR LF are LF.
    func runOnTerminal(_ arguments: [String], columns: Int, stderrTo file: URL? = nil) async throws -> Result {
        let inner = process(arguments)
        func quoted(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: #"'\''"#) + "'" }
        let command =
            "stty cols \(columns) rows 50; exec "
            + ([CLI.binary!.path] + (inner.arguments ?? [])).map(quoted).joined(separator: " ")
            + (file.map { " 2>" + quoted($0.path) } ?? "")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        process.arguments = ["-qec", command, "/dev/null"]
        process.environment = inner.environment
        let result = try await execute(process)
        return Result(
            out: result.out.replacingOccurrences(of: "\r\n", with: "\n"), err: result.err, status: result.status)
    }
}
