import Foundation
import QuadCore
import QuadTestSupport
import Testing

@testable import QuadKit
@testable import quad

/// The specials mosaic in a terminal (golden output from a fixed input) and SpecialsStore against a real Quad.
@Suite("Specials in the kit and the command line", .serialized)
struct SpecialsKitTests {
    /// The first products of the original payload (`backup.json`): sizes, prices equal, lower and (once)
    /// "10.00" against "9.00", which a string comparison would get wrong.
    static let fixed = SpecialsList(
        canvasUnit: 16, currency: "USD",
        managerSpecials: [
            special("a", "Noodle Dish with Roasted Black Bean Sauce", 16, 8, "2.00", "1.00"),
            special("b", "Onion Flavored Rings", 8, 8, "2.00", "1.00"),
            special("c", "Kikkoman Less Sodium Soy Sauce", 8, 8, "9.00", "10.00"),
            special("d", "Organic Romaine Hearts", 14, 4, "3.92", "3.92"),
            special("e", "Navel Oranges 4LBS", 4, 6, "2.23", "1.29"),
            special("f", "Cheddar & Sour Ruffles", 4, 6, "1.49", "1.49"),
            special("g", "Doritos Ranch", 4, 6, "1.49", "1.49"),
            special("h", "Blue Diamond Almond Roasted Salted 6oz", 3, 3, "4.29", "4.29"),
        ])

    static func special(
        _ id: String, _ name: String, _ width: Int, _ height: Int, _ original: String, _ price: String
    ) -> Special {
        Special(
            id: id, displayName: name, width: width, height: height, imageUrl: "http://example.com/\(id).png",
            originalPrice: Money(original)!, price: Money(price)!)
    }

    static let golden40 = """
        ┌──────────────────────────────────────┐
        │                                 $1.00│
        │                             was $2.00│
        │Noodle Dish with Roasted Black Bean…  │
        └──────────────────────────────────────┘
        ┌──────────────────┐┌──────────────────┐
        │             $1.00││            $10.00│
        │         was $2.00││Kikkoman Less     │
        │Onion Flavored…   ││Sodium Soy Sauce  │
        └──────────────────┘└──────────────────┘
           ┌─────────────────────────────────┐
           │                            $3.92│
           │Organic Romaine Hearts           │
           └─────────────────────────────────┘
         ┌────────┐┌────────┐┌────────┐┌──────┐
         │   $1.29││   $1.49││   $1.49││ $4.29│
         │Navel…  ││Cheddar…││Doritos…││Blue… │
         └────────┘└────────┘└────────┘└──────┘

        """
    static let golden80 = """
        ┌──────────────────────────────────────────────────────────────────────────────┐
        │                                                                         $1.00│
        │                                                                     was $2.00│
        │Noodle Dish with Roasted Black Bean Sauce                                     │
        │                                                                              │
        │                                                                              │
        │                                                                              │
        │                                                                              │
        │                                                                              │
        └──────────────────────────────────────────────────────────────────────────────┘
        ┌──────────────────────────────────────┐┌──────────────────────────────────────┐
        │                                 $1.00││                                $10.00│
        │                             was $2.00││Kikkoman Less Sodium Soy Sauce        │
        │Onion Flavored Rings                  ││                                      │
        │                                      ││                                      │
        │                                      ││                                      │
        │                                      ││                                      │
        │                                      ││                                      │
        │                                      ││                                      │
        └──────────────────────────────────────┘└──────────────────────────────────────┘
             ┌────────────────────────────────────────────────────────────────────┐
             │                                                               $3.92│
             │Organic Romaine Hearts                                              │
             │                                                                    │
             └────────────────────────────────────────────────────────────────────┘
           ┌──────────────────┐┌──────────────────┐┌──────────────────┐┌─────────────┐
           │             $1.29││             $1.49││             $1.49││        $4.29│
           │         was $2.23││Cheddar & Sour    ││Doritos Ranch     ││Blue Diamond…│
           │Navel Oranges 4LBS││Ruffles           ││                  │└─────────────┘
           │                  ││                  ││                  │
           │                  ││                  ││                  │
           │                  ││                  ││                  │
           └──────────────────┘└──────────────────┘└──────────────────┘

        """

