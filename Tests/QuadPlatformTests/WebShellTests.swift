import Foundation
import Hummingbird
import HummingbirdTesting
import Mustache
import QuadTestSupport
import Testing

@testable import QuadPlatform
@testable import QuadServer

@Suite struct WebShellTests {
    @Test func theHomePageSpeaksTheBrowsersLanguage() async throws {
        try await TestApp.run { _, client in
            try await client.execute(uri: "/", method: .get, headers: [.acceptLanguage: "fr-CA,fr;q=0.9,en;q=0.5"]) {
                #expect($0.text.contains("<html lang=\"fr\">"))
                #expect($0.text.contains("<h1>Bienvenue sur Quad</h1>"))
                #expect($0.text.contains("aria-label=\"Langue\""))
            }
            try await client.execute(uri: "/", method: .get, headers: [.acceptLanguage: "de, en;q=0.3"]) {
                #expect($0.text.contains("<h1>Welcome to Quad</h1>"))
            }
        }
    }

    @Test func choosingALanguageIsRemembered() async throws {
        try await TestApp.run { _, client in
            let cookie = try await client.execute(uri: "/?lang=fr", method: .get) { response in
                #expect(response.status == .seeOther)
                #expect(response.headers[.location] == "/")
                return try #require(response.headers[.setCookie])
            }
            #expect(cookie.hasPrefix("quad_lang=fr"))
            #expect(cookie.contains("SameSite=Lax"))
            try await client.execute(
                uri: "/", method: .get, headers: [.cookie: "quad_lang=fr", .acceptLanguage: "en"]
            ) { #expect($0.text.contains("<html lang=\"fr\">")) }
        }
    }

    @Test func theShellHasItsLandmarks() async throws {
        try await TestApp.run { _, client in
            try await client.execute(uri: "/", method: .get) { response in
                let html = response.text
                #expect(response.headers[.contentType] == "text/html; charset=utf-8")
                #expect(html.contains("<a class=\"skip-link\" href=\"#main\">Skip to content</a>"))
                #expect(html.contains("<main id=\"main\""))
                #expect(html.contains("<nav class=\"services\" aria-label=\"Services\">"))
                #expect(html.contains("hreflang=\"fr\""))
                #expect(html.contains("name=\"viewport\""))
            }
        }
    }

    /// Every file in `static/` is served at a content-hash URL, and the service worker keeps every one of them for
    /// offline use, so a script or stylesheet added to the folder reaches pages and the offline shell without
    /// being listed anywhere.
    @Test func everyStaticFileIsAnAssetTheOfflineShellKeeps() async throws {
        try await TestApp.run(at: TestTime.weekdayMorning, configure: { $0.loadDemoData = true }) { app, client in
            let member = try await app.signedIn("ada")
            var referenced: Set<String> = []
            for page in ["/", "/rooms", "/specials", "/library", "/timetable"] {
                try await client.execute(uri: page, method: .get, headers: member) { response in
                    #expect(response.status == .ok, "\(page)")
                    for match in response.text.matches(
                        of: /(?:href|src)="(\/assets\/[a-z0-9-]+\.[0-9a-f]{12}\.(?:js|css|png))"/)
                    {
                        referenced.insert(String(match.1))
                    }
                }
            }
            let shell = try await client.execute(uri: "/sw.js", method: .get) { response in
                Set(response.text.matches(of: /"(\/assets\/[^"]+)"/).map { String($0.1) })
            }
            let files = try Self.staticFolders.flatMap {
                (try? FileManager.default.contentsOfDirectory(atPath: $0.path)) ?? []
            }.filter { $0 != "sw.js" }
            #expect(shell.count == files.count)
            #expect(referenced.isSubset(of: shell), "pages use assets the offline shell lacks")
            for name in files {
                let stem = name.split(separator: ".")
                #expect(
                    shell.contains { $0.hasPrefix("/assets/\(stem[0]).") && $0.hasSuffix(".\(stem[1])") }, "\(name)")
            }
            for path in shell {
                try await client.execute(uri: path, method: .get) { response in
                    #expect(response.status == .ok)
                    let type = ["js": "text/javascript", "css": "text/css", "png": "image/png"][
                        String(path.split(separator: ".").last ?? "")]
                    #expect(type != nil && response.headers[.contentType]?.hasPrefix(type ?? "-") == true, "\(path)")
                }
            }
        }
    }

