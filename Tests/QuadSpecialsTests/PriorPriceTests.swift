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

/// A reduction is announced against the lowest price applied in the 30 days before it (EU 2019/2161, Art. 6a): the
/// API's `original_price` is that price, the tile says so, and a special not below it shows no saving.
@Suite struct PriorPriceTests {
    @Test(arguments: TestDatabase.engines)
    func aReductionIsMeasuredFromTheLowestPriceOfTheLast30Days(engine: Database.Engine) async throws {
        try await TestApp.run(engine, at: TestTime.weekdayMorning) { app, client in
            let admin = SpecialsAPITests.admin
            let day = TimeInterval(86400)
            func change(_ id: String, _ fields: [String: Any]) async throws {
                let response = try await client.execute(
                    uri: "/api/specials/\(id)", method: .patch, headers: admin, body: SpecialsAPITests.body(fields))
                #expect(response.status == .ok)
            }
            func shown(_ id: String) async throws -> (original: String, price: String, label: String) {
                let special = try await client.execute(uri: "/api/specials", method: .get) { response in
                    try #require(
                        (response.json["managerSpecials"] as? [[String: Any]])?.first { $0["id"] as? String == id })
                }
                let page = try await client.execute(uri: "/specials", method: .get) { $0.text }
                let label = page.components(separatedBy: "aria-label=\"Orange juice 1.5 L, ").dropFirst().first?
                    .components(separatedBy: "\"").first
                return (special["original_price"] as? String ?? "", special["price"] as? String ?? "", label ?? "")
            }
            // $2.00 at first…
            let id = try await client.execute(
                uri: "/api/specials", method: .post, headers: admin,
                body: SpecialsAPITests.body([
                    "display_name": "Orange juice 1.5 L", "width": 8, "height": 8, "original_price": "2.00",
                    "price": "2.00",
                ])
            ) { response in
                #expect(response.status == .created)
                return try #require(response.json["id"] as? String)
            }
            #expect(try await shown(id) == ("2.00", "2.00", "$2.00, $1.33/L"))
            // …$1.50 for ten days, then $1.80…
            app.clock.advance(by: .seconds(20 * day))
            try await change(id, ["original_price": "1.50", "price": "1.50"])
            app.clock.advance(by: .seconds(10 * day))
            try await change(id, ["original_price": "1.80", "price": "1.80"])
            app.clock.advance(by: .seconds(3 * day))
            // …and a special at $1.20: against $1.50, the lowest of the 30 days before it, not $1.80.
            try await change(id, ["price": "1.20"])
            let special = try await shown(id)
            #expect(special.original == "1.50" && special.price == "1.20")
            #expect(special.label == "lowest 30-day price $1.50, now $1.20, save $0.30 (20%), $0.80/L")
            // At $1.60 it is below the regular price but not below $1.50: no struck price, no saving.
            try await change(id, ["price": "1.60"])
            #expect(try await shown(id) == ("1.50", "1.60", "$1.60, $1.07/L"))
            // A month at $1.60, the price that applied (below the regular $1.80), then a special: against $1.60.
            app.clock.advance(by: .seconds(31 * day))
            try await change(id, ["price": "1.35"])
            #expect(
                try await shown(id)
                    == ("1.60", "1.35", "lowest 30-day price $1.60, now $1.35, save $0.25 (16%), $0.90/L"))
            // A month back at $1.80: a new special is measured from $1.80 again (said as "was").
            app.clock.advance(by: .seconds(day))
            try await change(id, ["price": "1.80"])
            app.clock.advance(by: .seconds(31 * day))
            try await change(id, ["price": "1.35"])
            #expect(try await shown(id) == ("1.80", "1.35", "was $1.80, now $1.35, save $0.45 (25%), $0.90/L"))
        }
    }

    /// The reduced price of an earlier special counts among the prices of the 30 days (the lowest price *applied*):
    /// a special that ended and comes back at the same price within them is no reduction, and a deeper one is
    /// measured from the earlier special's price.
    @Test(arguments: TestDatabase.engines)
    func anEarlierSpecialsPriceCountsWithinTheWindow(engine: Database.Engine) async throws {
        try await TestApp.run(engine, at: TestTime.weekdayMorning) { app, client in
            let admin = SpecialsAPITests.admin
            let day = TimeInterval(86400)
            let iso = { (date: Date) in date.formatted(.iso8601) }
            func change(_ id: String, _ fields: [String: Any]) async throws {
                let response = try await client.execute(
                    uri: "/api/specials/\(id)", method: .patch, headers: admin, body: SpecialsAPITests.body(fields))
                #expect(response.status == .ok, "\(response.text)")
            }
            func prices(_ id: String) async throws -> (original: String, price: String) {
                try await client.execute(uri: "/api/specials/\(id)", method: .get, headers: admin) {
                    ($0.json["original_price"] as? String ?? "", $0.json["price"] as? String ?? "")
                }
            }
            // Coffee at $10.00, on special at $8.00 for a week (its end set when it was made).
            let id = try await client.execute(
                uri: "/api/specials", method: .post, headers: admin,
                body: SpecialsAPITests.body([
                    "display_name": "Coffee beans 500 g", "width": 8, "height": 8, "original_price": "10.00",
                    "price": "10.00",
                ])
            ) { try #require($0.json["id"] as? String) }
            app.clock.advance(by: .seconds(10 * day))
            try await change(id, ["price": "8.00", "validUntil": iso(app.clock.now.addingTimeInterval(7 * day))])
            #expect(try await prices(id) == ("10.00", "8.00"))
            // It ended; ten days on the manager brings it back at $8.00 for another week: $8.00 applied within the
            // 30 days, so this is no reduction (no struck price, no saving).
            app.clock.advance(by: .seconds(17 * day))
            try await change(id, ["validUntil": iso(app.clock.now.addingTimeInterval(7 * day))])
            #expect(try await prices(id) == ("8.00", "8.00"))
            try await client.execute(uri: "/specials", method: .get) {
                #expect($0.text.contains(#"aria-label="Coffee beans 500 g, $8.00, $16.00/kg, until "#))
            }
            // $7.00 instead: a reduction, from $8.00, the lowest price of the 30 days.
            try await change(id, ["price": "7.00"])
            #expect(try await prices(id) == ("8.00", "7.00"))
            // Extending a special that is on does not measure it against itself.
            app.clock.advance(by: .seconds(2 * day))
            try await change(id, ["validUntil": iso(app.clock.now.addingTimeInterval(14 * day))])
            #expect(try await prices(id) == ("8.00", "7.00"))
            // A month after the $7.00 special ended (and longer after the $8.00 one), against $10.00 again.
            app.clock.advance(by: .seconds(45 * day))
            try await change(id, ["price": "9.00", "validUntil": ""])
            #expect(try await prices(id) == ("10.00", "9.00"))
        }
    }

    /// A shopper watching a product sees it first on Today once it is on special (not before), said as asked; a person
    /// removed watches nothing any more.
    @Test(arguments: TestDatabase.engines)
    func aWatchedProductOnSpecialLeadsTheWatchersToday(engine: Database.Engine) async throws {
        try await TestApp.run(engine, at: TestTime.weekdayMorning, configure: { $0.loadDemoData = true }) {
            app, client in
            let specials = app.features.specials
            let ada = try await app.signedIn("ada")
            let romaine = try await app.demoRomaine()
            #expect(!romaine.isReduced)
            let watch = try await client.execute(
                uri: "/specials/\(romaine.id)/watch", method: .post,
                headers: [.authorization: ada[.authorization]!, .contentType: "application/x-www-form-urlencoded"],
                body: ByteBuffer(string: "watch=on"))
            #expect(watch.status == .seeOther && watch.headers[.location] == "/specials/\(romaine.id)?watch=on#watch")
            let firstTitle = { try await app.firstTodayTitle(of: "ada") }
            #expect(try await firstTitle() != "On special, as you asked: Organic Romaine Hearts")
            let reduced = try await client.execute(
                uri: "/api/specials/\(romaine.id)", method: .patch, headers: SpecialsAPITests.admin,
                body: SpecialsAPITests.body(["price": "2.99"]))
            #expect(reduced.status == .ok)
            #expect(try await firstTitle() == "On special, as you asked: Organic Romaine Hearts")
            // Someone else's Today is as it was.
            let other = Person(username: "grace", displayName: "Grace", role: .member)
            #expect(
                try await specials.today(for: other, at: app.clock.now, t: Localizer(language: .english)).first?.items
                    .first?.title != "On special, as you asked: Organic Romaine Hearts")
            try await app.features.accounts.remove("ada")
            #expect(try await specials.store.watched(by: "ada").isEmpty)
        }
    }

    /// The manager gives a quantity the name does not state: the tile's price per litre comes from it, the API sends
    /// it, an empty one falls back to the name, one that is no quantity is refused.
    @Test func aQuantityTheManagerGivesMakesTheUnitPrice() async throws {
        try await TestApp.run(at: TestTime.weekdayMorning) { app, client in
            let admin = SpecialsAPITests.admin
            let id = try await client.execute(
                uri: "/api/specials", method: .post, headers: admin,
                body: SpecialsAPITests.body([
                    "display_name": "Fresh orange juice", "width": 8, "height": 8, "original_price": "3.00",
                    "price": "2.40", "quantity": "2 l",
                ])
            ) { response in
                #expect(response.status == .created)
                #expect(response.json["quantity"] as? String == "2 L")
                return try #require(response.json["id"] as? String)
            }
            try await client.execute(uri: "/specials", method: .get) {
                #expect($0.text.contains(#"<span class="special-unit">$1.20/L</span>"#))
            }
            let refused = try await client.execute(
                uri: "/api/specials/\(id)", method: .patch, headers: admin,
                body: SpecialsAPITests.body(["quantity": "a big bottle"]))
            #expect(refused.status == .unprocessableContent && refused.text.contains("quantity"))
            let cleared = try await client.execute(
                uri: "/api/specials/\(id)", method: .patch, headers: admin,
                body: SpecialsAPITests.body(["quantity": ""]))
            #expect(cleared.status == .ok && cleared.json["quantity"] == nil)
            try await client.execute(uri: "/specials", method: .get) { #expect(!$0.text.contains("special-unit")) }
        }
    }

    @Test func aReducedPriceCountsWhenItAppliedDuringTheWindow() {
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let day = TimeInterval(86400)
        let regular = [(from: start.addingTimeInterval(-90 * day), price: Money("2.00")!)]
        func reduced(_ from: Double, _ until: Double) -> PriceHistory {
            PriceHistory(
                regular,
                reductions: [
                    .init(
                        from: start.addingTimeInterval(from * day), until: start.addingTimeInterval(until * day),
                        price: Money("1.40")!)
                ])
        }
        #expect(reduced(-20, -10).prior(before: start) == Money("1.40")!)
        // Ended the moment the window opened, or began at the reduction: not during the 30 days before it.
        #expect(reduced(-40, -30).prior(before: start) == Money("2.00")!)
        #expect(reduced(0, 5).prior(before: start) == Money("2.00")!)
        // Still applying when the window opened.
        #expect(reduced(-40, -29).prior(before: start) == Money("1.40")!)
        // Replaced within 15 minutes: a correction, not a price applied.
        #expect(reduced(-20, -20 + 14.0 / 1440).prior(before: start) == Money("2.00")!)
        #expect(reduced(-20, -20 + 15.0 / 1440).prior(before: start) == Money("1.40")!)
        let corrected = PriceHistory(
            regular + [
                (start.addingTimeInterval(-5 * day), Money("1.00")!),
                (start.addingTimeInterval(-5 * day + 60), Money("2.00")!),
            ])
        #expect(corrected.prior(before: start) == Money("2.00")!)
    }

    @Test func theLowestPriceOfTheWindowCountsThePriceInForceWhenItOpened() {
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let day = TimeInterval(86400)
        let prices = PriceHistory([
            (start.addingTimeInterval(-60 * day), Money("1.00")!),  // in force when the window opened, 30 days back
            (start.addingTimeInterval(-20 * day), Money("2.00")!),
            (start, Money("0.50")!),  // from the reduction on: not before it
        ])
        #expect(prices.prior(before: start) == Money("1.00")!)
        #expect(prices.prior(before: start.addingTimeInterval(-day)) == Money("1.00")!)
        #expect(prices.prior(before: start.addingTimeInterval(20 * day)) == Money("0.50")!)
        #expect(prices.prior(before: start.addingTimeInterval(31 * day)) == Money("0.50")!)
        #expect(PriceHistory([]).prior(before: start) == nil)
        #expect(prices.price(at: start.addingTimeInterval(-1)) == Money("2.00")!)
    }
}
