import Foundation
import Hummingbird
import QuadCore
import QuadPlatform

/// The link at the foot of every message of a kind a person may turn off: `/mail/unsubscribe?token=…` asks once (a
/// page with one button: mail scanners open links, and opening one changes nothing) and the button turns that kind
/// off. A mail client's one click (RFC 8058) posts to `/api/mail/unsubscribe` instead (`unsubscribeMail`).
struct UnsubscribeRoutes {
    let accounts: Accounts
    let web: WebShell

    func register(on routes: Routes) {
        routes.on(.get, "/mail/unsubscribe", .public) { request, _ in try await page(request) }
        routes.on(.post, "/mail/unsubscribe", .public) { request, _ in try await stop(request) }
    }

    /// The question and its button, what was turned off, or why the link no longer works.
    func page(_ request: Request) async throws -> Response {
        let done = request.uri.queryParameters.get("done").flatMap { MailChoice(rawValue: String($0)) }
        let token = request.uri.queryParameters.get("token").map { String($0) } ?? ""
        let target = done == nil && !token.isEmpty ? try await accounts.addresses.unsubscribeTarget(token: token) : nil
        var response = try web.page(request, template: "unsubscribe", title: { $0("unsubscribe.title") }) { t in
            UnsubscribePage(
                ask: target.map {
                    t(
                        "unsubscribe.ask",
                        ["choice": t("mail.choice.\($0.choice.rawValue)"), "address": $0.address ?? ""])
                },
                token: token, done: done.map { t("unsubscribe.done", ["choice": t("mail.choice.\($0.rawValue)")]) },
                over: done == nil && target == nil ? t("unsubscribe.over") : nil)
        }
        // The token is in this page's address and form: no cache keeps it.
        response.headers[.cacheControl] = "no-store"
        return response
    }

    /// The button: that kind of mail is off, and the answer says which (or that the link is over).
    func stop(_ request: Request) async throws -> Response {
        var request = request
        let fields = try await request.formFields()
        guard let choice = try await accounts.addresses.unsubscribe(token: fields["token"] ?? "") else {
            return Response.seeOther(SitePath(known: "/mail/unsubscribe"))
        }
        return Response.seeOther(SitePath(known: "/mail/unsubscribe?done=\(choice.rawValue)"))
    }
}

/// `/mail/unsubscribe`: the question and its button, what was turned off, or the link over.
struct UnsubscribePage {
    let ask: String?
    let token: String
    let done: String?
    let over: String?
}
