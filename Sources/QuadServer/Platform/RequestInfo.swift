import Hummingbird
import QuadCore

/// What handlers of the generated interface need from the HTTP request but the contract does not pass
/// them (credentials, the client's address, the request id), carried in a task-local value.
public struct RequestInfo: Sendable {
    public var authorization: String?
    public var clientKey: String
    /// The client's IP address.
    public var clientAddress: String = "local"
    public var requestId: String
    /// How the client reached Quad (`http://host:port`), for absolute URLs.
    public var baseURL: String
    /// The signed-in caller, if any.
    public var person: Person?
    /// The session token the caller signed in with (bearer or cookie), for signing out.
    public var sessionToken: String?

    @TaskLocal public static var current = RequestInfo(
        authorization: nil, clientKey: "local", requestId: "-", baseURL: "http://localhost")
}

struct RequestInfoMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    let trustProxy: Bool

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    )
        async throws -> Response
    {
        var info = RequestInfo(
            authorization: request.headers[.authorization], clientKey: context.clientKey, requestId: context.requestId,
            baseURL: request.baseURL(trustProxy: trustProxy), person: context.person)
        info.clientAddress = context.clientAddress
        info.sessionToken = context.sessionToken
        return try await RequestInfo.$current.withValue(info) { try await next(request, context) }
    }
}
