import Foundation
import OpenAPIRuntime
import QuadCore
import QuadPlatform

/// Specials' operations of the generated interface. The whole `GET /api/specials` is answered from what is kept
/// (`KeptAnswerMiddleware`, from `Specials.keptAnswers`).
struct SpecialsOperations: APIProtocol {
    let specials: Specials
    var platform: Platform { specials.platform }
}

extension SpecialsOperations {
    func createSpecial(_ input: Operations.CreateSpecial.Input) async throws -> Operations.CreateSpecial.Output {
        guard case .json(let body) = input.body else { throw Problem.malformedBody("Send the special as JSON.") }
        let draft = SpecialDraft(
            displayName: body.displayName, width: String(body.width), height: String(body.height),
            originalPrice: body.originalPrice, price: body.price, promotion: body.promotion,
            validFrom: body.validFrom, validUntil: body.validUntil, quantity: body.quantity)
        let new = try await specials.newSpecial(draft, productId: body.productId, image: body.image)
        let record = try await specials.store.create(new.draft, productId: body.productId, image: new.image)
        await specials.changed(record.id, .created)
        return .created(.init(body: .json(.init(record.special(baseURL: RequestInfo.current.baseURL)))))
    }

    func listProducts(_ input: Operations.ListProducts.Input) async throws -> Operations.ListProducts.Output {
        let baseURL = RequestInfo.current.baseURL
        let products = try await specials.store.products().map { product in
            Components.Schemas.Product(
                id: product.id, displayName: product.displayName, imageUrl: baseURL + (product.image ?? ""),
                quantity: product.quantity, regularPrice: Money(cents: product.regularCents).plain,
                specialId: product.specialId)
        }
        return .ok(.init(body: .json(.init(products: products))))
    }

    func listAllSpecials(_ input: Operations.ListAllSpecials.Input) async throws -> Operations.ListAllSpecials.Output {
        return .ok(.init(body: .json(try await allSpecials(try await specials.store.all()))))
    }

    /// Answered from what is kept (`Specials.keptAnswers`); here when the request carries a query.
    func listSpecials(_ input: Operations.ListSpecials.Input) async throws -> Operations.ListSpecials.Output {
        .ok(
            .init(
                body: .json(
                    try await allSpecials(try await specials.kept.current(at: specials.platform.clock.now).records))
            ))
    }

    func getSpecial(_ input: Operations.GetSpecial.Input) async throws -> Operations.GetSpecial.Output {
        let record = try await specials.visible(input.path.specialId)
        return .ok(.init(body: .json(.init(record.special(baseURL: RequestInfo.current.baseURL)))))
    }

    func updateSpecial(_ input: Operations.UpdateSpecial.Input) async throws -> Operations.UpdateSpecial.Output {
        guard case .json(let body) = input.body else { throw Problem.malformedBody("Send the changes as JSON.") }
        var image: String?
        if let path = body.image { image = try await specials.uploadedImage(path) }
        let record = try await specials.store.update(input.path.specialId, image: image) { draft in
            if let value = body.displayName { draft.displayName = value }
            if let value = body.width { draft.width = String(value) }
            if let value = body.height { draft.height = String(value) }
            if let value = body.originalPrice { draft.originalPrice = value }
            if let value = body.price { draft.price = value }
            if let value = body.promotion { draft.promotion = value }
            if let value = body.validFrom { draft.validFrom = value }
            if let value = body.validUntil { draft.validUntil = value }
            if let value = body.quantity { draft.quantity = value }
        }
        await specials.changed(record.id, .updated)
        return .ok(.init(body: .json(.init(record.special(baseURL: RequestInfo.current.baseURL)))))
    }

    func deleteSpecial(_ input: Operations.DeleteSpecial.Input) async throws -> Operations.DeleteSpecial.Output {
        guard try await specials.store.delete(input.path.specialId) else {
            throw Problem.notFound("There is no special \(input.path.specialId).")
        }
        await specials.changed(input.path.specialId, .deleted)
        return .noContent(.init())
    }

