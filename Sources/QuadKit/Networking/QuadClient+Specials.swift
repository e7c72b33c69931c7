import Foundation
import QuadCore

extension QuadClient {
    /// `GET /api/specials` (a snapshot served as stored bytes, so a raw route), read with QuadCore's types.
    public func specials() async throws -> Fetched<SpecialsList> {
        let fetched = try await get(path: "/api/specials", operationID: "listSpecials")
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        do {
            let list = try decoder.decode(SpecialsList.self, from: fetched.value)
            return Fetched(value: list, revalidated: fetched.revalidated, etag: fetched.etag)
        } catch {
            throw KitError.unexpected("The specials could not be read: \(error)")
        }
    }
}

extension QuadClient {
    /// `PUT` or `DELETE /api/specials/{id}/watch`: be told, or stop being told, when the product next goes on special.
    public func setWatching(specialId: String, _ watching: Bool) async throws {
        if watching {
            let output = try await call { try await api.watchSpecial(path: .init(specialId: specialId)) }
            guard case .noContent = output else { throw Self.failure(output) }
        } else {
            let output = try await call { try await api.unwatchSpecial(path: .init(specialId: specialId)) }
            guard case .noContent = output else { throw Self.failure(output) }
        }
    }

    /// `GET /api/me/watches`: the products the signed-in person watches that are on show, and the store's currency.
    public func watchedSpecials() async throws -> (currency: String, specials: [Special]) {
        let output = try await call { try await api.listMyWatches() }
        guard case .ok(let ok) = output, case .json(let watched) = ok.body else { throw Self.failure(output) }
        let specials = try watched.specials.map { special in
            guard let original = Money(special.originalPrice), let price = Money(special.price) else {
                throw KitError.unexpected("The special \(special.id) has prices that could not be read.")
            }
            return Special(
                id: special.id, displayName: special.displayName, width: special.width, height: special.height,
                imageUrl: special.imageUrl, originalPrice: original, price: price, promotion: special.promotion,
                validFrom: special.validFrom, validUntil: special.validUntil, position: special.position,
                quantity: special.quantity, productId: special.productId)
        }
        return (watched.currency, specials)
    }
}
