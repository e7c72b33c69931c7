import Foundation
import QuadCore

/// Taking offers as one intent each: one Idempotency-Key per offer, kept until the server answers for sure, so a tap
/// repeated after an answer lost offline takes it once. The stores that offer Accept share it.
@MainActor
final class OfferIntents {
    private var keys: [String: String] = [:]

    /// Takes the offer held in `placeId`: what it gave, or the server's reason (as `KitError`).
    func accept(_ placeId: String, client: QuadClient) async throws -> AcceptedOfferNote {
        let key = keys[placeId] ?? UUID().uuidString
        keys[placeId] = key
        do {
            let accepted = try await client.acceptOffer(placeId: placeId, idempotencyKey: key)
            keys[placeId] = nil
            return accepted
        } catch {
            let kit = KitError.from(error)
            if !kit.isOffline { keys[placeId] = nil }
            throw kit
        }
    }
}
