import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import QuadCore
import QuadTestSupport
import Testing

@testable import QuadAccounts
@testable import QuadPlatform
@testable import QuadSpecials

/// A special puts a product on special: the product keeps its name, picture, quantity and prices over time when its
/// special is deleted, so the next special of it is announced against them, and whoever watches it hears of it.
@Suite struct ProductTests {
    static let admin = SpecialsAPITests.admin
    static let day = TimeInterval(86400)

    static func create(_ client: some TestClientProtocol, _ fields: [String: Any]) async throws -> TestResponse {
        try await client.execute(
            uri: "/api/specials", method: .post, headers: admin, body: SpecialsAPITests.body(fields))
    }

    static func products(_ client: some TestClientProtocol) async throws -> [[String: Any]] {
        try await client.execute(uri: "/api/specials/products", method: .get, headers: admin) { response in
            #expect(response.status == .ok)
            return response.json["products"] as? [[String: Any]] ?? []
        }
    }

    @Test(arguments: TestDatabase.engines)
    func aProductsPricesOutliveItsSpecial(engine: Database.Engine) async throws {
        try await TestApp.run(engine, at: TestTime.weekdayMorning) { app, client in
            func change(_ id: String, _ fields: [String: Any]) async throws {
                let response = try await client.execute(
                    uri: "/api/specials/\(id)", method: .patch, headers: Self.admin,
                    body: SpecialsAPITests.body(fields))
                #expect(response.status == .ok, "\(response.text)")
            }
            // $2.00, then $1.50 for ten days, then $1.80; its special is then taken down.
            let first = try await Self.create(
                client,
                [
                    "display_name": "Orange juice", "quantity": "1.5 L", "width": 8, "height": 8,
                    "original_price": "2.00", "price": "2.00",
                ])
            #expect(first.status == .created)
            let firstId = try #require(first.json["id"] as? String)
            let product = try #require(first.json["product_id"] as? String)
            app.clock.advance(by: .seconds(20 * Self.day))
            try await change(firstId, ["original_price": "1.50", "price": "1.50"])
            app.clock.advance(by: .seconds(10 * Self.day))
            try await change(firstId, ["original_price": "1.80", "price": "1.80"])
            app.clock.advance(by: .seconds(2 * Self.day))
            let deleted = try await client.execute(
                uri: "/api/specials/\(firstId)", method: .delete, headers: Self.admin)
            #expect(deleted.status == .noContent)
            // The product stays, on no special, at its regular price.
            let listed = try #require(try await Self.products(client).first { $0["id"] as? String == product })
            #expect(listed["display_name"] as? String == "Orange juice" && listed["quantity"] as? String == "1.5 L")
            #expect(listed["regular_price"] as? String == "1.80" && listed["special_id"] == nil)
            // A day later it goes on special at $1.20, naming only the product: against $1.50, the lowest of the 30
            // days before, with the product's name and quantity.
            app.clock.advance(by: .seconds(Self.day))
            let second = try await Self.create(
                client, ["product_id": product, "width": 4, "height": 4, "price": "1.20"])
            #expect(second.status == .created, "\(second.text)")
            #expect(second.json["display_name"] as? String == "Orange juice")
            #expect(second.json["quantity"] as? String == "1.5 L")
            #expect(second.json["original_price"] as? String == "1.50" && second.json["price"] as? String == "1.20")
            #expect(second.json["product_id"] as? String == product)
            let secondId = try #require(second.json["id"] as? String)
            try await client.execute(uri: "/specials", method: .get) {
                #expect(
                    $0.text.contains(
                        #"aria-label="Orange juice, lowest 30-day price $1.50, now $1.20, save $0.30 (20%), $0.80/L""#))
            }
            // One special at a time per product; a product that does not exist is refused as such.
            let twice = try await Self.create(
                client, ["product_id": product, "width": 4, "height": 4, "price": "1.00"])
            #expect(twice.status == .conflict && twice.text.contains("product-on-special"))
            let unknown = try await Self.create(
                client, ["product_id": "AAAAAAAAAAAA", "width": 4, "height": 4, "price": "1.00"])
            #expect(unknown.status == .unprocessableContent && unknown.text.contains("product_id"))
            let nameless = try await Self.create(client, ["width": 4, "height": 4, "price": "1.00"])
            #expect(nameless.status == .unprocessableContent && nameless.text.contains("display_name"))
            // Five days at $1.20, taken down, and back at $1.20 a week later: $1.20 applied within the 30 days, so
            // this is no reduction (deleting a special keeps the price it applied at).
            app.clock.advance(by: .seconds(5 * Self.day))
            _ = try await client.execute(uri: "/api/specials/\(secondId)", method: .delete, headers: Self.admin)
            app.clock.advance(by: .seconds(7 * Self.day))
            let third = try await Self.create(
                client, ["product_id": product, "width": 4, "height": 4, "price": "1.20"])
            #expect(third.json["original_price"] as? String == "1.20" && third.json["price"] as? String == "1.20")
            #expect(try await Self.products(client).first { $0["id"] as? String == product }?["special_id"] != nil)
        }
    }

    /// Someone watching a product whose special was taken down sees its next special lead their Today.
    @Test(arguments: TestDatabase.engines)
    func aWatchedProductsNextSpecialLeadsTheWatchersToday(engine: Database.Engine) async throws {
        try await TestApp.run(engine, at: TestTime.weekdayMorning, configure: { $0.loadDemoData = true }) {
            app, client in
            let ada = try await app.signedIn("ada")
            let romaine = try await app.demoRomaine()
            let watch = try await client.execute(
                uri: "/api/specials/\(romaine.id)/watch", method: .put,
                headers: [.authorization: ada[.authorization]!])
            #expect(watch.status == .noContent)
            _ = try await client.execute(uri: "/api/specials/\(romaine.id)", method: .delete, headers: Self.admin)
            let firstTitle = { try await app.firstTodayTitle(of: "ada") }
            #expect(try await firstTitle() != "On special, as you asked: Organic Romaine Hearts")
            let again = try await Self.create(
                client, ["product_id": romaine.productId, "width": 4, "height": 4, "price": "2.99"])
            #expect(again.status == .created)
            #expect(try await firstTitle() == "On special, as you asked: Organic Romaine Hearts")
            let watched = try await client.execute(uri: "/api/me/watches", method: .get, headers: ada) {
                ($0.json["specials"] as? [[String: Any]])?.compactMap { $0["id"] as? String }
            }
            #expect(watched == (again.json["id"] as? String).map { [$0] })
        }
    }

    /// The manager's form offers the products on no special; picking one with the name left empty makes a special of
    /// it, and the preview measures the price typed against the product's own prices.
    @Test func theManagerPicksAProductHadBefore() async throws {
        try await TestApp.run(at: TestTime.weekdayMorning) { app, client in
            let kale = try await Self.create(
                client,
                ["display_name": "Kale 250 g", "width": 4, "height": 4, "original_price": "3.00", "price": "3.00"])
            let kaleId = try #require(kale.json["id"] as? String)
            let product = try #require(kale.json["product_id"] as? String)
            let csrf = "abcdefghijklmnopqrstuvwxyz0123456789ABCD"
            let cookie = "quad_session=\(try await SpecialsAPITests.adminSession(app)); quad_csrf=\(csrf)"
            func newForm() async throws -> String {
                try await client.execute(uri: "/admin/specials/new", method: .get, headers: [.cookie: cookie]) {
                    $0.text
                }
            }
            let image = try await app.features.specials.store.find(kaleId)?.image
            // On special now: not offered.
            #expect(!(try await newForm()).contains(#"<option value="\#(product)""#))
            _ = try await client.execute(uri: "/api/specials/\(kaleId)", method: .delete, headers: Self.admin)
            #expect(try await newForm().contains(#"<option value="\#(product)" data-name="Kale 250 g""#))
            app.clock.advance(by: .seconds(Self.day))
            let preview = try await client.execute(
                uri: "/admin/specials/preview?product_id=\(product)&display_name=Kale+250+g&original_price=3.00"
                    + "&price=2.40",
                method: .get, headers: [.cookie: cookie]
            ) { $0.text }
            #expect(preview.contains(#"<span class="special-savings">Save $0.60</span>"#))
            let saved = try await client.execute(
                uri: "/admin/specials", method: .post,
                headers: [.cookie: cookie, .contentType: "application/x-www-form-urlencoded"],
                body: ByteBuffer(
                    string: "csrf=\(csrf)&product_id=\(product)&display_name=&original_price=&width=4&height=4"
                        + "&price=2.40"))
            #expect(saved.status == .seeOther, "\(saved.text)")
            let made = try #require(try await app.features.specials.store.all().first { $0.productId == product })
            #expect(made.displayName == "Kale 250 g" && made.originalCents == 300 && made.priceCents == 240)
            #expect(made.image == image && image != nil, "the product's picture kept")
        }
    }

    /// The specials there were before products become one product each, their prices and watchers with them.
    @Test(arguments: TestDatabase.engines)
    func theSpecialsThereWereBecomeProducts(engine: Database.Engine) async throws {
        try await TestDatabase.withDatabase(engine) { database in
            let all = (Platform.migrations + SpecialStore.migrations).sorted { $0.id < $1.id }
            try await Migrator.migrate(
                database, all.filter { $0.id < 207 }, now: TestTime.start, logger: TestDatabase.logger)
            let made = Timestamp.string(TestTime.start.addingTimeInterval(-40 * Self.day))
            let cheaper = Timestamp.string(TestTime.start.addingTimeInterval(-20 * Self.day))
            let ended = Timestamp.string(TestTime.start.addingTimeInterval(-15 * Self.day))
            try await database.withConnection { sql in
                try await sql.raw(
                    """
                    INSERT INTO specials (id, display_name, width, height, original_cents, price_cents, promotion,
                        valid_from, valid_until, image, position, created_at, reduced_at, quantity)
                    VALUES ('juice0000001', 'Orange juice', 8, 4, 250, 200, '2 for 1', NULL, NULL, '/images/x.png', 0,
                        \(bind: made), \(bind: made), '1.5 L')
                    """
                ).run()
                try await sql.raw(
                    """
                    INSERT INTO specials_regular_prices (special_id, from_at, cents)
                    VALUES ('juice0000001', \(bind: made), 300), ('juice0000001', \(bind: cheaper), 250)
                    """
                ).run()
                try await sql.raw(
                    """
                    INSERT INTO specials_reduced_prices (special_id, from_at, until_at, cents)
                    VALUES ('juice0000001', \(bind: cheaper), \(bind: ended), 180)
                    """
                ).run()
                try await sql.raw(
                    """
                    INSERT INTO specials_watches (special_id, username_key, created_at)
                    VALUES ('juice0000001', 'ada', \(bind: made))
                    """
                ).run()
            }
            try await Migrator.migrate(database, all, now: TestTime.start, logger: TestDatabase.logger)
            let store = SpecialStore(database: database, clock: ManualClock(now: TestTime.start))
            let juice = try #require(try await store.find("juice0000001"))
            #expect(juice.productId == "juice0000001" && juice.displayName == "Orange juice")
            #expect(juice.quantity == "1.5 L" && juice.image == "/images/x.png" && juice.promotion == "2 for 1")
            #expect(juice.originalCents == 250 && juice.priceCents == 200 && juice.width == 8 && juice.height == 4)
            #expect(juice.history.changes.map(\.price.cents) == [300, 250] && juice.history.reductions.count == 1)
            #expect(try await store.isWatching("juice0000001", username: "ada"))
            #expect(try await store.products().map(\.specialId) == ["juice0000001"])
        }
    }
}

extension TestApp {
    /// The demo's Organic Romaine Hearts, at its regular price.
    func demoRomaine() async throws -> SpecialRecord {
        try #require(try await features.specials.store.all().first { $0.displayName == "Organic Romaine Hearts" })
    }

    /// What the Specials' part of `username`'s Today leads with, in English.
    func firstTodayTitle(of username: String) async throws -> String? {
        let person = try #require(try await features.accounts.people.find(username))
        return try await features.specials.today(for: person, at: clock.now, t: Localizer(language: .english))
            .first?.items.first?.title
    }
}
