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
