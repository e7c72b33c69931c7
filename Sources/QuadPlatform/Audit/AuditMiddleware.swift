import Hummingbird
import QuadCore

/// Records what the access layer let through and succeeded: every unsafe request of an admin, and the security events
/// the contract or a form's declaration marks (`x-quad-audit`: an app link made or revoked, a calendar address made
/// anew, a password changed), whoever makes them. Inside `RequestInfoMiddleware`, so it sees who asked and what the
/// handler noted; an answer replayed for an `Idempotency-Key` is not done again, and is not recorded again.
struct AuditMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    let trail: AuditTrail
    let table: AccessTable

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard ![.get, .head, .options].contains(request.method), let endpoint = context.endpointPath,
            let entry = table.entry(request.method, endpoint: endpoint)
        else { return try await next(request, context) }
        let info = RequestInfo.current
        guard let person = info.person, entry.audit || person.isAdmin else { return try await next(request, context) }
        let response = try await next(request, context)
        guard response.status.code < 400 else { return response }
        await trail.record(
            AuditEntry(
                at: trail.clock.now,
                actor: context.signedIn == .bearer && context.sessionToken == nil ? "admin token" : person.username,
                action: table.operationName(request.method, endpoint: endpoint), target: request.uri.path,
                detail: info.audit.text, address: info.clientAddress))
        return response
    }
}
