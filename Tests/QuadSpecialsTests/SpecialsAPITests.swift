import Foundation
import Hummingbird
import HummingbirdTesting
import QuadCore
import QuadTestSupport
import Testing

@testable import QuadAccounts
@testable import QuadPlatform
@testable import QuadServer
@testable import QuadSpecials

@Suite struct SpecialsAPITests {
    static let admin: HTTPFields = [.authorization: "Bearer \(TestApp.adminToken)", .contentType: "application/json"]

    /// A test app with the demo data (the 21 products of the original payload).
    static func run(
        _ engine: Database.Engine = .sqlite,
        _ body: @escaping @Sendable (TestApp, any TestClientProtocol) async throws -> Void
    ) async throws {
        try await TestApp.run(engine, at: TestTime.weekdayMorning, configure: { $0.loadDemoData = true }, body)
    }

    // The original app's models, as the reference describes them.
    struct Specials: Decodable {
        var canvasUnit: Int
        var managerSpecials: [Product]
    }
    struct Product: Decodable {
        var displayName: String
        var height: Int
        var imageUrl: URL
        var originalPrice: String
        var price: String
        var width: Int

        enum CodingKeys: String, CodingKey {
            case height, imageUrl, price, width
            case displayName = "display_name"
            case originalPrice = "original_price"
        }
    }

    static func list(_ client: any TestClientProtocol) async throws -> Specials {
        try await client.execute(uri: "/api/specials", method: .get) { response in
            #expect(response.status == .ok)
            return try JSONDecoder().decode(Specials.self, from: Data(buffer: response.body))
        }
    }

    static func body(_ json: [String: Any]) -> ByteBuffer {
        ByteBuffer(data: try! JSONSerialization.data(withJSONObject: json))
    }

    nonisolated(unsafe) static let noodles: [String: Any] = [
        "display_name": "Fresh Noodles", "width": 8, "height": 4, "original_price": "10.00", "price": "9.00",
    ]

    /// The first `special` event's payload after `body`, within two seconds.
    static func firstEvent(
        _ app: TestApp, after body: () async throws -> Void
    ) async throws -> [String: Any]? {
        let subscription = app.platform.events.subscribe(after: nil, types: [.special])
        defer { subscription.cancel() }
        try await body()
        let event = await first(subscription.events)
        return event.flatMap { try? JSONSerialization.jsonObject(with: Data($0.data.utf8)) as? [String: Any] }
    }

    /// `body`, once the app's event hub listens (PostgreSQL delivers through its LISTEN loop).
    static func withEvents(_ app: TestApp, _ body: () async throws -> Void) async throws {
        try await app.listening(body)
    }

    @Test(arguments: TestDatabase.engines)
    func theOriginalAppDecodesTheDemoSpecialsInOrder(engine: Database.Engine) async throws {
        try await Self.run(engine) { _, client in
            let specials = try await Self.list(client)
            #expect(specials.canvasUnit == 16)
            #expect(specials.managerSpecials.count == 21)
            #expect(
                specials.managerSpecials.map(\.width) == [
                    16, 8, 8, 14, 4, 4, 4, 4, 16, 16, 9, 5, 3, 3, 3, 3, 12, 4, 5, 5, 5,
                ])
            let first = try #require(specials.managerSpecials.first)
            #expect(first.displayName == "Noodle Dish with Roasted Black Bean Sauce")
            #expect(first.height == 8 && first.originalPrice == "2.00" && first.price == "1.00")
            #expect(specials.managerSpecials.last?.price == "1.01")
            #expect(first.imageUrl.scheme == "http" && first.imageUrl.path.hasPrefix("/images/"))
            try await client.execute(uri: first.imageUrl.path, method: .get) { #expect($0.status == .ok) }
        }
    }

