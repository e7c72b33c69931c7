import Foundation
import QuadCore

/// A person's day: the same sections as their home page, in `language` (a BCP 47 tag: "fr", "en-AU"; the server's
/// default, English, when nil).
extension QuadClient {
    public func today(language: String? = nil) async throws -> Today {
        let output = try await call { try await api.getToday(headers: .init(acceptLanguage: language)) }
        guard case .ok(let ok) = output, case .json(let day) = ok.body else { throw Self.failure(output) }
        return day
    }
}
