import Foundation
import Hummingbird
import QuadCore
import QuadPlatform

/// `GET /api/specials` from the snapshot, and the web app: the mosaic at `/specials` (rendered here,
/// made live by `specials.js`, which fetches `/specials/mosaic` again on each change), a details page per
/// special and the manager's pages under `/admin/specials` (forms, CSRF-protected, no JavaScript needed).
struct SpecialsRoutes {
    let specials: Specials
    let web: WebShell

    func register(on routes: Routes) {
        routes.on(.get, "/specials", .public) { request, _ in try await self.page(request) }
        routes.on(.get, "/specials/mosaic", .public) { request, _ in try await self.mosaic(request) }
        routes.on(.get, "/specials/:specialId", .public) { request, context in
            try await self.details(request, id: context.parameters.require("specialId"))
        }
        routes.on(.get, "/admin/specials", .admin) { request, _ in try await self.manager(request) }
        routes.on(.get, "/admin/specials/new", .admin) { request, _ in try await self.form(request, id: nil) }
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

    /// A tile's values for the templates: its size in units, its texts in the page's language.
    static func tile(_ record: SpecialRecord, currency: Currency, t: Localizer) -> [String: Any] {
        let special = record.special(baseURL: "")
        let prices = special.prices
        let price = currency.format(special.price, language: t.language)
        let original = currency.format(special.originalPrice, language: t.language)
        var tile: [String: Any] = [
            "id": record.id, "name": record.displayName, "width": record.width, "height": record.height,
            "image": record.image ?? "", "price": price,
        ]
        var label: String
        if prices.isReduced {
            tile["original"] = original
            tile["originalLabel"] = t("specials.was", ["price": original])
            if let percent = prices.savingsPercent {
                tile["savings"] = t("specials.savings", ["percent": String(percent)])
                label = t(
                    "specials.label.saving",
                    ["name": record.displayName, "original": original, "price": price, "percent": String(percent)])
            } else {
                label = t("specials.label.reduced", ["name": record.displayName, "original": original, "price": price])
            }
        } else {
            label = t("specials.label.plain", ["name": record.displayName, "price": price])
        }
        if let promotion = record.promotion {
            tile["promotion"] = promotion
            label += ", " + promotion
        }
        tile["label"] = label
        return tile
    }

    /// The mosaic's rows, by the shared layout rule.
    func mosaicValues(_ t: Localizer) async throws -> [String: Any] {
        let (records, settings, _) = try await specials.snapshot.current(at: specials.platform.clock.now)
        let currency = Currency(code: settings.currency)
        let rows = SpecialsLayout.rows(widths: records.map(\.width), canvas: settings.canvasUnit).map { row in
            ["tiles": row.tiles.map { Self.tile(records[$0], currency: currency, t: t) }, "width": row.width]
        }
        return ["rows": rows, "hasSpecials": !records.isEmpty, "canvasUnit": settings.canvasUnit]
    }

    func page(_ request: Request) async throws -> Response {
        let t = Localizer(language: web.language(for: request))
        let values = try await mosaicValues(t)
        return try web.page(request, template: "specials", title: { $0("specials.title") }) { t in
            var all = values
            all["refreshSeconds"] = Specials.refreshSeconds
            all["specialsScript"] = web.asset("specials")
            all["isAdmin"] = RequestInfo.current.person?.isAdmin == true
            return all
        }
    }

    /// The mosaic alone, for `specials.js` to swap in when something changed (ETag / 304).
    func mosaic(_ request: Request) async throws -> Response {
        let language = web.language(for: request)
        let values = try await mosaicValues(Localizer(language: language))
        let html = try web.render(request, template: "specials-mosaic", title: { _ in "" }) { _ in values }
        var response = HTTPCache.response(
            ByteBuffer(string: html), etag: HTTPCache.etag(for: Data(html.utf8)),
            contentType: "text/html; charset=utf-8", policy: .revalidate, request: request)
        response.headers[.vary] = "Accept-Language, Cookie"
        return response
    }

    func details(_ request: Request, id: String) async throws -> Response {
        let record = try await specials.visible(id)
        let settings = try await specials.snapshot.settings()
        return try web.page(request, template: "special", title: { _ in record.displayName }) { t in
            var values = Self.tile(record, currency: Currency(code: settings.currency), t: t)
            if let from = record.validFrom {
                values["validFrom"] = t("specials.validFrom", ["date": Self.dateTime(from, settings, t.language)])
            }
            if let until = record.validUntil {
                values["validUntil"] = t("specials.validUntil", ["date": Self.dateTime(until, settings, t.language)])
            }
            values["isValidNow"] = record.special(baseURL: "").isValid(at: specials.platform.clock.now)
            return values
        }
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
        let settings = try await specials.snapshot.settings()
        let done = request.uri.queryParameters.get("done").flatMap {
            ["added", "saved", "deleted", "moved", "settings"].contains($0) ? $0 : nil
        }
        let now = specials.platform.clock.now
        let status: HTTPResponse.Status = errors.isEmpty ? .ok : .unprocessableContent
        return try web.page(
            request, template: "specials-manager", status: status, title: { $0("specials.manager.title") }
        ) { t in
            var values: [String: Any] = [
                "specials": records.enumerated().map { index, record -> [String: Any] in
                    var tile = Self.tile(record, currency: Currency(code: settings.currency), t: t)
                    tile["isFirst"] = index == 0
                    tile["isLast"] = index == records.count - 1
                    tile["isHidden"] = !record.special(baseURL: "").isValid(at: now)
                    if let from = record.validFrom {
                        tile["validFrom"] = t("specials.validFrom", ["date": Self.dateTime(from, settings, t.language)])
                    }
                    if let until = record.validUntil {
                        tile["validUntil"] = t(
                            "specials.validUntil", ["date": Self.dateTime(until, settings, t.language)])
                    }
                    tile["deleteConfirm"] = t("specials.manager.deleteConfirm", ["name": record.displayName])
                    return tile
                },
                "hasSpecials": !records.isEmpty,
                "settings": settingsForm ?? [
                    "canvasUnit": String(settings.canvasUnit), "currency": settings.currency,
                    "timeZone": settings.timeZone,
                ],
            ]
            if !errors.isEmpty {
                values["settingsErrors"] = Dictionary(
                    errors.map { ($0.field, $0.message) }, uniquingKeysWith: { first, _ in first })
                values["settingsErrorSummary"] = t("form.invalid")
            } else if let done {
                // Said where the manager is: the settings' notice next to their form, at the end of the page.
                values[done == "settings" ? "settingsNotice" : "notice"] = t("specials.manager.\(done)")
            }
            return values
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
            fields = Self.fields(record, zone: try await specials.snapshot.settings().zone)
        }
        return try await formPage(request, id: id, fields: fields, errors: [])
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
        ]
    }

