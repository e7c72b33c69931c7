import Foundation
import QuadCore
import QuadPlatform

/// Sign-in with the organisation's accounts, when the operator set it up: the provider, the flows under way, and
/// where the provider sends people back (`QUAD_PUBLIC_URL` + `/signin/sso/callback`).
struct Organisation: Sendable {
    let settings: OrganisationSignIn
    let provider: OpenIDProvider
    let flows: SignInFlows
    let publicURL: String
    private let clock: any QuadClock

    /// How a session made through the provider is marked (`sessions.via`).
    static let via = "organisation"
    static let callbackPath = "/signin/sso/callback"

    init?(configuration: ServerConfiguration, database: Database, clock: any QuadClock) {
        guard let settings = configuration.organisation, let publicURL = configuration.publicURL else { return nil }
        self.settings = settings
        self.provider = OpenIDProvider(settings: settings, clock: clock)
        self.flows = SignInFlows(database: database, clock: clock)
        self.publicURL = publicURL
        self.clock = clock
    }

    var redirectURI: String { publicURL + Self.callbackPath }

    /// When a session made now through the provider ends.
    var sessionEnd: Date { clock.now.addingTimeInterval(TimeInterval(settings.sessionHours * 3600)) }

    /// The organisation's name as the operator gave it (`QUAD_OIDC_LABEL`), else "your organisation".
    func name(_ t: Localizer) -> String { settings.label ?? t("signin.organisationDefault") }

    /// The button's words, in the page's language: "Sign in with …".
    func label(_ t: Localizer) -> String { t("signin.organisation", ["organisation": name(t)]) }

    /// The provider's sign-in page for a started flow: its authorization endpoint, from discovery, with the
    /// standard parameters (authorization code, PKCE S256, state, nonce).
    func authorizationAddress(
        _ started: SignInFlows.Started, language: Language
    ) async throws(OpenIDProvider.Failure)
        -> ProviderAddress
    {
        let endpoint = try await provider.discovery().authorizationEndpoint
        let query = [
            ("response_type", "code"), ("client_id", settings.clientID), ("redirect_uri", redirectURI),
            ("scope", "openid profile email"), ("state", started.state), ("nonce", started.nonce),
            ("code_challenge", started.challenge), ("code_challenge_method", "S256"), ("ui_locales", language.rawValue),
        ]
        return ProviderAddress(endpoint: endpoint, query: query)
    }

    /// The provider's sign-out page, when it has one (RP-initiated logout), coming back to Quad's home page. Only
    /// on the issuer's origin: the one pages' forms may lead to (`SecurityHeaders`).
    func signOutAddress() async -> ProviderAddress? {
        guard let endpoint = try? await provider.discovery().endSessionEndpoint,
            endpoint.hasPrefix(settings.origin + "/")
        else { return nil }
        return ProviderAddress(
            endpoint: endpoint,
            query: [("client_id", settings.clientID), ("post_logout_redirect_uri", publicURL + "/")])
    }
}

/// An address at the organisation's provider: the one exception to "every redirect is a path on this site", and
/// only ever made from the endpoints its discovery document names (sign-in and sign-out).
struct ProviderAddress: Sendable {
    let value: String

    fileprivate init(endpoint: String, query: [(String, String)]) {
        let joined = query.map { OpenIDProvider.formEncoded($0.0) + "=" + OpenIDProvider.formEncoded($0.1) }
            .joined(separator: "&")
        value = endpoint + (endpoint.contains("?") ? "&" : "?") + joined
    }
}
