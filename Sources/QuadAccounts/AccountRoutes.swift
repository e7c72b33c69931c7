import Foundation
import Hummingbird
import QuadCore
import QuadPlatform

/// `/account`: who you are, and your personal app links (create one, shown once; revoke one). Plain forms.
struct AccountRoutes {
    let accounts: Accounts
    let web: WebShell

    func register(on routes: Routes) {
        routes.on(.get, "/account", .person) { request, _ in
            let done = request.uri.queryParameters.get("done") == "revoked"
            return try await page(request, notice: done ? { $0("account.revoked") } : nil)
        }
        routes.on(.post, "/account/app-links", .member) { request, _ in try await create(request) }
        routes.on(.post, "/account/app-links/:linkId/revoke", .member) { _, context in
            let person = try Access.person()
            _ = try await accounts.appLinks.revoke(context.parameters.require("linkId"), of: person.username)
            return Response.seeOther(SitePath(known: "/account?done=revoked#app-links"))
        }
    }

    struct NewLink {
        var label: String
        var url: String
    }

    func page(
        _ request: Request, status: HTTPResponse.Status = .ok, notice: ((Localizer) -> String)? = nil,
        newLink: NewLink? = nil, form: [String: String] = [:], errors: [FieldError] = []
    ) async throws -> Response {
        let person = try Access.person()
        let links = try await accounts.appLinks.list(for: person.username)
        let zone = TimeZone(identifier: "UTC")!
        return try web.page(request, template: "account", status: status, title: { $0("account.title") }) { t in
            AccountPage(
                signedInAs: t("account.signedInAs", ["name": person.displayName, "username": person.username]),
                feed: person.role == .feed, hasLinks: !links.isEmpty,
                links: links.map { link in
                    .init(
                        id: link.id, label: link.label,
                        createdText: t(
                            "account.createdOn",
                            [
                                "date": LibraryDate.day(
                                    link.createdAt, language: t.language, zone: zone, now: link.createdAt)
                            ]),
                        revokeConfirm: t("account.revokeConfirm", ["label": link.label]))
                },
                form: form,
                errors: Dictionary(errors.map { ($0.field, $0.message) }, uniquingKeysWith: { first, _ in first }),
                notice: notice?(t), newLink: newLink)
        }
    }

    /// The new link's URL goes on this answer only (never into a redirect's URL, a log or the database).
    func create(_ request: Request) async throws -> Response {
        var request = request
        let fields = try await request.formFields()
        let person = try Access.person()
        do {
            let label = try AccountValidation.displayName(fields["label"], field: "label")
            let (link, key) = try await accounts.appLinks.create(for: person.username, label: label)
            let base = request.baseURL(trustProxy: accounts.platform.configuration.trustProxy)
            var response = try await page(
                request, status: .created, newLink: NewLink(label: link.label, url: base + AppLinkPath.prefix + key))
            response.headers[.cacheControl] = "no-store"
            return response
        } catch let failure as ValidationFailure {
            return try await page(request, status: .unprocessableContent, form: fields, errors: failure.errors)
        }
    }
}

/// `/account`: who you are, and your personal app links.
struct AccountPage {
    let signedInAs: String
    let feed: Bool
    let hasLinks: Bool
    let links: [Link]
    let form: [String: String]
    let errors: [String: String]
    let notice: String?
    /// A link just made, shown once.
    let newLink: AccountRoutes.NewLink?

    struct Link {
        let id: String
        let label: String
        let createdText: String
        let revokeConfirm: String
    }
}
