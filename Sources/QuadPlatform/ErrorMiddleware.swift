import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOConcurrencyHelpers
import NIOCore
import OpenAPIRuntime
import QuadCore

/// Turns every error into an answer a client can use: `application/problem+json` for the API, a page
/// for the web. Unknown routes, wrong methods, unreadable bodies and oversized bodies all get a problem;
/// an unexpected error is logged with the request id and answered with a 500 that carries only that id.
struct ErrorMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext

    package let routes: RouteTable
    /// Renders an error as HTML for browsers on web routes; nil means answer with the problem.
    package let page: @Sendable (Problem, Request, Context) -> Response?

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    )
        async throws -> Response
    {
        do {
            return try await next(request, context)
        } catch {
            var problem = problem(for: error, request: request, context: context)
            if problem.status == .internalServerError {
                problem = .internalError(requestId: context.requestId)
            }
            if !isAPI(request.uri.path), let page = page(problem, request, context) {
                return page
            }
            return problem.response(instance: request.uri.path)
        }
    }

    /// Whether the answer is for a program (a problem) rather than a browser (a page): a presentation choice,
    /// never an access one.
    private func isAPI(_ path: String) -> Bool {
        path == "/api" || AccessTable.isAPI(path)
    }

    private func problem(for error: any Error, request: Request, context: Context) -> Problem {
        switch error {
        case let problem as Problem:
            return problem
        case let failure as ValidationFailure:
            return .validation(failure.errors)
        case let error as HTTPError where error.status == .notFound:
            let allowed = routes.methods(matching: request.uri.path)
            if !allowed.isEmpty, !allowed.contains(request.method) {
                let names = allowed.map(\.rawValue).sorted().joined(separator: ", ")
                return Problem(
                    .methodNotAllowed, detail: "\(request.method.rawValue) is not allowed here; use \(names).",
                    headers: [.allow: names])
            }
            return .notFound("Nothing is at \(request.uri.path).")
        case let error as HTTPError where error.status == .contentTooLarge:
            return .tooLarge(limit: BodyLimit.json)
        case let error as NIOTooManyBytesError:
            // A body read before `BodyLimitMiddleware` (a form's CSRF field) or past it.
            return .tooLarge(limit: error.maxBytes ?? BodyLimit.json)
        case let error as HTTPError:
            return Problem(error.status, detail: error.body, headers: error.headers)
        case let error as DecodingError:
            return .malformedBody(Self.describe(error))
        case let error as ServerError:
            // The generated server wraps errors: ours pass through; a request it could not decode is the client's fault.
            if let underlying = mappedUnderlying(error.underlyingError, request: request, context: context) {
                return underlying
            }
            // An answer in a type the client's Accept refuses (the bookings' calendar asked for as CSV): 406.
            if let refusal = error.underlyingError as? any HTTPResponseConvertible,
                refusal.httpStatus == .notAcceptable
            {
                return Problem(
                    .notAcceptable, detail: "Accept refuses the type of this answer: \(error.causeDescription).")
            }
            if error.operationOutput == nil, error.operationInput == nil,
                !(error.underlyingError is KeptAnswerMiddleware.SourceFailure)
            {
                return Problem(.badRequest, detail: "The request does not match the API: \(error.causeDescription).")
            }
            fallthrough
        default:
            // A generated-interface error describes the whole request, headers (and so credentials) included:
            // only what went wrong, and in which operation, is logged.
            let described =
                (error as? ServerError).map { "\($0.operationID): \(String(reflecting: $0.underlyingError))" }
                ?? String(reflecting: error)
            context.logger.error(
                "Unexpected error", metadata: ["error": "\(described)", "request": "\(context.requestId)"])
            return .internalError(requestId: context.requestId)
        }
    }

    private func mappedUnderlying(_ error: any Error, request: Request, context: Context) -> Problem? {
        switch error {
        case is Problem, is ValidationFailure, is HTTPError, is DecodingError:
            problem(for: error, request: request, context: context)
        default:
            nil
        }
    }

    static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            let path = context.codingPath.map(\.stringValue).joined(separator: ".")
            return path.isEmpty ? "" : " at \(path)"
        }
        switch error {
        case .dataCorrupted(let context):
            return "The body is not valid JSON\(path(context))."
        case .keyNotFound(let key, let context):
            return "The field \(key.stringValue) is missing\(path(context))."
        case .typeMismatch(let type, let context):
            return "A value has the wrong type\(path(context)): expected \(type)."
        case .valueNotFound(let type, let context):
            return "A value is missing\(path(context)): expected \(type)."
        @unknown default:
            return "The body could not be decoded."
        }
    }
}

/// The routes the router serves, for telling a wrong method (405) from an unknown path (404).
final class RouteTable: Sendable {
    private let patterns = NIOLockedValueBox<[(components: [Substring], method: HTTPRequest.Method)]>([])

    package func add(path: String, method: HTTPRequest.Method) {
        let components = path.split(separator: "/")
        patterns.withLockedValue { $0.append((components, method)) }
    }

    /// The methods of the route the router would pick for `path`: like the router, a literal segment wins over
    /// a parameter (`/api/books/delete` is not `/api/books/{bookId}`), so `Allow` names that route's methods only.
    func methods(matching path: String) -> Set<HTTPRequest.Method> {
        let parts = path.split(separator: "/")
        return patterns.withLockedValue { patterns in
            let matching = patterns.filter { Self.matches($0.components, parts) }
            guard
                let best = matching.map({ Self.specificity($0.components) }).max(by: {
                    $0.lexicographicallyPrecedes($1)
                })
            else { return [] }
            return Set(matching.filter { Self.specificity($0.components) == best }.map(\.method))
        }
    }

    /// Per segment: 2 for a literal, 1 for a parameter, 0 for a wildcard.
    private static func specificity(_ pattern: [Substring]) -> [Int] {
        pattern.map { part in
            if part == "*" || part == "**" { return 0 }
            return part.hasPrefix(":") || part.contains("{") ? 1 : 2
        }
    }

    private static func matches(_ pattern: [Substring], _ parts: [Substring]) -> Bool {
        if pattern.last == "**" { return parts.count >= pattern.count - 1 && zip(pattern, parts).allSatisfy(same) }
        return pattern.count == parts.count && zip(pattern, parts).allSatisfy(same)
    }

    private static func same(_ pair: (Substring, Substring)) -> Bool {
        let (pattern, part) = pair
        return pattern == part || pattern.hasPrefix(":") || pattern.hasPrefix("{") || pattern == "*" || pattern == "**"
            || (pattern.contains("{") && !part.isEmpty)
    }
}
