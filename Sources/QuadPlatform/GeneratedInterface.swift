import Foundation
import HTTPTypes
import OpenAPIRuntime

// What the generated interface is registered with (`buildRouter`): how it reads bodies and dates.

/// Hands the generated interface no body instead of an empty JSON one (`curl -X POST -H 'Content-Type:
/// application/json'`): an operation whose body is optional would otherwise try to decode nothing and answer 400.
/// An empty upload stays an (empty) upload, which is refused as not an image.
struct EmptyBodyAsNone: ServerMiddleware {
    package func intercept(
        _ request: HTTPRequest, body: HTTPBody?, metadata: ServerRequestMetadata, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        let type = request.headerFields[.contentType]?.lowercased() ?? "application/json"
        let none = body?.length == .known(0) && type.hasPrefix("application/json")
        return try await next(request, none ? nil : body, metadata)
    }
}

/// RFC 3339 dates as the contract's `date-time` allows them, fractional seconds or not; written without.
struct RFC3339Dates: DateTranscoder {
    package func encode(_ date: Date) throws -> String { date.formatted(.iso8601) }

    package func decode(_ text: String) throws -> Date {
        if let date = Self.parse(text) { return date }
        // Foundation reads offsets up to ±18:00; RFC 3339 allows up to ±23:59: such an offset is applied here.
        let characters = Array(text)
        if characters.count > 6, let sign = ["+": 1.0, "-": -1.0][characters[characters.count - 6]],
            characters[characters.count - 3] == ":",
            let hours = Int(String(characters[(characters.count - 5)...(characters.count - 4)])),
            let minutes = Int(String(characters[(characters.count - 2)...])), hours < 24, minutes < 60,
            let utc = Self.parse(String(characters.dropLast(6)) + "Z")
        {
            return utc.addingTimeInterval(-sign * Double(hours * 3600 + minutes * 60))
        }
        throw DecodingError.dataCorrupted(
            .init(codingPath: [], debugDescription: "\(text) is not an RFC 3339 date-time."))
    }

    private static func parse(_ text: String) -> Date? {
        if let date = try? Date(text, strategy: .iso8601) { return date }
        return try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }
}
