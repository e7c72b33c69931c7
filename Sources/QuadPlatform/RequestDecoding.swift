import Foundation
import Hummingbird

extension Request {
    /// Decodes a JSON body, letting a `DecodingError` through so the client gets a problem naming
    /// the field at fault ("The field title is missing.").
    public mutating func decodeJSON<T: Decodable>(_ type: T.Type, context: some RequestContext) async throws -> T {
        let body = try await collectBody(upTo: BodyLimit.json)
        return try JSONDecoder().decode(T.self, from: body)
    }
}