    @Test("The mosaic at 40 and 80 columns matches its golden output, every line as wide as asked at most")
    func goldens() throws {
        let forty = SpecialsMosaic.render(Self.fixed, width: 40)
        let eighty = SpecialsMosaic.render(Self.fixed, width: 80)
        #expect(forty == Self.golden40)
        #expect(eighty == Self.golden80)
        for line in forty.split(separator: "\n") { #expect(line.count <= 40) }
        for line in eighty.split(separator: "\n") { #expect(line.count <= 80) }
    }

    @Test("The original is struck through (ANSI) only when the terminal supports it and it is greater")
    func strikethrough() {
        let styled = SpecialsMosaic.render(
            Self.fixed, width: 80, style: TerminalStyle(colour: true, strikethrough: true))
        #expect(styled.contains(" \u{1B}[9m$2.00\u{1B}[29m│"))
        #expect(styled.contains("\u{1B}[9m$2.23\u{1B}[29m"))
        #expect(!styled.contains("was "))
        // "9.00" is not greater than "10.00": no original shown, struck or not.
        #expect(!styled.contains("$9.00"))
        #expect(styled.components(separatedBy: "\u{1B}[9m").count - 1 == 3)
        // Removing the escapes leaves the same boxes as plain output, line for line.
        let plainLines = SpecialsMosaic.render(Self.fixed, width: 80).split(separator: "\n").count
        #expect(styled.split(separator: "\n").count == plainLines)

        #expect(TerminalStyle.detect(isTTY: true, environment: ["TERM": "xterm-256color"]).strikethrough)
        #expect(!TerminalStyle.detect(isTTY: true, environment: ["TERM": "linux"]).strikethrough)
        #expect(!TerminalStyle.detect(isTTY: true, environment: ["TERM": "xterm", "NO_COLOR": "1"]).strikethrough)
        #expect(!TerminalStyle.detect(isTTY: false, environment: ["TERM": "xterm"]).strikethrough)
    }

    @Test("SpecialsStore: the demo mosaic, rows for a width from QuadCore's layout, live special events, offline")
    @MainActor
    func store() async throws {
        let folder = temporaryDirectory()
        try await LiveServer.with { server in
            var options = QuadClient.Options.forTests
            options.retry = RetryMiddleware(maxAttempts: 2, clock: InstantClock())
            let client = try await server.client(options: options)
            let store = SpecialsStore(
                session: KitSession(
                    client: client, offline: OfflineStore(directory: folder), refresh: .init(interval: .seconds(30))))
            #expect(await store.refresh())
            #expect(store.specials.count == 21 && store.canvasUnit == 16)
            #expect(store.specials.first?.displayName == "Noodle Dish with Roasted Black Bean Sauce")
            #expect(store.rows == SpecialsLayout.rows(store.specials, canvas: 16))
            let placed = store.rows(width: 390)
            #expect(placed.first?.specials.count == 1 && placed.first?.offsets == [0])
            #expect(placed.first.map { abs($0.height - 8 * 390.0 / 16) < 0.001 } == true)
            #expect(placed.flatMap(\.specials) == store.specials)

            // A manager's change arrives as a `special` event and refreshes the mosaic.
            await store.start()
            try await eventually("live") { store.isLive }
            let admin = QuadClient(serverURL: server.url, token: LiveServer.adminToken, options: .forTests)
            let id = try #require(store.specials.last?.id)
            let (response, _) = try await admin.send(
                .init(method: .delete, scheme: nil, authority: nil, path: "/api/specials/\(id)"),
                operationID: "deleteSpecial")
            #expect(response.status.code == 204)
            try await eventually("the deletion arrives") { store.specials.count == 20 }
            await store.stop()

            // Offline: the last mosaic stays, and a relaunch opens with it.
            await server.stop()
            #expect(!(await store.refresh()))
            #expect(store.isOffline && store.specials.count == 20)
            let relaunched = SpecialsStore(
                session: KitSession(
                    client: QuadClient(serverURL: server.url, options: .forTests),
                    offline: OfflineStore(directory: folder))
            )
            #expect(relaunched.specials.count == 20 && relaunched.lastUpdated != nil)
        }
    }

    @Test("quad specials draws the demo mosaic at --width; offline it draws the cached one")
    func commandLine() async throws {
        guard CLI.binary != nil else { return }
        try await LiveServer.with { server in
            let cli = CLI(server: server.url, clock: server.clock)
            let result = try await cli.run(["specials", "--width", "40"])
            #expect(result.status == 0 && result.err.isEmpty)
            let lines = result.out.split(separator: "\n")
            #expect(lines.first == "┌──────────────────────────────────────┐")
            #expect(lines.allSatisfy { $0.count <= 40 })
            #expect(result.out.contains("│Noodle Dish with Roasted Black Bean…  │"))
            #expect(result.out == SpecialsMosaic.render(try await server.client().specials().value, width: 40))
            #expect(!result.out.contains("\u{1B}"))

            await server.stop()
            let offline = try await cli.run(["specials", "--width", "40"])
            #expect(offline.status == 0 && offline.out == result.out)
            #expect(isOfflineNote(offline.err, "specials"))
            let narrow = try await cli.run(["specials", "--width", "3"])
            #expect(narrow.status == 64 || narrow.status == 2)
        }
    }
}
