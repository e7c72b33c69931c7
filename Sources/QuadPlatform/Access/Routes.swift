import HTTPTypes
import Hummingbird
import QuadCore

/// Where features register their pages and forms, each saying who may use it as it is registered (`on`). Every
/// API operation is the generated interface's, and the contract (`x-quad-access`) says who may call it.
package struct Routes {
    package let router: Router<AppRequestContext>
    let access: AccessTable

    /// A page or a form, open to `rule`. `upload`: a form that sends a file, read within the upload limit
    /// (`BodyLimit.upload`) rather than the one for other bodies. `audit`: a security event whoever makes it, kept in
    /// the audit trail (an admin's every form is kept anyway).
    package func on<Output: ResponseGenerator>(
        _ method: HTTPRequest.Method, _ path: String, _ rule: AccessRule, upload: Bool = false, audit: Bool = false,
        use handler: @escaping @Sendable (Request, AppRequestContext) async throws -> Output
    ) {
        access.declare(method, path, rule, upload: upload, audit: audit)
        router.on(RouterPath(path), method: method, use: handler)
    }
}