    @Test func theListRevalidatesAndChangesWithAnEdit() async throws {
        try await Self.run { _, client in
            let etag = try await client.execute(uri: "/api/specials", method: .get) { response in
                #expect(response.headers[.cacheControl] == "no-cache")
                return try #require(response.headers[.eTag])
            }
            try await client.execute(uri: "/api/specials", method: .get, headers: [.ifNoneMatch: etag]) {
                #expect($0.status == .notModified)
            }
            try await client.execute(
                uri: "/api/specials", method: .post, headers: Self.admin, body: Self.body(Self.noodles)
            ) { #expect($0.status == .created) }
            try await client.execute(uri: "/api/specials", method: .get, headers: [.ifNoneMatch: etag]) { response in
                #expect(response.status == .ok)
                #expect(response.text.contains("Fresh Noodles"))
            }
        }
    }

    @Test(arguments: TestDatabase.engines)
    func managersCreateEditReorderAndDeleteEachPublishingAnEvent(engine: Database.Engine) async throws {
        try await TestApp.run(engine) { app, client in
            try await Self.withEvents(app) {
                var id = ""
                let created = try await Self.firstEvent(app) {
                    id = try await client.execute(
                        uri: "/api/specials", method: .post, headers: Self.admin, body: Self.body(Self.noodles)
                    ) { response in
                        #expect(response.status == .created)
                        #expect(response.json["price"] as? String == "9.00")
                        #expect((response.json["imageUrl"] as? String)?.contains("/images/") == true)  // a letter tile
                        return try #require(response.json["id"] as? String)
                    }
                }
                #expect(created?["change"] as? String == "created")
                #expect(created?["id"] as? String == id)

                var second = ""
                // Awaited like the others, so its event cannot arrive in place of the next change's.
                let createdSecond = try await Self.firstEvent(app) {
                    try await client.execute(
                        uri: "/api/specials", method: .post, headers: Self.admin,
                        body: Self.body([
                            "display_name": "Rice", "width": 4, "height": 4, "original_price": "3", "price": "2.5",
                        ])
                    ) { second = try #require($0.json["id"] as? String) }
                }
                #expect(createdSecond?["id"] as? String == second)
                #expect(try await Self.list(client).managerSpecials.map(\.displayName) == ["Fresh Noodles", "Rice"])

                let updated = try await Self.firstEvent(app) {
                    try await client.execute(
                        uri: "/api/specials/\(id)", method: .patch, headers: Self.admin,
                        body: Self.body(["price": "5", "promotion": "2 for $9"])
                    ) { response in
                        #expect(response.status == .ok)
                        #expect(response.json["price"] as? String == "5.00")
                        #expect(response.json["original_price"] as? String == "10.00")
                    }
                }
                #expect(updated?["change"] as? String == "updated")

                let reordered = try await Self.firstEvent(app) {
                    try await client.execute(
                        uri: "/api/specials/order", method: .put, headers: Self.admin,
                        body: Self.body(["ids": [second, id]])
                    ) { #expect($0.status == .ok) }
                }
                #expect(reordered?["change"] as? String == "reordered")
                #expect(try await Self.list(client).managerSpecials.map(\.displayName) == ["Rice", "Fresh Noodles"])

                let deleted = try await Self.firstEvent(app) {
                    try await client.execute(uri: "/api/specials/\(second)", method: .delete, headers: Self.admin) {
                        #expect($0.status == .noContent)
                    }
                }
                #expect(deleted?["change"] as? String == "deleted")
                #expect(try await Self.list(client).managerSpecials.map(\.displayName) == ["Fresh Noodles"])
                try await client.execute(uri: "/api/specials/\(second)", method: .get) {
                    #expect($0.status == .notFound)
                }
            }
        }
    }

    @Test func onlyAdminsChangeSpecials() async throws {
        try await TestApp.run { app, client in
            let member = try await app.signedIn("ada")
            try await client.execute(
                uri: "/api/specials", method: .post, headers: member, body: Self.body(Self.noodles)
            ) { #expect($0.status == .forbidden) }
            try await client.execute(
                uri: "/api/specials", method: .post, headers: [.contentType: "application/json"],
                body: Self.body(Self.noodles)
            ) { #expect($0.status == .unauthorized) }
            #expect(try await Self.list(client).managerSpecials.isEmpty)
        }
    }

    @Test(arguments: TestDatabase.engines)
    func invalidInputIs422NamingEachFieldAndWritesNothing(engine: Database.Engine) async throws {
        try await TestApp.run(engine) { _, client in
            try await client.execute(
                uri: "/api/specials", method: .post, headers: Self.admin,
                body: Self.body([
                    "display_name": "", "width": 20, "height": 4, "original_price": "2.00", "price": "1.2.3",
                ])
            ) { response in
                #expect(response.status == .unprocessableContent)
                #expect(response.headers[.contentType]?.hasPrefix("application/problem+json") == true)
                let errors = (response.json["errors"] as? [[String: String]]) ?? []
                let byField = Dictionary(errors.map { ($0["field"] ?? "", $0["message"] ?? "") }) { a, _ in a }
                #expect(Set(byField.keys) == ["display_name", "width", "price"])
                #expect(byField["width"]?.hasPrefix("width 20 is wider than the canvas (16)") == true)
                #expect(byField["price"]?.hasPrefix("price 1.2.3 is not an amount") == true)
            }
            // "10.00" vs "9.00": a price above the original is refused numerically.
            try await client.execute(
                uri: "/api/specials", method: .post, headers: Self.admin,
                body: Self.body([
                    "display_name": "A", "width": 4, "height": 4, "original_price": "9.00", "price": "10.00",
                ])
            ) { response in
                #expect(response.status == .unprocessableContent)
                #expect(response.text.contains("\"field\":\"price\""))
            }
            #expect(try await Self.list(client).managerSpecials.isEmpty)

            let id = try await client.execute(
                uri: "/api/specials", method: .post, headers: Self.admin, body: Self.body(Self.noodles)
            ) { try #require($0.json["id"] as? String) }
            try await client.execute(
                uri: "/api/specials/\(id)", method: .patch, headers: Self.admin,
                body: Self.body(["height": 40, "original_price": "8.00"])
            ) { response in
                #expect(response.status == .unprocessableContent)
                #expect(response.text.contains("height 40 is taller than twice the canvas (32)"))
                #expect(response.text.contains("more than the original price 8.00"))
            }
            #expect(try await Self.list(client).managerSpecials.first?.originalPrice == "10.00")
            try await client.execute(
                uri: "/api/specials/order", method: .put, headers: Self.admin, body: Self.body(["ids": [id, id]])
            ) { #expect($0.status == .unprocessableContent) }
        }
    }

    @Test func managersUploadImagesAndOnlyStoredImagesAreAccepted() async throws {
        try await TestApp.run { _, client in
            let id = try await client.execute(
                uri: "/api/specials", method: .post, headers: Self.admin, body: Self.body(Self.noodles)
            ) { try #require($0.json["id"] as? String) }
            let png = TestImages.png
            let url = try await client.execute(
                uri: "/api/specials/\(id)/image", method: .put,
                headers: [.authorization: "Bearer \(TestApp.adminToken)", .contentType: "image/png"],
                body: ByteBuffer(bytes: png)
            ) { response in
                #expect(response.status == .ok)
                return try #require(response.json["imageUrl"] as? String)
            }
            #expect(try await Self.list(client).managerSpecials.first?.imageUrl.absoluteString == url)
            let path = try #require(URL(string: url)?.path)
            try await client.execute(uri: path, method: .get) { #expect(Array(buffer: $0.body) == png) }
            // The path of a stored image may be given at creation; any other path is refused.
            var json = Self.noodles
            json["image"] = path
            try await client.execute(uri: "/api/specials", method: .post, headers: Self.admin, body: Self.body(json)) {
                #expect($0.json["imageUrl"] as? String == url)
            }
            json["image"] = "/images/" + String(repeating: "a", count: 64) + ".png"
            try await client.execute(uri: "/api/specials", method: .post, headers: Self.admin, body: Self.body(json)) {
                #expect($0.status == .unprocessableContent)
                #expect($0.text.contains("\"field\":\"image\""))
            }
            #expect(try await Self.list(client).managerSpecials.count == 2)
        }
    }

    @Test(arguments: TestDatabase.engines)
    func settingsChangeTheCanvasButNeverBelowASpecial(engine: Database.Engine) async throws {
        try await Self.run(engine) { _, client in
            let settings = "/api/specials/settings"
            try await client.execute(
                uri: settings, method: .put, headers: Self.admin, body: Self.body(["canvasUnit": 8, "currency": "EUR"])
            ) { response in
                #expect(response.status == .unprocessableContent)
                #expect(response.text.contains("\"field\":\"canvasUnit\""))
            }
            try await client.execute(
                uri: settings, method: .put, headers: Self.admin, body: Self.body(["canvasUnit": 20, "currency": "E"])
            ) { response in
                #expect(response.status == .unprocessableContent)
                #expect(response.text.contains("\"field\":\"currency\""))
            }
            try await client.execute(
                uri: settings, method: .put, headers: Self.admin,
                body: Self.body(["canvasUnit": 20, "currency": "eur"])
            ) { #expect($0.status == .ok) }
            #expect(try await Self.list(client).canvasUnit == 20)
            try await client.execute(uri: "/specials", method: .get) { response in
                #expect(response.text.contains("--canvas: 20"))
                #expect(response.text.contains("was €2.00, now €1.00, save €1.00 (50%)"))
            }
        }
    }

    @Test func aValidityBoundaryChangesTheListAndPublishesAnEvent() async throws {
        // The schedule runs here alone (its sleep is the clock's only one), moved on by the test.
        try await TestApp.run(services: false) { app, client in
            // A minute ahead, in whole seconds as stored; the clock is moved there once the schedule waits.
            let start = Date(timeIntervalSince1970: (app.clock.now.timeIntervalSince1970 + 60).rounded(.down))
            var json = Self.noodles
            json["validFrom"] = start.formatted(.iso8601)
            try await client.execute(uri: "/api/specials", method: .post, headers: Self.admin, body: Self.body(json)) {
                #expect($0.status == .created)
            }
            #expect(try await Self.list(client).managerSpecials.isEmpty)
            let specials = QuadSpecials.Specials(platform: app.platform)
            var event: [String: Any]?
            try await ServiceRunner(app.platform.events, SpecialsSchedule(specials: specials)).run {
                event = try await Self.firstEvent(app) {
                    try await eventually("the schedule waits") { app.clock.sleeperCount >= 1 }
                    app.clock.advance(by: .seconds(61))
                }
            }
            #expect(event?["change"] as? String == "schedule")
            #expect(app.clock.now >= start)
            #expect(try await Self.list(client).managerSpecials.map(\.displayName) == ["Fresh Noodles"])
        }
    }

    @Test(arguments: TestDatabase.engines)
    func withSeveralInstancesABoundaryIsAnnouncedOnce(engine: Database.Engine) async throws {
        // Three instances' schedules run here, and nothing else sleeps on the clock.
        try await TestApp.run(engine, services: false) { app, client in
            // A minute ahead; the clock is moved there once every schedule waits.
            let start = Date(timeIntervalSince1970: (app.clock.now.timeIntervalSince1970 + 60).rounded(.down))
            var json = Self.noodles
            json["validUntil"] = start.formatted(.iso8601)
            try await client.execute(uri: "/api/specials", method: .post, headers: Self.admin, body: Self.body(json)) {
                #expect($0.status == .created)
            }
            // Three instances' schedules on one database and one event hub.
            let instances = (0..<3).map { _ in SpecialsSchedule(specials: QuadSpecials.Specials(platform: app.platform))
            }
            let subscription = app.platform.events.subscribe(after: nil, types: [.special])
            defer { subscription.cancel() }
            var events: [Event] = []
            try await ServiceRunner(app.platform.events, instances[0], instances[1], instances[2]).run {
                try await eventually("LISTEN is up") { app.platform.events.isListening }
                try await eventually("every schedule waits") { app.clock.sleeperCount >= 3 }
                app.clock.advance(by: .seconds(61))
                // Each schedule wakes for the boundary, deals with it and waits again...
                try await eventually("every schedule dealt with the boundary") { app.clock.sleeperCount >= 3 }
                // ...and anything it published arrives before a last event sent after it (one channel, in order).
                await app.platform.events.publishForTesting("special", ["change": "marker"])
                events = await collect(subscription.events) { $0.last?.data.contains("marker") == true }
            }
            #expect(events.last?.data.contains("marker") == true)
            let announced = events.dropLast()
            #expect(announced.count == 1)
            #expect(announced.first?.data.contains("schedule") == true)
            #expect(try await Self.list(client).managerSpecials.isEmpty)
        }
    }

    @Test func aSpecialNotYetValidIsTheManagersUntilItStarts() async throws {
        try await TestApp.run { app, client in
            var json = Self.noodles
            json["validFrom"] = app.clock.now.addingTimeInterval(7 * 86400).formatted(.iso8601)
            var id = ""
            try await client.execute(uri: "/api/specials", method: .post, headers: Self.admin, body: Self.body(json)) {
                #expect($0.status == .created)
                id = $0.json["id"] as? String ?? ""
            }
            for path in ["/api/specials/\(id)", "/specials/\(id)"] {
                try await client.execute(uri: path, method: .get) { #expect($0.status == .notFound) }
                try await client.execute(uri: path, method: .get, headers: Self.admin) { #expect($0.status == .ok) }
            }
        }
    }

    @Test func thePageReadsEachTileAndSpeaksFrench() async throws {
        try await Self.run { _, client in
            try await client.execute(uri: "/specials", method: .get) { response in
                #expect(response.status == .ok)
                #expect(
                    response.text.contains(
                        "aria-label=\"Noodle Dish with Roasted Black Bean Sauce, was $2.00, now $1.00, save $1.00 (50%)"
                    ))
                #expect(response.text.contains("aria-label=\"Organic Romaine Hearts, $3.92\""))
                #expect(response.text.components(separatedBy: "class=\"special-cell\"").count == 22)
                #expect(response.text.components(separatedBy: "class=\"specials-row\"").count == 11)
            }
            try await client.execute(uri: "/specials", method: .get, headers: [.acceptLanguage: "fr"]) { response in
                #expect(
                    response.text.contains(
                        "avant 2,00\u{A0}$, maintenant 1,00\u{A0}$, économie de 1,00\u{A0}$ (50\u{202F}%)"))
            }
        }
    }

    /// The page applies QuadCore's tile-content rule (`TileContent`) with CSS container queries: same thresholds.
    @Test func thePageUsesTheSharedTileContentThresholds() async throws {
        try await TestApp.run { _, client in
            let page = try await client.execute(uri: "/specials", method: .get) { $0.text }
            let href = try #require(
                page.components(separatedBy: "<link rel=\"stylesheet\" href=\"").dropFirst()
                    .map { String($0.prefix(while: { $0 != "\"" })) }.first { $0.contains("specials") })
            let css = try await client.execute(uri: href, method: .get) { $0.text }
            #expect(css.contains("@container special (max-width: \(Int(TileContent.textOnlyMaxWidth))px)"))
            #expect(css.contains("@container special (max-width: \(Int(TileContent.imageOnlyMaxWidth))px)"))
        }
    }

    @Test func theManagersFormKeepsWhatWasTypedOnError() async throws {
        try await TestApp.run { app, client in
            let cookie =
                "quad_session=\(try await Self.adminSession(app)); quad_csrf=abcdefghijklmnopqrstuvwxyz0123456789ABCD"
            let form =
                "csrf=abcdefghijklmnopqrstuvwxyz0123456789ABCD&display_name=Kale+%26+Co&width=20&height=4"
                + "&original_price=2.00&price=1.2.3"
            try await client.execute(
                uri: "/admin/specials", method: .post,
                headers: [.cookie: cookie, .contentType: "application/x-www-form-urlencoded"],
                body: ByteBuffer(string: form)
            ) { response in
                #expect(response.status == .unprocessableContent)
                #expect(response.text.contains("value=\"Kale &amp; Co\""))
                #expect(response.text.contains("width 20 is wider than the canvas (16)"))
                #expect(response.text.contains("value=\"1.2.3\""))
            }
            try await client.execute(
                uri: "/admin/specials", method: .post,
                headers: [.cookie: cookie, .contentType: "application/x-www-form-urlencoded"],
                body: ByteBuffer(string: "display_name=Kale&width=4&height=4&original_price=2&price=1")
            ) { #expect($0.status == .forbidden) }
            #expect(try await Self.list(client).managerSpecials.isEmpty)
        }
    }

    /// The manager's preview is the tile the form would save, drawn by the server from what is typed so far:
    /// amounts and savings written as on the tiles, sizes held to the canvas, what is not an amount as typed,
    /// and the letter tile the special gets when no picture is chosen. Only a manager may ask.
    @Test func thePreviewIsTheTileTheFormWouldSave() async throws {
        try await TestApp.run { app, client in
            let cookie = "quad_session=\(try await Self.adminSession(app))"
            func preview(_ query: String, language: String = "en") async throws -> String {
                try await client.execute(
                    uri: "/admin/specials/preview?\(query)", method: .get,
                    headers: [.cookie: cookie, .acceptLanguage: language]
                ) { response in
                    #expect(response.status == .ok)
                    return response.text
                }
            }
            let saving = try await preview(
                "display_name=Ripe+Mangoes&width=20&height=3&original_price=1234.5&price=617.25&promotion=2+for+1")
            #expect(saving.contains(#"style="--w: 16; --h: 3""#), "the width held to the canvas")
            #expect(saving.contains(#"<span class="special-name">Ripe Mangoes</span>"#))
            #expect(saving.contains(#"<s class="special-original">$1,234.50</s>"#))
            #expect(saving.contains(#"<span class="special-price">$617.25</span>"#))
            #expect(saving.contains(#"<span class="special-savings">Save $617.25</span>"#))
            #expect(saving.contains(#"<span class="special-promotion">2 for 1</span>"#))
            #expect(saving.contains(#"<img class="special-image" src="/images/"#), "the letter tile")
            let french = try await preview("display_name=Kiwi&original_price=1234.5&price=617.25", language: "fr")
            #expect(french.contains("<s class=\"special-original\">1\u{202F}234,50\u{A0}$</s>"))
            // A saving is money, however small; an amount the form refuses is shown as typed.
            let tiny = try await preview("display_name=Kiwi&original_price=2.50&price=2.49")
            #expect(tiny.contains(#"<span class="special-savings">Save $0.01</span>"#))
            // The price per litre or kilogram from the quantity in the name; the last day the special holds (it ends at
            // midnight, the store's, in UTC here).
            let juice = try await preview(
                "display_name=Orange+juice+1.5+L&original_price=2.50&price=2.00&validUntil=2026-12-01T00:00")
            #expect(juice.contains(#"<span class="special-unit">$1.33/L</span>"#))
            #expect(juice.contains(#"<span class="special-until">until Mon 30 Nov</span>"#))
            let crisps = try await preview(
                "display_name=Chips+50g&original_price=1.50&price=1.20&validUntil=2026-11-30T18:00", language: "fr")
            #expect(crisps.contains("<span class=\"special-unit\">24,00\u{A0}$/kg</span>"))
            #expect(crisps.contains("<span class=\"special-until\">jusqu’au lun. 30 nov., 18:00</span>"))
            #expect(crisps.contains("<span class=\"special-savings\">Économisez 0,30\u{A0}$</span>"))
            let typed = try await preview("display_name=Kiwi&original_price=2&price=0.995")
            #expect(typed.contains(#"<span class="special-price">0.995</span>"#) && !typed.contains("special-original"))

            let member = try await app.signedIn("ada")
            try await client.execute(uri: "/admin/specials/preview?display_name=Kiwi", method: .get, headers: member) {
                #expect($0.status == .forbidden)
            }
        }
    }

    /// Posts a manager's form with a signed-in admin's session and its CSRF token.
    static func postForm(
        _ app: TestApp, _ client: any TestClientProtocol, _ uri: String, _ fields: [(String, String)],
        _ check: @escaping @Sendable (TestResponse) async throws -> Void
    ) async throws {
        let token = "abcdefghijklmnopqrstuvwxyz0123456789ABCD"
        let cookie = "quad_session=\(try await Self.adminSession(app)); quad_csrf=\(token)"
        let body = ([("csrf", token)] + fields).map { name, value in
            name + "=" + (value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
        }.joined(separator: "&")
        try await client.execute(
            uri: uri, method: .post, headers: [.cookie: cookie, .contentType: "application/x-www-form-urlencoded"],
            body: ByteBuffer(string: body), testCallback: check)
    }

    @Test(arguments: TestDatabase.engines)
    func theManagerSetsTheStoreSettingsOnThePage(engine: Database.Engine) async throws {
        try await Self.run(engine) { app, client in
            let settings = [("canvasUnit", "8"), ("currency", "E"), ("timeZone", "Europe/Pariss")]
            try await Self.postForm(app, client, "/admin/specials/settings", settings) { response in
                #expect(response.status == .unprocessableContent)
                // Each field says why, next to what was typed.
                #expect(response.text.contains("currency E is not a three-letter code."))
                #expect(response.text.contains("timeZone Europe/Pariss is not a time zone such as Europe/Paris."))
                #expect(response.text.contains("id=\"s-currency\" name=\"currency\" value=\"E\""))
                #expect(response.text.contains("value=\"Europe/Pariss\""))
                #expect(response.text.contains("aria-describedby=\"s-zone-error\""))
                // The page opens at its top: the alert there leads to the settings below the list.
                #expect(response.text.contains("id=\"specials-settings-invalid\">"))
                #expect(response.text.contains("<a href=\"#specials-settings\">Store settings</a></p>"))
            }
            // A canvas narrower than the widest special (16 units) is refused; nothing changes.
            let narrow = [("canvasUnit", "8"), ("currency", "EUR"), ("timeZone", "Europe/Paris")]
            try await Self.postForm(app, client, "/admin/specials/settings", narrow) { response in
                #expect(response.status == .unprocessableContent)
                #expect(
                    response.text.contains("canvasUnit 8 is too small for the specials (widest 16, tallest 16 units)."))
                #expect(response.text.contains("id=\"s-canvas\" name=\"canvasUnit\" value=\"8\""))
            }
            #expect(try await Self.list(client).canvasUnit == 16)
            let good = [("canvasUnit", "20"), ("currency", "eur"), ("timeZone", "Europe/Paris")]
            try await Self.postForm(app, client, "/admin/specials/settings", good) { response in
                #expect(response.status == .seeOther || response.status == .found)
                #expect(response.headers[.location] == "/admin/specials?done=settings#specials-settings")
            }
            try await client.execute(uri: "/specials", method: .get) { response in
                #expect(response.text.contains("--canvas: 20"))
                #expect(response.text.contains("was €2.00, now €1.00, save €1.00 (50%)"))
            }
            let cookie = "quad_session=\(try await Self.adminSession(app))"
            try await client.execute(
                uri: "/admin/specials?done=settings", method: .get, headers: [.cookie: cookie]
            ) { response in
                // Next to the settings' form, where the manager is after saving.
                #expect(response.text.contains("id=\"specials-settings-notice\"><p>The settings were saved.</p>"))
                #expect(response.text.contains("name=\"timeZone\" value=\"Europe/Paris\""))
                #expect(response.text.contains("name=\"currency\" value=\"EUR\""))
            }
            // The API keeps the zone when it is not given.
            try await client.execute(
                uri: "/api/specials/settings", method: .put, headers: Self.admin,
                body: Self.body(["canvasUnit": 16, "currency": "USD"])
            ) { response in
                #expect(response.status == .ok)
                #expect(response.json["timeZone"] as? String == "Europe/Paris")
            }
        }
    }

    @Test(arguments: TestDatabase.engines)
    func validityIsTypedAndShownInTheStoresTimeAndLanguage(engine: Database.Engine) async throws {
        try await TestApp.run(engine) { app, client in
            try await client.execute(
                uri: "/api/specials/settings", method: .put, headers: Self.admin,
                body: Self.body(["canvasUnit": 16, "currency": "EUR", "timeZone": "Europe/Paris"])
            ) { #expect($0.status == .ok) }
            let fields = [
                ("display_name", "Clementines"), ("width", "8"), ("height", "4"), ("original_price", "3.00"),
                ("price", "2.00"), ("validFrom", "2026-01-10T08:00"), ("validUntil", "2036-07-01T20:30"),
            ]
            try await Self.postForm(app, client, "/admin/specials", fields) { response in
                #expect(response.headers[.location]?.hasPrefix("/admin/specials?done=added") == true)
            }
            // 08:00 in Paris in winter is 07:00 UTC; 20:30 in summer is 18:30 UTC.
            let special = try await client.execute(uri: "/api/specials/all", method: .get, headers: Self.admin) {
                try #require(($0.json["managerSpecials"] as? [[String: Any]])?.first)
            }
            #expect(special["validFrom"] as? String == "2026-01-10T07:00:00Z")
            #expect(special["validUntil"] as? String == "2036-07-01T18:30:00Z")
            let id = try #require(special["id"] as? String)
            let cookie = "quad_session=\(try await Self.adminSession(app))"
            // The edit form shows them as typed, and says in which zone.
            try await client.execute(uri: "/admin/specials/\(id)", method: .get, headers: [.cookie: cookie]) {
                #expect($0.text.contains("name=\"validFrom\" type=\"datetime-local\" value=\"2026-01-10T08:00\""))
                #expect($0.text.contains("name=\"validUntil\" type=\"datetime-local\" value=\"2036-07-01T20:30\""))
                #expect($0.text.contains("Valid from (Europe/Paris time, optional)"))
            }
            // The details page and the manager's list, in the page's language and the store's time.
            try await client.execute(uri: "/specials/\(id)", method: .get, headers: [.acceptLanguage: "fr"]) {
                #expect($0.text.contains("Jusqu’au 1 juillet 2036 à 20:30"))
                #expect(!$0.text.contains("UTC"))
            }
            try await client.execute(uri: "/specials/\(id)", method: .get) {
                #expect($0.text.contains("Until July 1, 2036 at 8:30"))
            }
            try await client.execute(uri: "/admin/specials", method: .get, headers: [.cookie: cookie]) {
                #expect($0.text.contains("From January 10, 2026 at 8:00"))
            }
        }
    }

    static func adminSession(_ app: TestApp) async throws -> String {
        let accounts = app.features.accounts
        if try await accounts.people.find("boss") == nil {
            _ = try await accounts.people.create(
                Person(username: "boss", displayName: "Boss", role: .admin), password: "password-boss")
        }
        return try await accounts.sessions.start(for: "boss", kind: .web).0
    }
}
