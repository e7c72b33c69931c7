import Foundation
import Hummingbird
import QuadCore
import QuadPlatform

/// The web app: the mosaic at `/specials` (rendered here,
/// made live by `specials.js`, which fetches `/specials?fragment=live` again on each change), a details page per
/// special and the manager's pages under `/admin/specials` (forms, CSRF-protected, no JavaScript needed).
struct SpecialsRoutes {
    let specials: Specials
    let web: WebShell

    func register(on routes: Routes) {
        routes.on(.get, "/specials", .public) { request, _ in try await self.page(request) }
        routes.on(.get, "/specials/:specialId", .public) { request, context in
            try await self.details(request, id: context.parameters.require("specialId"))
        }
        routes.on(.post, "/specials/:specialId/watch", .member) { request, context in
            try await self.watch(request, id: context.parameters.require("specialId"))
        }
        routes.on(.get, "/admin/specials", .admin) { request, _ in try await self.manager(request) }
        routes.on(.get, "/admin/specials/new", .admin) { request, _ in try await self.form(request, id: nil) }
        routes.on(.get, "/admin/specials/preview", .admin) { request, _ in try await self.preview(request) }
        routes.on(.post, "/admin/specials", .admin) { request, _ in try await self.save(request, id: nil) }
        routes.on(.post, "/admin/specials/settings", .admin) { request, _ in try await self.saveSettings(request) }
        routes.on(.get, "/admin/specials/:specialId", .admin) { request, context in
            try await self.form(request, id: context.parameters.require("specialId"))
        }
        routes.on(.post, "/admin/specials/:specialId", .admin) { request, context in
            try await self.save(request, id: context.parameters.require("specialId"))
        }
        routes.on(.post, "/admin/specials/:specialId/move", .admin) { request, context in
            try await self.move(request, id: context.parameters.require("specialId"))
        }
        routes.on(.post, "/admin/specials/:specialId/delete", .admin) { request, context in
            try await self.delete(request, id: context.parameters.require("specialId"))
        }
    }

    // MARK: The mosaic

    /// A tile for the templates: its size in units, its texts in the page's language.
    static func tile(_ record: SpecialRecord, settings: SpecialsSettings, t: Localizer) -> SpecialTile {
        let special = record.special(baseURL: "")
        return tile(
            id: record.id, name: record.displayName, size: (record.width, record.height), image: record.image ?? "",
            price: .amount(special.price), original: .amount(special.originalPrice), promotion: record.promotion,
            ends: special.ends(in: settings.zone), currency: Currency(code: settings.currency), t: t,
            lowest: special.originalPrice != Money(cents: record.originalCents), quantity: record.measured)
    }

    /// A price as the tile shows it: an amount, written by QuadCore's money rules, or (in the manager's preview)
    /// what was typed, as typed.
    enum Price {
        case amount(Money)
        case typed(String)

        init(_ text: String) { self = Money(text).map(Price.amount) ?? .typed(text) }

        var money: Money? { if case .amount(let money) = self { money } else { nil } }

        func text(_ currency: Currency, _ language: Language) -> String {
            switch self {
            case .amount(let money): currency.format(money, language: language)
            case .typed(let text): text
            }
        }
    }

    static func tile(
        id: String, name: String, size: (width: Int, height: Int), image: String, price: Price, original: Price,
        promotion: String?, ends: (lastDay: LocalDate, at: LocalTime?)?, currency: Currency, t: Localizer,
        lowest: Bool = false, quantity: Quantity? = nil
    ) -> SpecialTile {
        let priceText = price.text(currency, t.language)
        let originalText = original.text(currency, t.language)
        var tile = SpecialTile(
            id: id, name: name, width: size.width, height: size.height, image: image, price: priceText, label: "")
        let prices = price.money.flatMap { price in
            original.money.map { PriceComparison(price: price, originalPrice: $0) }
        }
        if let prices, let saving = prices.saving {
            let savingText = currency.format(saving, language: t.language)
            tile.original = originalText
            // Against the lowest price of the last 30 days when the regular price moved within them: it says so.
            tile.originalLabel = t(lowest ? "specials.lowest" : "specials.was", ["price": originalText])
            if lowest { tile.lowest = tile.originalLabel }
            tile.savings = t("specials.save", ["amount": savingText])
            tile.label = t(
                lowest ? "specials.label.lowest" : "specials.label.saving",
                ["name": name, "original": originalText, "price": priceText])
            if let percent = prices.savingsPercent {
                tile.savingsPercent = t("specials.percent", ["percent": String(percent)])
                tile.label += ", " + t("specials.label.percent", ["amount": savingText, "percent": String(percent)])
            } else {
                tile.label += ", " + t("specials.label.save", ["amount": savingText])
            }
        } else {
            tile.label = t("specials.label.plain", ["name": name, "price": priceText])
        }
        // Per kilogram or litre (Directive 98/6/EC), from the quantity given, else the one the name states.
        if let money = price.money, let quantity = quantity ?? Quantity(parsing: name) {
            tile.unitPrice = t(
                "specials.unitPrice.\(quantity.measure.rawValue)",
                ["price": currency.format(quantity.unitPrice(of: money), language: t.language)])
            tile.label += ", " + tile.unitPrice!
        }
        if let ends {
            let date = t.shortDate(ends.lastDay)
            tile.until =
                ends.at.map { t("specials.untilTime", ["date": date, "time": $0.description]) }
                ?? t("specials.until", ["date": date])
            tile.label += ", " + tile.until!
        }
        if let promotion, !promotion.isEmpty {
            tile.promotion = promotion
            tile.label += ", " + promotion
        }
        return tile
    }

