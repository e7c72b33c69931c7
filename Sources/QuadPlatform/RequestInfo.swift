import HTTPTypes
import Hummingbird
import NIOConcurrencyHelpers
import QuadCore

/// What handlers need from the HTTP request but the generated interface does not pass them (the caller,
/// their address, how they reached Quad), carried in a task-local value.
public struct RequestInfo: Sendable {
    /// The client's IP address.
    public var clientAddress = "local"
    /// How the client reached Quad (`http://host:port`), for absolute URLs.
    public var baseURL = "http://localhost"
    /// The signed-in caller, if any.
    public var person: Person?
    /// The session token the caller signed in with (bearer or cookie), for signing out.
    public var sessionToken: String?
    /// What needs the signed-in person now, for a page's frame (`AttentionMiddleware`): nil where no frame is drawn.
    package var attention: Attention?
    /// Headers a handler of the generated interface adds to its answer as they are: the runtime would
    /// percent-encode them (an ETag's quotes, a Location's slashes).
    package let headers = ResponseHeaders()
    /// What the handler notes for the request's audit entry (`AuditMiddleware`).
    package let audit = AuditNote()

    @TaskLocal public static var current = RequestInfo()
}

struct RequestInfoMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    package let trustProxy: Bool

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    )
        async throws -> Response
    {
        let info = RequestInfo(
            clientAddress: context.clientAddress, baseURL: request.baseURL(trustProxy: trustProxy),
            person: context.person, sessionToken: context.sessionToken)
        var response = try await RequestInfo.$current.withValue(info) { try await next(request, context) }
        for field in info.headers.fields { response.headers[field.name] = field.value }
        return response
    }
}

/// See `RequestInfo.headers`.
package final class ResponseHeaders: Sendable {
    private let box = NIOLockedValueBox(HTTPFields())

    package var fields: HTTPFields { box.withLockedValue { $0 } }

    package func set(_ name: HTTPField.Name, _ value: String) {
        box.withLockedValue { $0[name] = value }
    }
}
