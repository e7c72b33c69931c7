import Crypto
import Foundation
import Hummingbird
import Mustache
import QuadCore

/// A service as the navigation and the home page show it; its name and summary come from the
/// localisation files (`<key>.name`, `<key>.summary`).
public struct ServiceLink: Sendable {
    public let key: String
    public let path: String
    /// The tab bar's picture of it: SVG path data on a 24 x 24 grid, drawn as a 2-unit line in the text's colour.
    public let icon: String

    package init(key: String, path: String, icon: String) {
        self.key = key
        self.path = path
        self.icon = icon
    }
}

/// The web app's frame: templates, the stylesheet and script under content-hash URLs, the service
/// worker and the language choice. (The home page, `/`, is Today's.)
package final class WebShell: Sendable {
    private let library: MustacheLibrary
    private let check: TemplateCheck?
    /// By path, with the gzipped bytes made once here (nil when gzip does not make them smaller).
    private let assets: [String: (bytes: ByteBuffer, type: String, gzipped: ByteBuffer?)]
    /// By name and extension, for templates: `{{assets.rooms.js}}`, `{{assets.app.css}}`.
    private let assetPaths: [String: [String: String]]
    private let serviceWorker: ByteBuffer
    private let manifest: ByteBuffer
    private let services: [ServiceLink]
    /// The features' pages for admins, listed on `/admin`.
    private let adminLinks: [AdminLink]
    /// The state of this Quad, shown on `/admin` (nil: only the links, as in tests that build a shell alone).
    private let status: InstanceStatus?
    /// For the held offers' minutes left.
    private let clock: any QuadClock
    static let languageCookie = "quad_lang"
    /// The platform's own: the frame (layout, languages, sign-out), the offline and error pages, the shared
    /// scripts (`live.js`, `writes.js`, `i18n.js`), the stylesheet, the icons and the service worker.
    static let files = WebFiles(module: "QuadPlatform", bundle: .module)

    /// The platform's own web files (the frame, the shared scripts and styles) and each feature's;
    /// `sources`: read them from the working copy (`QUAD_WEB_DIR`).
    /// `checkTemplates`: check each page's template against its model as it is drawn (`TemplateCheck`; testing mode).
    package init(
        services: [ServiceLink], adminLinks: [AdminLink] = [], webs: [WebFiles], clock: any QuadClock,
        sources: String? = nil, checkTemplates: Bool = false, status: InstanceStatus? = nil
    )
        async throws
    {
        self.clock = clock
        self.adminLinks = adminLinks
        self.status = status
        let folders = try ([Self.files] + webs).map { ($0.module, try $0.folder(sources: sources)) }
        let web = folders[0].1  // the platform's: the service worker is there
        let templates = try WebFiles.load(folders)
        self.library = templates.library
        self.check = checkTemplates ? TemplateCheck(sources: templates.sources) : nil
        let files = try WebAssets(directories: folders.map { $0.1.appendingPathComponent("static") })
        var assets: [String: (ByteBuffer, String, ByteBuffer?)] = [:]
        var paths: [String: [String: String]] = [:]
        for (name, asset) in files.byName {
            let parts = name.split(separator: ".").map(String.init)
            assets[asset.path] = (asset.bytes, asset.type, Gzip.compress(asset.bytes))
            paths[parts[0], default: [:]][parts[1]] = asset.path
        }
        self.assets = assets
        self.assetPaths = paths
        let all = assets.keys.sorted()
        let version = SHA256.hash(data: Data(all.joined().utf8)).prefix(6).hex
        // The shell the service worker keeps for offline use: the home page, the page for what is not kept, and
        // every asset.
        let shellURLs = "[" + (["/", "/offline"] + all).map { "\"\($0)\"" }.joined(separator: ", ") + "]"
        let worker = try String(contentsOf: web.appendingPathComponent("static/sw.js"), encoding: .utf8)
            .replacingOccurrences(of: "{{version}}", with: version)
            .replacingOccurrences(of: "{{shellURLs}}", with: shellURLs)
        self.serviceWorker = ByteBuffer(string: worker)
        self.manifest = try WebManifest.bytes(assetPaths: paths)
        self.services = services
    }

    /// How many services the navigation lists.
    package var serviceCount: Int { services.count }

    /// What needs the signed-in person, drawn alone (the badge and the held offers, as every page's frame has them):
    /// what an open page fetches when their places, loans or bookings change, or their time is up.
    package static let attentionPath = "/me/attention"

    /// Today's tab: a house (a visitor's home too).
    static let todayIcon = "M3 11 12 3l9 8M5 9.5V21h5v-6h4v6h5V9.5"

    package func register(on routes: Routes) {
        // An admin's index: every feature's pages for admins.
        routes.on(.get, "/admin", .admin) { request, _ in
            let facts = await self.status?.facts(Localizer(language: self.language(for: request))) ?? []
            return try self.page(request, template: "admin", title: { $0("admin.title") }) { t in
                AdminPage(
                    links: self.adminLinks.map { AdminPage.Link(title: t($0.title), path: $0.path) }, facts: facts,
                    hasFacts: !facts.isEmpty)
            }
        }
        routes.on(.get, Self.attentionPath, .member) { request, _ in
            Self.part(
                try self.render(request, template: "attention", title: { _ in "" }) { _ in AttentionPage() },
                request: request)
        }
        // What the service worker shows for a page never opened on this device, offline (kept when it installs).
        routes.on(.get, "/offline", .public) { request, _ in
            try self.page(request, template: "offline", title: { $0("offline.title") }) { _ in OfflinePage() }
        }
        routes.on(.get, "/assets/:file", .public) { request, context -> Response in
            guard let asset = self.assets[request.uri.path] else { throw HTTPError(.notFound) }
            let etag = "\"\(context.parameters.get("file") ?? "")\""
            guard let gzipped = asset.gzipped, Gzip.accepted(request.headers[.acceptEncoding]) else {
                return HTTPCache.response(
                    asset.bytes, etag: etag, contentType: asset.type, policy: .immutable, request: request)
            }
            var response = HTTPCache.response(
                gzipped, etag: Gzip.etag(etag), contentType: asset.type, policy: .immutable, request: request)
            if response.status == .ok { response.headers[.contentEncoding] = "gzip" }
            response.headers.addVary(.acceptEncoding)
            return response
        }
        routes.on(.get, "/sw.js", .public) { request, _ in
            HTTPCache.response(
                self.serviceWorker, etag: HTTPCache.etag(for: self.serviceWorker.readableBytesView),
                contentType: "text/javascript; charset=utf-8", policy: .revalidate, request: request)
        }
        routes.on(.get, "/manifest.webmanifest", .public) { request, _ in
            HTTPCache.response(
                self.manifest, etag: HTTPCache.etag(for: self.manifest.readableBytesView),
                contentType: "application/manifest+json", policy: .revalidate, request: request)
        }
    }

    /// The page's language: a `?lang=` choice (remembered in a cookie), the cookie, then `Accept-Language`.
    package func language(for request: Request) -> Language {
        if let chosen = request.uri.queryParameters.get("lang").flatMap({ Language(code: $0) }) { return chosen }
        if let cookie = request.cookies[Self.languageCookie].flatMap({ Language(code: $0.value) }) { return cookie }
        return Language.negotiate(acceptLanguage: request.headers[.acceptLanguage])
    }

    /// Renders a page in the layout, around its `model`. A `?lang=` choice is stored and the page reloaded
    /// without it. `strings` are what the page's scripts say (`i18n.js` reads them from the layout).
    ///
    /// `?fragment=<name>` answers one of the page's `fragments` alone (a template rendered from the same model,
    /// with an ETag): what `live.js` fetches and merges into the page, so every redraw is the server's markup.
    ///
    /// `keptUntilChangeOf`: the page shows nothing but the request, who is signed in, and what the hub announces
    /// changes of, with these types (events or notices): the fast path may answer the same request again with it
    /// (`PageCache`) until one of them, or `keptUntil` its model.
    package func page<Model>(
        _ request: Request, template: String, status: HTTPResponse.Status = .ok, title: (Localizer) -> String,
        strings: ScriptStrings = .init(), fragments: [String: String] = [:],
        keptUntilChangeOf types: [HubChange]? = nil,
        keptUntil: (Model) -> Date? = { _ in nil }, model: (Localizer) throws -> Model
    ) throws -> Response {
        if let chosen = request.uri.queryParameters.get("lang").flatMap({ Language(code: $0) }) {
            var response = Response.seeOther(request.uri.path)
            response.setCookie(
                .init(
                    name: Self.languageCookie, value: chosen.rawValue, maxAge: 365 * 24 * 3600, path: "/",
                    sameSite: .lax))
            return response
        }
        let (csrf, csrfCookie) = CSRF.token(for: request)
        var response: Response
        if let name = request.uri.queryParameters.get("fragment") {
            guard let fragment = fragments[name] else {
                throw Problem.notFound("This page has no such part.")
            }
            response = Self.part(
                try render(request, template: fragment, title: title, csrf: csrf, model: model), request: request)
        } else {
            var built: Model?
            let html = try render(request, template: template, title: title, csrf: csrf, strings: strings) {
                let page = try model($0)
                built = page
                return page
            }
            response = Response(
                status: status, headers: [.contentType: "text/html; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: html)))
            if let types, status == .ok, csrfCookie == nil, let built {
                // The frame's badge and held offers change with the person's places, loans and bookings, and in time.
                let attention = RequestInfo.current.attention
                response.headers[PageCache.keepHeader] = PageCache.keepValue(
                    until: [keptUntil(built), attention?.changesAt].compactMap { $0 }.min(),
                    person: RequestInfo.current.person, types: attention == nil ? types : types + Attention.changes)
            }
        }
        Self.personal(&response)
        if let csrfCookie { response.setCookie(csrfCookie) }
        return response
    }

    /// A part of a page alone (a fragment, the badge), with its ETag, for the scripts that put it in place.
    static func part(_ html: String, request: Request) -> Response {
        var response = HTTPCache.response(
            ByteBuffer(string: html), etag: HTTPCache.etag(for: Data(html.utf8)),
            contentType: "text/html; charset=utf-8", policy: .revalidate, request: request)
        personal(&response)
        return response
    }

    /// Personal (the person, their language): no shared cache keeps it, and each copy is checked first.
    static func personal(_ response: inout Response) {
        response.headers[.cacheControl] = "no-cache, private"
        response.headers[.vary] = "Accept-Language, Cookie"
    }

    /// What every page's template sees: the frame's values (the layout's), and the page's own `model` under
    /// `page` (templates write their content in `{{#page}}…{{/page}}`, where the frame's values stay in reach).
    package struct Frame<Model> {
        let lang: String
        let title: String
        /// The localisation table, so templates write `{{t.home.title}}`.
        let t: [String: Any]
        /// Each asset's content-hash URL, by name and extension: `{{assets.rooms.js}}`.
        let assets: [String: [String: String]]
        /// The first tab: Today (a visitor's home), with the badge.
        let home: Service
        let services: [Service]
        let languages: [LanguageChoice]
        let path: String
        let me: Me?
        /// What needs the signed-in person (the badge, the held offers), when the request asked (`AttentionMiddleware`).
        let attention: AttentionView?
        /// The held offers' banner: on every page but Today, which lists them first itself.
        let showsOffers: Bool
        let notificationsCurrent: Bool
        let csrf: String
        /// What the page's scripts say, as JSON for a `<script type="application/json">` (the layout's).
        let scriptStrings: String
        let page: Model

        struct Service {
            let name: String
            let summary: String
            let path: String
            let icon: String
            let current: Bool
            /// Today's tab carries the badge.
            let badge: AttentionView?
        }

        struct LanguageChoice {
            let code: String
            let name: String
            let current: Bool
        }

        struct Me {
            let displayName: String
            let username: String
            let isAdmin: Bool
        }
    }

    /// The page's HTML: `template` with the frame around `model`.
    package func render<Model>(
        _ request: Request, template: String, title: (Localizer) -> String, csrf: String = "",
        strings: ScriptStrings = .init(), model: (Localizer) throws -> Model
    ) throws -> String {
        let language = language(for: request)
        let localizer = Localizer(language: language)
        let path = request.uri.path
        let person = RequestInfo.current.person
        let attention = RequestInfo.current.attention.map { AttentionView($0, now: clock.now, t: localizer) }
        // Today (a visitor's home) is the first tab.
        let home = Frame<Model>.Service(
            name: localizer(person == nil ? "shell.home" : "shell.today"), summary: "", path: "/", icon: Self.todayIcon,
            current: path == "/", badge: attention)
        let frame = Frame(
            lang: language.rawValue, title: title(localizer), t: Strings.table(for: language), assets: assetPaths,
            home: home,
            services: services.map { service in
                .init(
                    name: localizer("\(service.key).name"), summary: localizer("\(service.key).summary"),
                    path: service.path, icon: service.icon, current: path.hasPrefix(service.path), badge: nil)
            },
            languages: Language.allCases.map {
                .init(code: $0.rawValue, name: $0.nativeName, current: $0 == language)
            },
            path: path,
            me: person.map { .init(displayName: $0.displayName, username: $0.username, isAdmin: $0.isAdmin) },
            attention: attention, showsOffers: path != "/", notificationsCurrent: path.hasPrefix("/notifications"),
            csrf: csrf, scriptStrings: ScriptJSON.strings(localizer, strings), page: try model(localizer))
        try check?.check(template, model: frame)
        return library.render(MustacheTree.make(frame), withTemplate: template) ?? ""
    }

    /// The HTML answer to an error on a web route, for browsers.
    func errorPage(_ problem: Problem, request: Request) -> Response? {
        guard request.headers[.accept]?.contains("text/html") == true else { return nil }
        let notFound = problem.status == .notFound
        // Problems are written in English (the API's words): a page in another language says what happened in its own,
        // and a problem's own sentence, which says more than a 404's, marked as English for screen readers.
        let english = language(for: request) == .english
        return try? page(request, template: "error", status: problem.status, title: { $0("error.title") }) { t in
            ErrorPage(
                heading: notFound ? t("error.notFound") : t("error.title"),
                message: english ? problem.detail ?? "" : t(notFound ? "error.notFoundHint" : "error.tryAgain"),
                detail: english || notFound ? nil : problem.detail,
                reference: problem.requestId.map { t("error.reference", ["id": $0]) })
        }
    }
}

/// What a page's scripts say, in the page's language: texts by key and plural forms by key. The freshness line's
/// texts (`time.*`) are always there, for `live.js`.
package struct ScriptStrings: Sendable {
    let keys: [String]
    let plurals: [String]

    package init(_ keys: [String] = [], plurals: [String] = []) {
        self.keys = keys + ["time.justNow", "time.updating"]
        // The held offers' countdown is on every page of a signed-in person (`attention.js`).
        self.plurals = plurals + ["time.secondsAgo", "time.minutesAgo", "today.minutesLeft"]
    }
}

/// A form as a page shows it: its fields' values (what was typed, or the row being edited), whether it edits an
/// existing row, and each field's error. Templates read a field by its name (`{{classForm.weeks}}`), and
/// `{{classForm.editing}}`, `{{classForm.errors.weeks}}`.
package struct FormValues: MustacheParent {
    package var values: [String: String] = [:]
    package var editing = false
    package var errors: [String: String] = [:]

    package init(values: [String: String] = [:], editing: Bool = false, errors: [String: String] = [:]) {
        self.values = values
        self.editing = editing
        self.errors = errors
    }

    package func child(named name: String) -> Any? {
        switch name {
        case "editing": editing
        case "errors": errors
        default: values[name]
        }
    }
}

/// The page for a page not kept on this device, offline: it shows only the frame's texts.
struct OfflinePage {}

/// `/admin`: what an admin can manage, a card per page.
struct AdminPage {
    let links: [Link]
    /// The state of this Quad.
    let facts: [InstanceStatus.Fact]
    /// (Stored: templates see stored properties only.)
    let hasFacts: Bool

    struct Link {
        let title: String
        let path: String
    }
}

/// The badge and held offers alone (`WebShell.attentionPath`): the frame's values are all it shows.
struct AttentionPage {}

/// What needs the person, as the frame draws it: the badge (its number, and what a screen reader says) and each held
/// offer with its minutes left.
struct AttentionView {
    let count: Int
    let hasCount: Bool
    /// "2 things need you now", read out with the link the badge is on.
    let countText: String
    let offers: [Offer]
    let hasOffers: Bool
    /// When it changes by itself (ms since 1970): an open page asks again then.
    let refreshAt: Int?

    struct Offer {
        let id: String
        let heldText: String
        let leftText: String
        /// When it ends (ms since 1970), for the countdown.
        let untilMs: Int
    }

    init(_ attention: Attention, now: Date, t: Localizer) {
        count = attention.count
        hasCount = attention.count > 0
        countText = t("today.needsYou", count: attention.count)
        offers = attention.offers.map {
            Offer(
                id: $0.id, heldText: t("shell.heldForYou", ["label": $0.label]),
                leftText: t("today.minutesLeft", count: Int(($0.until.timeIntervalSince(now) / 60).rounded(.up))),
                untilMs: $0.until.milliseconds)
        }
        hasOffers = !offers.isEmpty
        refreshAt = attention.changesAt?.milliseconds
    }
}

/// A problem on a web route, for a browser.
struct ErrorPage {
    let heading: String
    let message: String
    /// The problem's own sentence, in English, on a page in another language.
    let detail: String?
    let reference: String?
}

/// The localisation table as nested dictionaries, so templates write `{{t.home.title}}`.
enum Strings {
    private final class Tables: @unchecked Sendable {
        let byLanguage: [Language: [String: Any]]
        package init() {
            var tables: [Language: [String: Any]] = [:]
            for language in Language.allCases {
                let localizer = Localizer(language: language)
                var root: [String: Any] = [:]
                for key in localizer.keys.union(Localizer(language: .fallback).keys) {
                    Self.insert(localizer(key), at: key.split(separator: ".").map(String.init)[...], into: &root)
                }
                tables[language] = root
            }
            byLanguage = tables
        }

        static func insert(_ value: String, at path: ArraySlice<String>, into node: inout [String: Any]) {
            guard let head = path.first else { return }
            if path.count == 1 {
                node[head] = value
            } else {
                var child = node[head] as? [String: Any] ?? [:]
                insert(value, at: path.dropFirst(), into: &child)
                node[head] = child
            }
        }
    }
    private static let tables = Tables()

    package static func table(for language: Language) -> [String: Any] {
        tables.byLanguage[language] ?? [:]
    }
}