    /// The mosaic's rows, by the shared layout rule.
    func mosaicModel(_ t: Localizer) async throws -> Mosaic {
        let (records, settings, next) = try await specials.kept.current(at: specials.platform.clock.now)
        let rows = SpecialsLayout.rows(widths: records.map(\.width), canvas: settings.canvasUnit).map { row in
            Mosaic.Row(tiles: row.tiles.map { Self.tile(records[$0], settings: settings, t: t) }, width: row.width)
        }
        return Mosaic(rows: rows, hasSpecials: !records.isEmpty, canvasUnit: settings.canvasUnit, changesAt: next)
    }

    func page(_ request: Request) async throws -> Response {
        let t = Localizer(language: web.language(for: request))
        let mosaic = try await mosaicModel(t)
        // Kept (`PageCache`) until a special or the settings change, or a special's validity begins or ends.
        return try web.page(
            request, template: "specials", title: { $0("specials.title") }, fragments: ["live": "specials-mosaic"],
            keptUntilChangeOf: [.event(.special)], keptUntil: { _ in mosaic.changesAt }
        ) { _ in
            SpecialsPage(
                rows: mosaic.rows, hasSpecials: mosaic.hasSpecials, canvasUnit: mosaic.canvasUnit,
                refreshSeconds: Specials.refreshSeconds,
                generatedAt: Int(specials.platform.clock.now.timeIntervalSince1970 * 1000),
                isAdmin: RequestInfo.current.person?.isAdmin == true)
        }
    }

    func details(_ request: Request, id: String) async throws -> Response {
        let record = try await specials.visible(id)
        let settings = try await specials.kept.settings()
        let person = RequestInfo.current.person
        var watching = false
        if let person { watching = try await specials.store.isWatching(id, username: person.username) }
        return try web.page(request, template: "special", title: { _ in record.displayName }) { t in
            var tile = Self.tile(record, settings: settings, t: t)
            tile.validity(record, settings: settings, t: t)
            tile.isValidNow = record.special(baseURL: "").isValid(at: specials.platform.clock.now)
            tile.watching = watching
            tile.signedIn = person != nil
            tile.watchSaved = request.uri.queryParameters.get("watch") != nil
            return tile
        }
    }

    /// "Tell me when it's on special" (`watch=on`) or "Stop telling me" (`watch=off`), from the special's page.
    func watch(_ request: Request, id: String) async throws -> Response {
        var request = request
        let fields = try await request.formFields()
        let person = try Access.person()
        _ = try await specials.visible(id)
        let on = fields["watch"] != "off"
        try await specials.store.setWatching(id, username: person.username, on)
        return .seeOther("/specials/\(id)?watch=\(on ? "on" : "off")#watch")
    }

    /// "November 22, 2026 at 8:00 AM" / "22 novembre 2026 à 08:00": the store's local time, in the page's language.
    static func dateTime(_ date: Date, _ settings: SpecialsSettings, _ language: Language) -> String {
        date.formatted(
            Date.FormatStyle(
                date: .long, time: .shortened, locale: Locale(identifier: language.rawValue),
                calendar: Calendar(identifier: .gregorian), timeZone: settings.zone))
    }

    // MARK: The manager's pages

    func manager(_ request: Request) async throws -> Response {
        return try await managerPage(request, settingsForm: nil, errors: [])
    }

