import Foundation
import OpenAPIRuntime
import QuadCore
import QuadPlatform

/// `GET /api/me/today`: the signed-in person's day, the same sections as their home page, in the language they ask
/// for (`Accept-Language`).
struct TodayOperations: APIProtocol {
    let today: TodayFeature

    func getToday(_ input: Operations.GetToday.Input) async throws -> Operations.GetToday.Output {
        let language = Language.negotiate(acceptLanguage: input.headers.acceptLanguage)
        let day = try await today.day(for: try Access.person(), t: Localizer(language: language))
        return .ok(.init(body: .json(day)))
    }
}
