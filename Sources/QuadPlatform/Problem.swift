import Foundation
import HTTPTypes
import Hummingbird
import QuadCore

/// An API error as `application/problem+json` (RFC 9457): what went wrong, for a person to read,
/// and for validation the fields at fault.
public struct Problem: Error, HTTPResponseError, Sendable {
    public var status: HTTPResponse.Status
    /// A stable identifier of the kind of problem, e.g. `urn:quad:problem:validation`.
    public var type: String
    public var title: String
    public var detail: String?
    public var errors: [FieldError]?
    public var requestId: String?
    public var headers: HTTPFields = [:]

    public init(
        _ status: HTTPResponse.Status, type: String? = nil, title: String? = nil, detail: String? = nil,
        errors: [FieldError]? = nil, headers: HTTPFields = [:]
    ) {
        self.status = status
        self.type = type.map { "urn:quad:problem:\($0)" } ?? "about:blank"
        self.title = title ?? status.reasonPhrase
        self.detail = detail
        self.errors = errors
        self.headers = headers
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        response(instance: request.uri.path)
    }

    package func response(instance: String?) -> Response {
        let data = json(instance: instance)
        var headers = self.headers
        headers[.contentType] = "application/problem+json"
        headers[.cacheControl] = "no-store"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// The problem document (RFC 9457) as sent.
    package func json(instance: String?) -> Data {
        let body = Body(
            type: type, title: title, status: Int(status.code), detail: detail, instance: instance, errors: errors,
            requestId: requestId)
        return (try? Self.encoder.encode(body)) ?? Data()
    }

    private struct Body: Encodable {
        package var type: String
        package var title: String
        package var status: Int
        package var detail: String?
        package var instance: String?
        package var errors: [FieldError]?
        var requestId: String?
    }

    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()
}

extension Problem {
    public static func notFound(_ detail: String? = nil) -> Problem {
        Problem(.notFound, detail: detail ?? "There is nothing here.")
    }

    public static func validation(_ errors: [FieldError]) -> Problem {
        let detail = errors.map(\.message).joined(separator: " ")
        return Problem(
            .unprocessableContent, type: "validation", title: "Some fields are not valid", detail: detail,
            errors: errors)
    }

    public static func malformedBody(_ detail: String) -> Problem {
        Problem(.badRequest, type: "malformed-body", title: "The request body could not be read", detail: detail)
    }

    public static func conflict(_ type: String, title: String, detail: String? = nil) -> Problem {
        Problem(.conflict, type: type, title: title, detail: detail)
    }

    public static func unauthorized(_ detail: String) -> Problem {
        Problem(.unauthorized, detail: detail, headers: [.wwwAuthenticate: "Bearer realm=\"quad\""])
    }

    public static func tooLarge(limit: Int) -> Problem {
        Problem(
            .contentTooLarge, type: "too-large", title: "Request body too large",
            detail: "The body is larger than the limit of \(limit / 1024 / 1024) MiB.")
    }

    public static func internalError(requestId: String) -> Problem {
        var problem = Problem(
            .internalServerError,
            detail: "An unexpected error happened. Quote reference \(requestId) when reporting it.")
        problem.requestId = requestId
        return problem
    }
}