    /// The list, and the store's settings form: with `settingsForm` (what was typed) and its errors after a refusal.
    private func managerPage(
        _ request: Request, settingsForm: [String: String]?, errors: [FieldError]
    ) async throws -> Response {
        let records = try await specials.store.all()
        let settings = try await specials.kept.settings()
        let done = request.uri.queryParameters.get("done").flatMap {
            ["added", "saved", "deleted", "moved", "settings"].contains($0) ? $0 : nil
        }
        let now = specials.platform.clock.now
        let status: HTTPResponse.Status = errors.isEmpty ? .ok : .unprocessableContent
        return try web.page(
            request, template: "specials-manager", status: status, title: { $0("specials.manager.title") }
        ) { t in
            SpecialsManagerPage(
                specials: records.enumerated().map { index, record in
                    var tile = Self.tile(record, settings: settings, t: t)
                    tile.isFirst = index == 0
                    tile.isLast = index == records.count - 1
                    tile.isHidden = !record.special(baseURL: "").isValid(at: now)
                    tile.validity(record, settings: settings, t: t)
                    tile.deleteConfirm = t("specials.manager.deleteConfirm", ["name": record.displayName])
                    return tile
                },
                hasSpecials: !records.isEmpty,
                settings: settingsForm ?? [
                    "canvasUnit": String(settings.canvasUnit), "currency": settings.currency,
                    "timeZone": settings.timeZone,
                ],
                settingsErrors: errors.isEmpty
                    ? nil
                    : Dictionary(errors.map { ($0.field, $0.message) }, uniquingKeysWith: { first, _ in first }),
                settingsErrorSummary: errors.isEmpty ? nil : t("form.invalid"),
                // Said where the manager is: the settings' notice next to their form, at the end of the page.
                notice: errors.isEmpty && done != nil && done != "settings"
                    ? done.map { t("specials.manager.\($0)") } : nil,
                settingsNotice: errors.isEmpty && done == "settings" ? t("specials.manager.settings") : nil)
        }
    }

    /// The store's settings from the manager's page: 422 with each field's message and what was typed, or saved.
    func saveSettings(_ request: Request) async throws -> Response {
        var request = request
        let fields = try await request.formFields()
        do {
            try await specials.store.setSettings(try SpecialValidation.settings(form: fields))
        } catch let failure as ValidationFailure {
            let typed = ["canvasUnit", "currency", "timeZone"].map { ($0, fields[$0] ?? "") }
            return try await managerPage(
                request, settingsForm: Dictionary(uniqueKeysWithValues: typed), errors: failure.errors)
        }
        await specials.changed(nil, .settings)
        return .seeOther("/admin/specials?done=settings#specials-settings")
    }

    func form(_ request: Request, id: String?) async throws -> Response {
        var fields: [String: String] = ["width": "8", "height": "8"]
        if let id {
            guard let record = try await specials.store.find(id) else {
                throw Problem.notFound("There is no special \(id).")
            }
            fields = Self.fields(record, zone: try await specials.kept.settings().zone)
        }
        return try await formPage(request, id: id, fields: fields, errors: [])
    }

    /// The tile a special's form would save, drawn from what is typed so far (`specials.js` asks as the manager
    /// types): sizes held to the canvas, amounts written as the tiles write them, anything else as typed, and
    /// the letter tile the special gets when no picture is chosen.
    func preview(_ request: Request) async throws -> Response {
        let query = request.queryForm
        let typed = { (name: String) in String(query[name]?.prefix(200) ?? "") }
        let settings = try await specials.kept.settings()
        let size = { (name: String, most: Int) in min(most, max(1, Int(typed(name)) ?? 1)) }
        let image = try? await specials.image(typed("image"), name: typed("display_name"))
        let currency = Currency(code: settings.currency)
        // Editing a special: its reference is the lowest price applied in the 30 days before the price typed would
        // apply (now, or when the special begins), the regular price typed included from now on.
        var original = Price(typed("original_price"))
        var lowest = false
        let now = specials.platform.clock.now
        // A new special of a product had before: as it would be made now, against the product's prices.
        var record = try await specials.store.find(typed("special"))
        if record == nil, !typed("product_id").isEmpty {
            record = try await specials.store.newRecord(ofProduct: typed("product_id"), at: now)
        }
        if let record, let regular = original.money,
            let price = Price(typed("price")).money
        {
            let drafted = record.drafted(
                regular: regular, price: price,
                validFrom: SpecialValidation.parseDate(typed("validFrom"), in: settings.zone),
                validUntil: SpecialValidation.parseDate(typed("validUntil"), in: settings.zone), at: now)
            original = .amount(drafted.reference)
            lowest = drafted.reference != regular
        }
        let html = try web.render(request, template: "special-preview", title: { _ in "" }) { t in
            var tile = Self.tile(
                id: "preview", name: typed("display_name"),
                size: (size("width", settings.canvasUnit), size("height", 2 * settings.canvasUnit)),
                image: image ?? "", price: Price(typed("price")), original: original,
                promotion: typed("promotion").trimmingCharacters(in: .whitespaces),
                ends: Special.ends(
                    SpecialValidation.parseDate(typed("validUntil"), in: settings.zone), in: settings.zone),
                currency: currency, t: t, lowest: lowest, quantity: Quantity(parsing: typed("quantity")))
            if let reference = original.money, let price = Price(typed("price")).money, price >= reference, lowest {
                tile.referenceNote = t(
                    "specials.manager.notBelowReference", ["price": currency.format(reference, language: t.language)])
            }
            return tile
        }
        var response = HTTPCache.response(
            ByteBuffer(string: html), etag: HTTPCache.etag(for: Data(html.utf8)),
            contentType: "text/html; charset=utf-8", policy: .revalidate, request: request)
        response.headers[.cacheControl] = "no-cache, private"
        return response
    }