    /// The manifest that makes Quad installable names what a home screen needs, and every icon it names is served
    /// as a PNG; every page links to it.
    @Test func theManifestNamesIconsThatAreServed() async throws {
        try await TestApp.run { _, client in
            let manifest = try await client.execute(uri: "/manifest.webmanifest", method: .get) { response in
                #expect(response.headers[.contentType] == "application/manifest+json")
                return try JSONSerialization.jsonObject(with: Data(response.text.utf8)) as? [String: Any] ?? [:]
            }
            #expect(manifest["display"] as? String == "standalone" && manifest["start_url"] as? String == "/")
            let icons = manifest["icons"] as? [[String: String]] ?? []
            #expect(
                Set(icons.map { "\($0["purpose"] ?? "") \($0["sizes"] ?? "")" }) == [
                    "any 192x192", "any 512x512", "maskable 512x512",
                ])
            for icon in icons {
                try await client.execute(uri: icon["src"] ?? "", method: .get) { response in
                    #expect(response.status == .ok && response.headers[.contentType] == "image/png")
                    #expect(response.body.readableBytesView.starts(with: [0x89, 0x50, 0x4E, 0x47]))
                }
            }
            try await client.execute(uri: "/", method: .get) { response in
                #expect(response.text.contains(#"<link rel="manifest" href="/manifest.webmanifest">"#))
            }
        }
    }

    /// A page's live part comes alone at `?fragment=live`, drawn from the same model as the page, with an ETag: a
    /// page that has it already gets a 304, and a page in another language gets its own.
    @Test func aPagesLivePartComesAloneWithAnETag() async throws {
        try await TestApp.run(at: TestTime.weekdayMorning, configure: { $0.loadDemoData = true }) { app, client in
            var member = try await app.signedIn("ada")
            // The page's forms carry the browser's CSRF token: a browser has its cookie from the page.
            member[.cookie] = "quad_csrf=e2e-csrf-token-0123456789abcdefghijklmnop"
            let etag = try await client.execute(uri: "/rooms?fragment=live", method: .get, headers: member) {
                response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "text/html; charset=utf-8")
                #expect(response.headers[.cacheControl] == "no-cache, private")
                #expect(response.headers[.vary] == "Accept-Language, Cookie, Accept-Encoding")
                #expect(response.text.contains(#"class="room-card""#))
                #expect(response.text.contains(#"id="my-bookings""#), "the person's own part")
                #expect(!response.text.contains("<html"), "the fragment alone, not the page")
                return try #require(response.headers[.eTag])
            }
            var again = member
            again[.ifNoneMatch] = etag
            try await client.execute(uri: "/rooms?fragment=live", method: .get, headers: again) {
                #expect($0.status == .notModified)
            }
            again[.acceptLanguage] = "fr"
            try await client.execute(uri: "/rooms?fragment=live", method: .get, headers: again) {
                #expect($0.status == .ok)
                #expect($0.text.contains("Réserver"))
            }
            try await client.execute(uri: "/rooms?fragment=nothing", method: .get, headers: member) {
                #expect($0.status == .notFound)
            }
        }
    }

    /// What page scripts say comes in one JSON block in the layout, in the page's language, encoded so that no
    /// text can end the script element or open a comment in it.
    @Test func scriptStringsAreOneJSONBlockThatCannotEndTheScript() async throws {
        try await TestApp.run { _, client in
            try await client.execute(uri: "/rooms", method: .get, headers: [.acceptLanguage: "fr"]) { response in
                let html = response.text
                let start = try #require(html.range(of: #"<script type="application/json" id="quad-strings">"#))
                let end = try #require(html.range(of: "</script>", range: start.upperBound..<html.endIndex))
                let strings = try #require(
                    try JSONSerialization.jsonObject(with: Data(html[start.upperBound..<end.lowerBound].utf8))
                        as? [String: Any])
                #expect(strings["lang"] as? String == "fr")
                #expect((strings["strings"] as? [String: String])?["time.justNow"] == "Mis à jour à l’instant")
                #expect((strings["plurals"] as? [String: Any])?["time.minutesAgo"] != nil)
            }
        }
        let hostile = ScriptJSON.escape(Data(#"{"name":"<!--<script>&</script>\#u{2028}"}"#.utf8))
        #expect(!hostile.contains("<") && !hostile.contains(">") && !hostile.contains("&"))
        #expect(!hostile.contains("\u{2028}"))
        let read = try JSONSerialization.jsonObject(with: Data(hostile.utf8)) as? [String: String]
        #expect(read?["name"] == "<!--<script>&</script>\u{2028}")
    }

    /// Every module's web files' `static/` in the sources (the tests read what the build copies from them).
    static var staticFolders: [URL] {
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
            "../../Sources")
        let modules = (try? FileManager.default.contentsOfDirectory(atPath: sources.path)) ?? []
        return modules.map { sources.appendingPathComponent("\($0)/Web/static") }
    }
}

/// Pages render from `MustacheTree`'s dictionaries exactly as from the models themselves.
@Suite struct MustacheTreeTests {
    struct Card {
        let name: String
        let spots: Int
        let free: Bool
        let note: String?
        let tags: [String]
    }

    struct Page {
        let title: String?
        let cards: [Card]
        let empty: [Card]
        let count: Int?
    }

    struct Frame {
        let title: String
        let t: [String: Any]
        let page: Page
        let pair: (left: String, right: Int)
    }

    @Test func aModelRendersTheSameAsItsTree() throws {
        let template = try MustacheTemplate(
            string: """
                {{title}}|{{#page}}[{{title}}]{{#cards}}<{{name}} {{spots}} {{#free}}free{{/free}}{{^free}}full{{/free}} \
                {{note}}{{^note}}-{{/note}} {{#tags}}{{.}},{{/tags}}{{t.greeting}} {{title}}>{{/cards}}\
                {{^empty}}none{{/empty}}{{count}}{{/page}}{{pair.left}}{{pair.right}}{{missing.deep}}
                """)
        let frame = Frame(
            title: "Frame & co", t: ["greeting": "hello"],
            page: Page(
                title: nil,
                cards: [
                    Card(name: "A", spots: 3, free: true, note: "<b>", tags: ["x", "y"]),
                    Card(name: "B", spots: 0, free: false, note: nil, tags: []),
                ], empty: [], count: 0),
            pair: ("l", 2))
        let direct = template.render(frame)
        #expect(direct.contains("[Frame &amp; co]"), "a nil field climbs to the frame's: \(direct)")
        #expect(template.render(MustacheTree.make(frame)) == direct)
    }
}
