import Foundation
import HTTPTypes
import Hummingbird
import QuadCore

/// What every request meets before routing: a path in its one canonical form, and a personal app link
/// taken off the path. The router matches `//api/x` and `/api/./x` as `/api/x`, so a check on the raw path
/// could be walked round; here such paths are refused (400) before anything reads them.
package struct FrontDoor: HTTPResponder {
    package typealias Context = AppRequestContext
    package let router: RouterResponder<AppRequestContext>
    /// The router's request log (`RequestLogMiddleware`), for the requests refused here, before the router.
    let log: RequestLog
    /// The original apps' file names under an app link, as Quad's paths (`Feature.appLinkPaths`).
    let appLinkPaths: [String: String]
    /// The security headers, made once (`SecurityHeaders.fields`).
    let securityFields: [HTTPField]

    package func respond(to request: Request, context: Context) async throws -> Response {
        var response = try await route(request, context: context)
        SecurityHeaders.add(to: &response.headers, securityFields)
        return response
    }

    private func route(_ request: Request, context: Context) async throws -> Response {
        let start = ContinuousClock.now
        let target = request.head.path ?? ""
        guard let path = CanonicalPath(target) else {
            var response = Problem(
                .badRequest, type: "non-canonical-path", title: "Not a canonical path",
                detail: "Write the path without empty, `.` or `..` segments, encoded slashes or backslashes."
            ).response(instance: nil)
            // Its line and id, as the router gives every answer: a path walking round the rules is what an operator
            // looks for in the log.
            response.headers[.xRequestID] = context.requestId
            log.write(
                method: request.method.rawValue, path: request.uri.path, status: UInt(response.status.code),
                elapsed: ContinuousClock.now - start, id: context.requestId)
            return response
        }
        guard let link = AppLinkPath(path, renamed: appLinkPaths) else {
            return try await router.respond(to: request, context: context)
        }
        var head = request.head
        head.path = link.rest
        var context = context
        context.appLinkKey = link.key
        return try await router.respond(to: Request(head: head, body: request.body), context: context)
    }
}

/// A request target whose path has one form only: starts with `/`; no empty segment but a trailing slash;
/// no `.` or `..` segment, encoded or not; no encoded `/`, `\` or NUL, no backslash, no control character.
struct CanonicalPath {
    package let path: String
    package let query: String?

    package init?(_ target: String) {
        let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let path = String(parts.first ?? "")
        guard path.hasPrefix("/"),
            !path.unicodeScalars.contains(where: {
                $0 == "\\" || $0.value < 0x21 || $0.value == 0x7F || $0.value > 0x7E
            })
        else { return nil }
        let lowered = path.lowercased()
        guard !lowered.contains("%2f"), !lowered.contains("%5c"), !lowered.contains("%00") else { return nil }
        let segments = path.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
        for (index, segment) in segments.enumerated() {
            if segment.isEmpty, index != segments.count - 1 { return nil }
            let decoded = segment.removingPercentEncoding ?? ""
            if decoded == "." || decoded == ".." { return nil }
        }
        self.path = path
        self.query = parts.count > 1 ? String(parts[1]) : nil
    }
}

/// `/legacy/<key>/…`: a personal app link (see `AppLinkStore`). The original apps are given the link as their
/// base URL and append their own paths, which are Quad's under `/api`: `/books/1` is `/api/books/1`; a file of an
/// original app is the path its feature names (`renamed`: Rooms' `rooms.json` is `/api/rooms`).
package struct AppLinkPath {
    package static let prefix = "/legacy/"
    package let key: String
    let rest: String

    init?(_ target: CanonicalPath, renamed: [String: String]) {
        guard target.path.hasPrefix(Self.prefix) else { return nil }
        let tail = target.path.dropFirst(Self.prefix.count)
        let key = String(tail.prefix { $0 != "/" })
        guard !key.isEmpty else { return nil }
        var rest = String(tail.dropFirst(key.count))
        if rest.isEmpty || rest == "/" { rest = "/api/" }
        if !rest.hasPrefix("/api/") { rest = "/api" + rest }
        rest = renamed[rest] ?? rest
        self.key = key
        self.rest = rest + (target.query.map { "?" + $0 } ?? "")
    }
}