    /// The form's fields; validity dates as the store's local time.
    private static func fields(_ record: SpecialRecord, zone: TimeZone) -> [String: String] {
        let draft = record.draft
        return [
            "display_name": draft.displayName ?? "", "width": draft.width ?? "", "height": draft.height ?? "",
            "original_price": draft.originalPrice ?? "", "price": draft.price ?? "", "promotion": draft.promotion ?? "",
            "validFrom": record.validFrom.map { SpecialValidation.localInput($0, in: zone) } ?? "",
            "validUntil": record.validUntil.map { SpecialValidation.localInput($0, in: zone) } ?? "",
            "image": record.image ?? "",
            "quantity": record.quantity ?? "",
        ]
    }

    private func formPage(
        _ request: Request, id: String?, fields: [String: String], errors: [FieldError]
    ) async throws -> Response {
        let settings = try await specials.kept.settings()
        let status: HTTPResponse.Status = errors.isEmpty ? .ok : .unprocessableContent
        let titleKey = id == nil ? "specials.manager.add" : "specials.manager.edit"
        // A new special may put a product the store had on special before (not on one now) on again.
        let products = id == nil ? try await specials.store.products().filter { $0.specialId == nil } : []
        let currency = Currency(code: settings.currency)
        return try web.page(request, template: "specials-form", status: status, title: { $0(titleKey) }) { t in
            SpecialFormPage(
                products: products.map { product in
                    ProductChoice(
                        id: product.id, name: product.displayName,
                        regularPrice: Money(cents: product.regularCents).plain,
                        label: t(
                            "specials.fields.productChoice",
                            [
                                "name": product.displayName,
                                "price": currency.format(Money(cents: product.regularCents), language: t.language),
                            ]),
                        quantity: product.quantity ?? "", image: product.image ?? "",
                        isSelected: fields["product_id"] == product.id)
                }, hasProducts: !products.isEmpty,
                form: fields, heading: t(titleKey), action: id.map { "/admin/specials/\($0)" } ?? "/admin/specials",
                specialId: id,
                canvasUnit: settings.canvasUnit, maxHeight: settings.canvasUnit * 2, currency: settings.currency,
                zoneNote: t("specials.fields.zone", ["zone": settings.timeZone]),
                errors: errors.isEmpty
                    ? nil : Dictionary(errors.map { ($0.field, $0.message) }, uniquingKeysWith: { first, _ in first }),
                errorSummary: errors.isEmpty ? nil : t("form.invalid"))
        }
    }

    func save(_ request: Request, id: String?) async throws -> Response {
        var request = request
        let fields = try await request.formFields()
        let draft = SpecialDraft(
            displayName: fields["display_name"], width: fields["width"], height: fields["height"],
            originalPrice: fields["original_price"], price: fields["price"], promotion: fields["promotion"],
            validFrom: fields["validFrom"], validUntil: fields["validUntil"], quantity: fields["quantity"])
        do {
            let uploaded = fields["image"].flatMap { $0.isEmpty ? nil : $0 }
            if let id {
                var image: String?
                if let uploaded { image = try await specials.uploadedImage(uploaded) }
                let record = try await specials.store.update(id, image: image) { $0 = draft }
                await specials.changed(record.id, .updated)
                return .seeOther("/admin/specials?done=saved#special-\(record.id)")
            }
            let productId = fields["product_id"].flatMap { $0.isEmpty ? nil : $0 }
            let new = try await specials.newSpecial(draft, productId: productId, image: uploaded)
            let record = try await specials.store.create(new.draft, productId: productId, image: new.image)
            await specials.changed(record.id, .created)
            return .seeOther("/admin/specials?done=added#special-\(record.id)")
        } catch let failure as ValidationFailure {
            var typed = fields
            typed["csrf"] = nil
            return try await formPage(request, id: id, fields: typed, errors: failure.errors)
        }
    }