    func reorderSpecials(_ input: Operations.ReorderSpecials.Input) async throws -> Operations.ReorderSpecials.Output {
        guard case .json(let body) = input.body else { throw Problem.malformedBody("Send {\"ids\": [...]}.") }
        let records = try await specials.store.reorder(body.ids)
        await specials.changed(nil, .reordered)
        return .ok(.init(body: .json(try await allSpecials(records))))
    }

    func updateSpecialsSettings(
        _ input: Operations.UpdateSpecialsSettings.Input
    ) async throws -> Operations.UpdateSpecialsSettings.Output {
        guard case .json(let body) = input.body else { throw Problem.malformedBody("Send the settings as JSON.") }
        let current = try await specials.store.settings()
        let settings = try SpecialValidation.settings(
            canvasUnit: body.canvasUnit, currency: body.currency, timeZone: body.timeZone ?? current.timeZone)
        try await specials.store.setSettings(settings)
        await specials.changed(nil, .settings)
        return .ok(
            .init(
                body: .json(
                    .init(canvasUnit: settings.canvasUnit, currency: settings.currency, timeZone: settings.timeZone))))
    }

    func setSpecialImage(_ input: Operations.SetSpecialImage.Input) async throws -> Operations.SetSpecialImage.Output {
        guard try await specials.store.find(input.path.specialId) != nil else {
            throw Problem.notFound("There is no special \(input.path.specialId).")
        }
        let body: HTTPBody =
            switch input.body {
            case .jpeg(let body), .png(let body), .imageWebp(let body), .binary(let body): body
            }
        let image = try await platform.images.store(try await ImageStore.collect(body))
        let record = try await specials.store.setImage(input.path.specialId, path: image.path)
        await specials.changed(record.id, .updated)
        return .ok(.init(body: .json(.init(record.special(baseURL: RequestInfo.current.baseURL)))))
    }

    func watchSpecial(_ input: Operations.WatchSpecial.Input) async throws -> Operations.WatchSpecial.Output {
        let person = try Access.person()
        _ = try await specials.visible(input.path.specialId)
        try await specials.store.setWatching(input.path.specialId, username: person.username, true)
        return .noContent(.init())
    }

    /// Allowed whatever the special's validity: no one is kept watching what they can no longer see.
    func unwatchSpecial(_ input: Operations.UnwatchSpecial.Input) async throws -> Operations.UnwatchSpecial.Output {
        try await specials.store.setWatching(input.path.specialId, username: try Access.person().username, false)
        return .noContent(.init())
    }

    func listMyWatches(_ input: Operations.ListMyWatches.Input) async throws -> Operations.ListMyWatches.Output {
        let watched = try await specials.store.watched(by: try Access.person().username)
        // What is on show now, as every page reads it (kept), not the table read again.
        let (records, settings, _) = try await specials.kept.current(at: specials.platform.clock.now)
        let shown = records.filter { watched.contains($0.productId) }
        return .ok(
            .init(
                body: .json(
                    .init(
                        currency: settings.currency,
                        specials: shown.map { .init($0.special(baseURL: RequestInfo.current.baseURL)) }))))
    }

    private func allSpecials(_ records: [SpecialRecord]) async throws -> Components.Schemas.SpecialList {
        let settings = try await specials.kept.settings()
        return .init(
            canvasUnit: settings.canvasUnit, currency: settings.currency,
            managerSpecials: records.map { .init($0.special(baseURL: RequestInfo.current.baseURL)) })
    }
}

extension Components.Schemas.Special {
    init(_ special: Special) {
        self.init(
            id: special.id, displayName: special.displayName, width: special.width, height: special.height,
            imageUrl: special.imageUrl, originalPrice: special.originalPrice.plain, price: special.price.plain,
            promotion: special.promotion, validFrom: special.validFrom, validUntil: special.validUntil,
            position: special.position, quantity: special.quantity, productId: special.productId)
    }
}