    private func formPage(
        _ request: Request, id: String?, fields: [String: String], errors: [FieldError]
    ) async throws -> Response {
        let settings = try await specials.snapshot.settings()
        let status: HTTPResponse.Status = errors.isEmpty ? .ok : .unprocessableContent
        let titleKey = id == nil ? "specials.manager.add" : "specials.manager.edit"
        return try web.page(request, template: "specials-form", status: status, title: { $0(titleKey) }) { t in
            var values: [String: Any] = [
                "form": fields, "heading": t(titleKey),
                "action": id.map { "/admin/specials/\($0)" } ?? "/admin/specials",
                "canvasUnit": settings.canvasUnit, "maxHeight": settings.canvasUnit * 2,
                "currency": settings.currency, "currencySymbol": Currency(code: settings.currency).symbol,
                "specialsScript": web.asset("specials"),
                "zoneNote": t("specials.fields.zone", ["zone": settings.timeZone]),
            ]
            if !errors.isEmpty {
                values["errors"] = Dictionary(
                    errors.map { ($0.field, $0.message) }, uniquingKeysWith: { first, _ in first })
                values["errorSummary"] = t("form.invalid")
            }
            return values
        }
    }

    func save(_ request: Request, id: String?) async throws -> Response {
        var request = request
        let fields = try await request.formFields()
        let draft = SpecialDraft(
            displayName: fields["display_name"], width: fields["width"], height: fields["height"],
            originalPrice: fields["original_price"], price: fields["price"], promotion: fields["promotion"],
            validFrom: fields["validFrom"], validUntil: fields["validUntil"])
        do {
            let uploaded = fields["image"].flatMap { $0.isEmpty ? nil : $0 }
            if let id {
                var image: String?
                if let uploaded { image = try await specials.uploadedImage(uploaded) }
                let record = try await specials.store.update(id, image: image) { $0 = draft }
                await specials.changed(record.id, .updated)
                return .seeOther("/admin/specials?done=saved#special-\(record.id)")
            }
            let settings = try await specials.snapshot.settings()
            let checked = try SpecialValidation.special(
                draft, canvasUnit: settings.canvasUnit, timeZone: settings.zone)
            let record = try await specials.store.create(
                draft, image: try await specials.image(uploaded, name: checked.displayName))
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
