import HTTPTypes
import Hummingbird
import QuadCore

/// Where features register their routes: a page or form says who may use it as it is registered (`on`); an API
/// route is registered bare (`api`), because the contract (`x-quad-access`) says who may call it.
struct Routes {
    let router: Router<AppRequestContext>
    let access: AccessTable

    /// A page or a form, open to `rule`.
    func on<Output: ResponseGenerator>(
        _ method: HTTPRequest.Method, _ path: String, _ rule: AccessRule,
        use handler: @escaping @Sendable (Request, AppRequestContext) async throws -> Output
    ) {
        access.declare(method, path, rule)
        router.on(RouterPath(path), method: method, use: handler)
    }

    /// An API route the contract documents (its declaration is checked when the router is built).
    func api<Output: ResponseGenerator>(
        _ method: HTTPRequest.Method, _ path: String,
        use handler: @escaping @Sendable (Request, AppRequestContext) async throws -> Output
    ) {
        router.on(RouterPath(path), method: method, use: handler)
    }
}
