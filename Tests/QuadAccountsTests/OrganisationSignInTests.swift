import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import QuadCore
import QuadTestSupport
import Testing

@testable import QuadAccounts
@testable import QuadPlatform

/// Sign-in with the organisation's accounts against a real OpenID provider (`oidc-provider-mock`, started by each
/// test): the flow as a browser drives it (Quad's redirect, the provider's page, Quad's callback), what it makes of
/// the claims, and everything that must stop it with a clear page and no session.
///
/// Quad's clock starts at the real time here: the provider is real and dates its tokens by the world's clock.
@Suite(
    .enabled(if: OpenIDProviderProcess.available, "python3 with oidc-provider-mock and joserfc (e2e/requirements.txt)"))
struct OrganisationSignInTests {
    static let secret = "a client secret of this test"

    /// Quad with sign-in through `provider`; `adjust` changes the settings further.
    static func run(
        _ provider: OpenIDProviderProcess, engine: Database.Engine = .sqlite,
        adjust: @escaping @Sendable (inout OrganisationSignIn) -> Void = { _ in }, passwords: Bool = true,
        _ body: @escaping @Sendable (TestApp, any TestClientProtocol) async throws -> Void
    ) async throws {
        try await TestApp.run(
            engine, at: SystemClock().now,
            configure: { configuration in
                var settings = OrganisationSignIn(issuer: provider.issuer, clientID: "quad", clientSecret: Self.secret)
                settings.label = "Campus ID"
                settings.adminGroup = "quad-admins"
                adjust(&settings)
                configuration.organisation = settings
                configuration.publicURL = "http://quad.test"
                configuration.localPasswords = passwords
            }, body)
    }

    /// What the browser ends with after going through the provider as `subject`.
    struct Finish {
        let response: TestResponse
        let callback: URL
        let flowCookie: String
        var sessionToken: String? { response.cookie(Credential.sessionCookieName) }
    }

    /// `/signin/sso` (`query` added), the provider's page as `subject`, then Quad's callback with the flow's cookie.
    static func signIn(
        _ client: any TestClientProtocol, _ provider: OpenIDProviderProcess, as subject: String, query: String = ""
    ) async throws -> Finish {
        let start = try await client.execute(uri: "/signin/sso?next=/rooms" + query, method: .get)
        #expect(start.status == .seeOther)
        let address = try #require(start.headers[.location])
        #expect(address.hasPrefix(provider.issuer + "/"), "the browser goes to the provider, and only there")
        let flow = try #require(start.cookie(OrganisationRoutes.cookieName))
        let back = try await provider.signIn(at: address, as: subject)
        #expect(back.absoluteString.hasPrefix("http://quad.test/signin/sso/callback?"))
        let response = try await client.execute(
            uri: back.path + "?" + (back.query ?? ""), method: .get,
            headers: [.cookie: "\(OrganisationRoutes.cookieName)=\(flow)", .acceptLanguage: "en"])
        return Finish(response: response, callback: back, flowCookie: flow)
    }