    func move(_ request: Request, id: String) async throws -> Response {
        var request = request
        let fields = try await request.formFields()
        let offset = fields["direction"] == "up" ? -1 : 1
        guard try await specials.store.move(id, by: offset) != nil else {
            throw Problem.notFound("There is no special \(id).")
        }
        await specials.changed(id, .reordered)
        return .seeOther("/admin/specials?done=moved#special-\(id)")
    }

    func delete(_ request: Request, id: String) async throws -> Response {
        if try await specials.store.delete(id) { await specials.changed(id, .deleted) }
        return .seeOther("/admin/specials?done=deleted")
    }
}

/// A special as a tile: its size in units and its texts in the page's language (prices written by QuadCore's
/// money rules).
struct SpecialTile {
    let id: String
    let name: String
    let width: Int
    let height: Int
    let image: String
    let price: String
    var original: String?
    var originalLabel: String?
    /// "lowest 30-day price $1.50": the struck price is the lowest of the last 30 days, not the regular one.
    var lowest: String?
    /// In the manager's preview: the special is not below that price, so it shows no saving.
    var referenceNote: String?
    /// "Save $1.00", "Économisez 1,00 $"; and the same as a share ("50%", "50 %").
    var savings: String?
    var savingsPercent: String?
    /// "$2.00/kg", "1,33 $/L".
    var unitPrice: String?
    /// "until Sun 30 Nov".
    var until: String?
    var promotion: String?
    /// What a screen reader says of the tile.
    var label: String
    // Its own page and the manager's list:
    var validFrom: String?
    var validUntil: String?
    var isValidNow = true
    /// On its own page: whether the person watches it, whether anyone is signed in, and whether they just chose.
    var watching = false
    var signedIn = false
    var watchSaved = false
    var isFirst = false
    var isLast = false
    var isHidden = false
    var deleteConfirm: String?

    init(id: String, name: String, width: Int, height: Int, image: String, price: String, label: String) {
        self.id = id
        self.name = name
        self.width = width
        self.height = height
        self.image = image
        self.price = price
        self.label = label
    }

    /// When it starts and ends, in the store's time and the page's language.
    mutating func validity(_ record: SpecialRecord, settings: SpecialsSettings, t: Localizer) {
        validFrom = record.validFrom.map {
            t("specials.validFrom", ["date": SpecialsRoutes.dateTime($0, settings, t.language)])
        }
        validUntil = record.validUntil.map {
            t("specials.validUntil", ["date": SpecialsRoutes.dateTime($0, settings, t.language)])
        }
    }
}

/// The mosaic: rows of tiles by the shared layout rule (also sent alone, for `specials.js` to swap in).
struct Mosaic {
    let rows: [Row]
    let hasSpecials: Bool
    let canvasUnit: Int
    /// When a special's validity begins or ends, changing the mosaic by itself.
    var changesAt: Date? = nil

    struct Row {
        let tiles: [SpecialTile]
        let width: Int
    }
}

/// A product in the new special's picker: what picking it fills in.
struct ProductChoice {
    let id: String
    let name: String
    let regularPrice: String
    /// "Orange juice 1.5 L (regular $1.80)".
    let label: String
    let quantity: String
    let image: String
    let isSelected: Bool
}

/// `/specials`.
struct SpecialsPage {
    let rows: [Mosaic.Row]
    let hasSpecials: Bool
    let canvasUnit: Int
    let refreshSeconds: Int
    /// When the specials were read (ms since 1970): the page says how old what it shows is.
    let generatedAt: Int
    let isAdmin: Bool
}

/// `/admin/specials`: the list in order, and the store's settings form.
struct SpecialsManagerPage {
    let specials: [SpecialTile]
    let hasSpecials: Bool
    let settings: [String: String]
    let settingsErrors: [String: String]?
    let settingsErrorSummary: String?
    let notice: String?
    let settingsNotice: String?
}

/// `/admin/specials/new` and `/admin/specials/{id}`: a special's form.
struct SpecialFormPage {
    /// For a new special: the products not on special now, to put one on again (their history kept).
    let products: [ProductChoice]
    let hasProducts: Bool
    let form: [String: String]
    let heading: String
    let action: String
    /// The special edited (the preview works out its reference price from its history); nil for a new one.
    let specialId: String?
    let canvasUnit: Int
    let maxHeight: Int
    let currency: String
    let zoneNote: String
    let errors: [String: String]?
    let errorSummary: String?
}