    static func me(_ client: any TestClientProtocol, token: String) async throws -> [String: Any]? {
        let response = try await client.execute(
            uri: "/api/me", method: .get, headers: [.cookie: "\(Credential.sessionCookieName)=\(token)"])
        guard response.status == .ok else { return nil }
        return try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any]
    }

    @Test(arguments: TestDatabase.engines)
    func someoneNewSignsInWithTheirOrganisationAccountAndTheProviderKeepsWhatItOwns(
        engine: Database.Engine
    )
        async throws
    {
        let provider = try OpenIDProviderProcess()
        defer { provider.stop() }
        try await provider.setPerson(
            "maya-0042",
            [
                "name": "Maya Patel", "preferred_username": "maya", "email": "maya@campus.example", "locale": "fr-FR",
                "groups": ["staff", "quad-admins"],
            ])
        try await Self.run(provider, engine: engine) { app, client in
            let first = try await Self.signIn(client, provider, as: "maya-0042")
            #expect(first.response.status == .seeOther)
            #expect(first.response.headers[.location] == "/rooms", "back where they were going")
            let token = try #require(first.sessionToken)
            #expect(
                first.response.setCookies.contains { $0.hasPrefix("quad_session=") && $0.contains("Max-Age=43200") })
            let me = try #require(try await Self.me(client, token: token))
            #expect(me["username"] as? String == "maya")
            #expect(me["displayName"] as? String == "Maya Patel")
            #expect(me["email"] as? String == "maya@campus.example")
            #expect(me["mailLanguage"] as? String == "fr")
            #expect(me["role"] as? String == "admin", "the groups claim holds quad-admins")
            #expect(try await app.features.accounts.organisationUsernames() == ["maya"])

            // The standard flow, as the provider saw it asked.
            let asked = try #require(try await provider.authorizations().last)
            #expect(asked["response_type"] == "code")
            #expect(asked["code_challenge_method"] == "S256")
            #expect(asked["code_challenge"]?.count == 43)
            #expect(asked["nonce"]?.isEmpty == false)
            #expect(asked["redirect_uri"] == "http://quad.test/signin/sso/callback")

            // Removed from the group and renamed at the provider: the next sign-in says so. Nothing else changes.
            try await provider.setPerson(
                "maya-0042",
                [
                    "name": "Maya Patel-Okafor", "preferred_username": "maya", "email": "maya@campus.example",
                    "groups": ["staff"],
                ])
            let second = try await Self.signIn(client, provider, as: "maya-0042")
            let secondToken = try #require(second.sessionToken)
            let again = try #require(try await Self.me(client, token: secondToken))
            #expect(again["username"] as? String == "maya", "the same person, not a new one")
            #expect(again["displayName"] as? String == "Maya Patel-Okafor")
            #expect(again["role"] as? String == "member")
            #expect(try await app.features.accounts.people.all().filter { $0.username.hasPrefix("maya") }.count == 1)
            // The first session now signs in the person as changed.
            #expect(try await Self.me(client, token: token)?["role"] as? String == "member")
            // And no password signs them in.
            let password = try await client.execute(
                uri: "/api/sessions", method: .post, headers: [.contentType: "application/json"],
                body: ByteBuffer(string: #"{"username":"maya","password":"!"}"#))
            #expect(password.status == .unauthorized)
            // Nor can one be set for them: it would outlive their removal at the provider.
            let given = try await client.execute(
                uri: "/api/people/maya", method: .patch,
                headers: [.authorization: "Bearer \(TestApp.adminToken)", .contentType: "application/json"],
                body: ByteBuffer(string: #"{"password":"a password for maya"}"#))
            #expect(given.status == .conflict)
            let account = try await client.execute(
                uri: "/account", method: .get, headers: [.cookie: "\(Credential.sessionCookieName)=\(secondToken)"])
            #expect(account.status == .ok)
            #expect(!account.text.contains(#"action="/account/password""#))
        }
    }

    /// Each of these stops the sign-in with a page that says what happened, and makes no session.
    @Test func whatCannotBeTrustedIsAClearPageAndNoSession() async throws {
        let provider = try OpenIDProviderProcess()
        defer { provider.stop() }
        try await provider.setPerson("sam-7", ["name": "Sam Rivera", "preferred_username": "sam"])
        try await Self.run(provider) { app, client in
            for mode in ["other-key", "wrong-audience", "wrong-issuer", "expired", "wrong-nonce", "none"] {
                try await provider.tamper(mode)
                let finish = try await Self.signIn(client, provider, as: "sam-7")
                #expect(finish.response.status == .badRequest, "\(mode)")
                #expect(finish.sessionToken == nil, "\(mode): no session")
                #expect(finish.response.text.contains("could not be trusted"), "\(mode)")
            }
            #expect(try await app.person("sam") == nil, "no one was made from an answer Quad refused")

            // The callback again (a replay): the flow was used.
            let good = try await Self.signIn(client, provider, as: "sam-7")
            #expect(good.sessionToken != nil)
            let replay = try await client.execute(
                uri: good.callback.path + "?" + (good.callback.query ?? ""), method: .get,
                headers: [.cookie: "\(OrganisationRoutes.cookieName)=\(good.flowCookie)"])
            #expect(replay.status == .badRequest)
            #expect(replay.cookie(Credential.sessionCookieName) == nil)
            #expect(replay.text.contains("expired or was already finished"))

            // A used code with a new flow's state: the provider refuses it, and Quad says so.
            let start = try await client.execute(uri: "/signin/sso", method: .get)
            let flow = try #require(start.cookie(OrganisationRoutes.cookieName))
            let state = try #require(
                URLComponents(string: start.headers[.location]!)?.queryItems?.first { $0.name == "state" }?.value)
            let usedCode = try #require(
                URLComponents(url: good.callback, resolvingAgainstBaseURL: false)?.queryItems?.first {
                    $0.name == "code"
                }?.value)
            let reused = try await client.execute(
                uri: "/signin/sso/callback?code=\(usedCode)&state=\(state)", method: .get,
                headers: [.cookie: "\(OrganisationRoutes.cookieName)=\(flow)"])
            #expect(reused.status == .badRequest)
            #expect(reused.cookie(Credential.sessionCookieName) == nil)
            #expect(reused.text.contains("refused to finish"))

            // A state that is not the flow's, or no flow cookie (another browser).
            let other = try await client.execute(uri: "/signin/sso", method: .get)
            let otherFlow = try #require(other.cookie(OrganisationRoutes.cookieName))
            for headers: HTTPFields in [[.cookie: "\(OrganisationRoutes.cookieName)=\(otherFlow)"], [:]] {
                let forged = try await client.execute(
                    uri: "/signin/sso/callback?code=abc&state=not-the-state", method: .get, headers: headers)
                #expect(forged.status == .badRequest)
                #expect(forged.text.contains("expired or was already finished"))
            }

            // The person says no at the provider.
            let denied = try await client.execute(
                uri: "/signin/sso/callback?error=access_denied&state=\(state)", method: .get,
                headers: [.cookie: "\(OrganisationRoutes.cookieName)=\(flow)"])
            #expect(denied.status == .badRequest)
            #expect(denied.text.contains("was turned down"))
        }
    }

    @Test func theProviderRotatingItsKeysIsFollowed() async throws {
        let provider = try OpenIDProviderProcess()
        defer { provider.stop() }
        try await provider.setPerson("lin-1", ["name": "Lin Chen", "preferred_username": "lin"])
        try await Self.run(provider) { _, client in
            #expect(try await Self.signIn(client, provider, as: "lin-1").sessionToken != nil)
            try await provider.rotateKeys()
            #expect(try await Self.signIn(client, provider, as: "lin-1").sessionToken != nil, "the new key is read")
        }
    }

    @Test func keysWithoutANameAreStillTheProvidersKeys() async throws {
        let provider = try OpenIDProviderProcess()
        defer { provider.stop() }
        try await provider.setPerson("lin-1", ["name": "Lin Chen", "preferred_username": "lin"])
        try await provider.nameNoKeys()
        try await Self.run(provider) { _, client in
            #expect(try await Self.signIn(client, provider, as: "lin-1").sessionToken != nil)
            // Still only the provider's: a token signed by another key is refused.
            try await provider.tamper("other-key")
            let forged = try await Self.signIn(client, provider, as: "lin-1")
            #expect(forged.response.status == .badRequest)
            #expect(forged.sessionToken == nil)
        }
    }

    /// An issuer that is not the one the provider names (here: a trailing slash) is the operator's to mend: the page
    /// says so, rather than "try again".
    @Test func aProviderSetUpWrongIsSaidToBeSo() async throws {
        let provider = try OpenIDProviderProcess()
        defer { provider.stop() }
        try await Self.run(provider, adjust: { $0.issuer += "/" }) { _, client in
            let start = try await client.execute(uri: "/signin/sso", method: .get, headers: [.acceptLanguage: "en"])
            #expect(start.status == .serviceUnavailable)
            #expect(start.text.contains("is not set up right on this Quad"))
            #expect(start.cookie(OrganisationRoutes.cookieName) == nil)
        }
    }

    @Test func aProviderThatIsDownIsAClearPage() async throws {
        let provider = try OpenIDProviderProcess()
        provider.stop()
        try await Self.run(provider) { _, client in
            let start = try await client.execute(uri: "/signin/sso", method: .get, headers: [.acceptLanguage: "fr"])
            #expect(start.status == .serviceUnavailable)
            #expect(start.cookie(OrganisationRoutes.cookieName) == nil)
            #expect(start.text.contains("Campus ID ne répond pas"))
        }
    }

    @Test func aSessionThroughTheProviderEndsAfterItsHoursAndAnAdminCanEndItAtOnce() async throws {
        let provider = try OpenIDProviderProcess()
        defer { provider.stop() }
        try await provider.setPerson("noor-3", ["name": "Noor Haddad", "preferred_username": "noor"])
        try await Self.run(provider, adjust: { $0.sessionHours = 2 }) { app, client in
            // (The provider dates its tokens by the world's clock: every sign-in comes before Quad's clock moves.)
            let first = try #require(try await Self.signIn(client, provider, as: "noor-3").sessionToken)
            let ended = try await client.execute(
                uri: "/api/people/noor/sessions", method: .delete,
                headers: [.authorization: "Bearer \(TestApp.adminToken)"])
            #expect(ended.status == .noContent)
            #expect(try await Self.me(client, token: first) == nil, "an admin ends their sessions at once")

            let token = try #require(try await Self.signIn(client, provider, as: "noor-3").sessionToken)
            app.clock.advance(by: .seconds(2 * 3600 - 60))
            #expect(try await Self.me(client, token: token) != nil)
            app.clock.advance(by: .seconds(120))
            #expect(try await Self.me(client, token: token) == nil, "past its hours: the provider is asked again")
        }
    }

    @Test(arguments: TestDatabase.engines)
    func someoneAlreadyHereIsLinkedOnlyWhenTheOperatorSaysSo(engine: Database.Engine) async throws {
        let provider = try OpenIDProviderProcess()
        defer { provider.stop() }
        try await provider.setPerson(
            "ada-1815", ["name": "Ada Lovelace", "preferred_username": "ada", "email": "ada@campus.example"])
        try await provider.setPerson("grace-1906", ["name": "Grace Hopper", "preferred_username": "grace"])
        for link in [false, true] {
            try await Self.run(provider, engine: engine, adjust: { $0.linkExisting = link }) { app, client in
                let accounts = app.features.accounts
                _ = try await accounts.add(
                    username: "ada", displayName: "Ada", password: "a password of ada's", role: "member",
                    studentId: nil)
                _ = try await accounts.change(
                    "ada", displayName: nil, role: nil, studentId: nil, password: nil, email: "ada@campus.example")
                _ = try await accounts.add(
                    username: "grace", displayName: "Grace", password: "a password of grace's", role: "member",
                    studentId: nil)

                let ada = try await Self.signIn(client, provider, as: "ada-1815")
                let grace = try await Self.signIn(client, provider, as: "grace-1906")
                let graceToken = try #require(grace.sessionToken)
                let graceIs = try await Self.me(client, token: graceToken)?["username"] as? String
                if link {
                    let adaToken = try #require(ada.sessionToken)
                    #expect(try await Self.me(client, token: adaToken)?["username"] as? String == "ada")
                    #expect(graceIs == "grace")
                } else {
                    #expect(ada.response.status == .conflict)
                    #expect(ada.sessionToken == nil)
                    #expect(ada.response.text.contains("already uses the email address"))
                    #expect(graceIs == "grace-2", "a username in use gets a new one")
                }
            }
        }
    }

    @Test(arguments: TestDatabase.engines)
    func anAppGetsAOneTimeCodeOnItsLoopbackAndTradesItForAToken(engine: Database.Engine) async throws {
        let provider = try OpenIDProviderProcess()
        defer { provider.stop() }
        try await provider.setPerson("kier-9", ["name": "Kier", "preferred_username": "kier"])
        try await Self.run(provider, engine: engine) { _, client in
            let verifier = SecureRandom.base64url(byteCount: 32)
            let challenge = SignInFlows.challenge(verifier)
            let finish = try await Self.signIn(
                client, provider, as: "kier-9",
                query: "&app_port=53682&app_state=an-app-state-0123456789&app_challenge=\(challenge)")
            #expect(finish.response.status == .seeOther)
            #expect(finish.sessionToken == nil, "the browser is not signed in: the app is")
            let location = try #require(finish.response.headers[.location])
            #expect(location.hasPrefix("http://127.0.0.1:53682/quad-sign-in?code="))
            #expect(location.hasSuffix("&state=an-app-state-0123456789"))
            let code = try #require(URLComponents(string: location)?.queryItems?.first { $0.name == "code" }?.value)

            func redeem(_ code: String, _ verifier: String) async throws -> TestResponse {
                try await client.execute(
                    uri: "/api/sessions/organisation", method: .post, headers: [.contentType: "application/json"],
                    body: ByteBuffer(string: #"{"code":"\#(code)","verifier":"\#(verifier)"}"#))
            }
            let traded = try await redeem(code, verifier)
            #expect(traded.status == .created)
            let session = try #require(
                try JSONSerialization.jsonObject(with: Data(buffer: traded.body)) as? [String: Any])
            let me = try await client.execute(
                uri: "/api/me", method: .get, headers: [.authorization: "Bearer \(session["token"] as? String ?? "")"])
            #expect(me.status == .ok)
            #expect(try await redeem(code, verifier).status == .unauthorized, "a code works once")

            // A wrong verifier spends the code.
            let next = try await Self.signIn(
                client, provider, as: "kier-9",
                query: "&app_port=53682&app_state=an-app-state-0123456789&app_challenge=\(challenge)")
            let nextCode = try #require(
                URLComponents(string: next.response.headers[.location] ?? "")?.queryItems?.first { $0.name == "code" }?
                    .value)
            #expect(try await redeem(nextCode, SecureRandom.base64url(byteCount: 32)).status == .unauthorized)
            #expect(try await redeem(nextCode, verifier).status == .unauthorized)

            // An app's loopback is a port on this machine, nothing else.
            let bad = try await client.execute(
                uri: "/signin/sso?app_port=80&app_state=an-app-state-0123456789&app_challenge=\(challenge)",
                method: .get)
            #expect(bad.status == .badRequest)
        }
    }

    @Test func withPasswordsOffOnlyTheOrganisationSignsPeopleIn() async throws {
        let provider = try OpenIDProviderProcess()
        defer { provider.stop() }
        try await Self.run(provider, passwords: false) { app, client in
            _ = try await app.signedIn("ada")
            let api = try await client.execute(
                uri: "/api/sessions", method: .post, headers: [.contentType: "application/json"],
                body: ByteBuffer(string: #"{"username":"ada","password":"password-ada"}"#))
            #expect(api.status == .forbidden)
            let page = try await client.execute(uri: "/signin", method: .get, headers: [.acceptLanguage: "en"])
            #expect(page.text.contains("Sign in with Campus ID"))
            #expect(!page.text.contains(#"name="password""#))
            for path in ["/signin/forgot", "/signup"] {
                #expect(try await client.execute(uri: path, method: .get).status == .notFound, "\(path)")
            }
        }
    }

    @Test func signingOutOfASessionMadeThroughTheProviderSignsOutThereToo() async throws {
        let provider = try OpenIDProviderProcess()
        defer { provider.stop() }
        try await provider.setPerson("ada-1815", ["name": "Ada Lovelace", "preferred_username": "ada"])
        try await Self.run(provider) { _, client in
            let token = try #require(try await Self.signIn(client, provider, as: "ada-1815").sessionToken)
            let out = try await client.execute(
                uri: "/signout", method: .post,
                headers: [
                    .cookie: "quad_session=\(token); quad_csrf=csrf-of-this-test",
                    .contentType: "application/x-www-form-urlencoded",
                    .origin: "http://localhost",
                ],
                body: ByteBuffer(string: "csrf=csrf-of-this-test"))
            #expect(out.status == .seeOther)
            let location = try #require(out.headers[.location])
            #expect(
                location.hasPrefix(provider.issuer + "/oauth2/end_session?client_id=quad&post_logout_redirect_uri="))
            #expect(try await Self.me(client, token: token) == nil)
            // A page's forms may lead to the provider (sign-out), and nowhere else.
            let page = try await client.execute(uri: "/signin", method: .get)
            #expect(page.headers[.contentSecurityPolicy]?.contains("form-action 'self' \(provider.issuer);") == true)
        }
    }
}

extension TestResponse {
    var text: String { String(buffer: body) }

    var setCookies: [String] { headers[values: .setCookie] }

    /// A cookie this answer sets (not one it clears).
    func cookie(_ name: String) -> String? {
        for line in setCookies where line.hasPrefix(name + "=") {
            let value = line.dropFirst(name.count + 1).prefix { $0 != ";" }
            if !value.isEmpty { return String(value) }
        }
        return nil
    }
}
