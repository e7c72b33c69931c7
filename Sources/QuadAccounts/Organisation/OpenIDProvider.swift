import Foundation
import JWTKit
import QuadCore
import QuadPlatform

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The organisation's OpenID provider as Quad speaks to it: its discovery document (kept an hour), its signing keys
/// (read again when a token's key is not among them: the provider rotated its keys), and its token endpoint.
/// jwt-kit checks the signatures; the claims are checked here (`IDClaims.check`), against Quad's clock.
actor OpenIDProvider {
    /// What the provider's discovery document says that Quad uses.
    struct Discovery: Decodable, Sendable {
        let issuer: String
        let authorizationEndpoint: String
        let tokenEndpoint: String
        let jwksURI: String
        let endSessionEndpoint: String?
        let tokenEndpointAuthMethodsSupported: [String]?

        enum CodingKeys: String, CodingKey {
            case issuer
            case authorizationEndpoint = "authorization_endpoint"
            case tokenEndpoint = "token_endpoint"
            case jwksURI = "jwks_uri"
            case endSessionEndpoint = "end_session_endpoint"
            case tokenEndpointAuthMethodsSupported = "token_endpoint_auth_methods_supported"
        }
    }

    /// Why a sign-in through the provider could not finish: each is a page of its own, never a 500.
    enum Failure: Error, Equatable {
        /// Quad and the provider do not agree on how Quad is set up (the issuer, the client, its secret): only the
        /// operator can mend it.
        case misconfigured(String)
        /// The provider did not answer, or not with what the standard says (down, misconfigured).
        case unreachable(String)
        /// The provider refused (a code used twice or too late, a client it does not know).
        case refused(String)
        /// Its answer could not be trusted (a signature, an issuer, an audience, a time or a nonce).
        case untrusted(String)
    }

    /// Signatures Quad accepts: the provider's public keys only. `none` and the shared-secret (HS) kinds never.
    static let acceptedAlgorithms: Set<String> = [
        "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA",
    ]
    /// How long the discovery document is kept before it is read again.
    static let discoveryLifetime: TimeInterval = 3600
    /// The most a provider's answer may hold (its documents are a few kilobytes).
    static let answerLimit = 256 * 1024

    let settings: OrganisationSignIn
    private let clock: any QuadClock
    private let session: URLSession
    private var discovered: (document: Discovery, at: Date)?
    private var keys: JWTKeyCollection?

    init(settings: OrganisationSignIn, clock: any QuadClock) {
        self.settings = settings
        self.clock = clock
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 10
        configuration.timeoutIntervalForResource = 20
        configuration.httpCookieStorage = nil
        configuration.urlCache = nil
        self.session = URLSession(configuration: configuration)
    }

    /// The discovery document, read again after an hour; its issuer must be the one configured, exactly.
    func discovery() async throws(Failure) -> Discovery {
        if let discovered, clock.now.timeIntervalSince(discovered.at) < Self.discoveryLifetime {
            return discovered.document
        }
        let base = settings.issuer.hasSuffix("/") ? String(settings.issuer.dropLast()) : settings.issuer
        let data = try await fetch(URLRequest(url: try url(base + "/.well-known/openid-configuration")))
        guard let document = try? JSONDecoder().decode(Discovery.self, from: data) else {
            throw .unreachable("its discovery document is not one")
        }
        guard document.issuer == settings.issuer else {
            throw .misconfigured(
                "its discovery document names the issuer \(document.issuer), and QUAD_OIDC_ISSUER is \(settings.issuer)"
            )
        }
        discovered = (document, clock.now)
        return document
    }

    /// Trades the authorization code (and the PKCE verifier it was asked with) for the ID token.
    func idToken(code: String, verifier: String, redirectURI: String) async throws(Failure) -> String {
        let endpoints = try await discovery()
        var request = URLRequest(url: try url(endpoints.tokenEndpoint))
        request.httpMethod = "POST"
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        var form = [
            ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirectURI),
            ("code_verifier", verifier),
        ]
        // client_secret_basic unless the provider says it takes only client_secret_post (RFC 6749 §2.3.1: each
        // part form-encoded before the Basic pair).
        let methods = endpoints.tokenEndpointAuthMethodsSupported ?? ["client_secret_basic"]
        if methods.contains("client_secret_basic") || !methods.contains("client_secret_post") {
            let pair = Self.formEncoded(settings.clientID) + ":" + Self.formEncoded(settings.clientSecret)
            request.setValue("Basic " + Data(pair.utf8).base64EncodedString(), forHTTPHeaderField: "Authorization")
        } else {
            form += [("client_id", settings.clientID), ("client_secret", settings.clientSecret)]
        }
        request.httpBody = Data(
            form.map { Self.formEncoded($0.0) + "=" + Self.formEncoded($0.1) }.joined(separator: "&").utf8)
        let (data, status) = try await send(request)
        struct Answer: Decodable {
            let idToken: String?
            let error: String?
            enum CodingKeys: String, CodingKey {
                case idToken = "id_token"
                case error
            }
        }
        let answer = try? JSONDecoder().decode(Answer.self, from: data)
        guard (200..<300).contains(status) else {
            if (400..<500).contains(status) {
                let error = answer?.error.map(Self.errorCode) ?? "status \(status)"
                // RFC 6749 §5.2: the client is not known, or its secret is wrong.
                if ["invalid_client", "unauthorized_client"].contains(error) {
                    throw .misconfigured(
                        "its token endpoint says \(error): check QUAD_OIDC_CLIENT_ID and QUAD_OIDC_CLIENT_SECRET")
                }
                throw .refused(error)
            }
            throw .unreachable("its token endpoint answered \(status)")
        }
        guard let token = answer?.idToken else { throw .unreachable("its token endpoint gave no ID token") }
        return token
    }

    /// The ID token's claims, once its signature (by one of the provider's keys) and its claims are checked.
    func verify(_ token: String, nonce: String) async throws(Failure) -> IDClaims {
        let alg: String?
        do {
            alg = try DefaultJWTParser().parse(Array(token.utf8), as: IDClaims.self).header.alg
        } catch {
            throw .untrusted("the ID token cannot be read")
        }
        guard let alg, Self.acceptedAlgorithms.contains(alg) else {
            throw .untrusted("the ID token is signed with \(alg ?? "nothing"), which Quad does not accept")
        }
        var claims: IDClaims?
        // With the keys known, then once more with the keys read again: a token signed with a key Quad has not
        // seen yet means the provider rotated its keys.
        for fresh in [false, true] where claims == nil {
            let keys = try await signingKeys(fresh: fresh)
            claims = try? await keys.verify(token, as: IDClaims.self, iteratingKeys: true)
        }
        guard let claims else { throw .untrusted("the ID token's signature is not the provider's") }
        try claims.check(issuer: settings.issuer, clientID: settings.clientID, nonce: nonce, now: clock.now)
        return claims
    }

    private func signingKeys(fresh: Bool) async throws(Failure) -> JWTKeyCollection {
        if !fresh, let keys { return keys }
        let data = try await fetch(URLRequest(url: try url(try await discovery().jwksURI)))
        let collection = JWTKeyCollection()
        do {
            let set = try JSONDecoder().decode(JWKS.self, from: data)
            for (index, var key) in set.keys.enumerated() {
                // A key the provider gave no `kid` (some do, with one key) is known by its place: jwt-kit keeps keys
                // by `kid`, and tries each one for a token that names none.
                if key.keyIdentifier == nil { key.keyIdentifier = JWKIdentifier(string: "quad-unnamed-\(index)") }
                // A key that cannot sign tokens Quad accepts (an encryption key, an unknown kind) is left out.
                try? await collection.add(jwk: key)
            }
        } catch {
            throw .unreachable("its keys (\(settings.issuer)) are not a JSON Web Key Set")
        }
        keys = collection
        return collection
    }

    private func url(_ text: String) throws(Failure) -> URL {
        guard let url = URL(string: text), ["https", "http"].contains(url.scheme ?? "") else {
            throw .unreachable("it named an address that is not one (\(text.prefix(100)))")
        }
        return url
    }

    /// A GET that must answer 200.
    private func fetch(_ request: URLRequest) async throws(Failure) -> Data {
        let (data, status) = try await send(request)
        guard status == 200 else { throw .unreachable("\(request.url?.absoluteString ?? "it") answered \(status)") }
        return data
    }

    private func send(_ request: URLRequest) async throws(Failure) -> (Data, Int) {
        do {
            let (data, response) = try await session.data(for: request)
            guard data.count <= Self.answerLimit else { throw Failure.unreachable("its answer is too large") }
            return (data, (response as? HTTPURLResponse)?.statusCode ?? 0)
        } catch let failure as Failure {
            throw failure
        } catch {
            throw .unreachable("it did not answer (\(error.localizedDescription))")
        }
    }

    /// An OAuth error code as the provider sent it, kept to the characters the standard allows and 60 of them.
    static func errorCode(_ text: String) -> String {
        var kept = String.UnicodeScalarView()
        kept.append(
            contentsOf: text.unicodeScalars.filter { (0x21...0x7E).contains($0.value) && $0 != "\\" }.prefix(60))
        return String(kept)
    }

    static func formEncoded(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics.intersection(
            CharacterSet(charactersIn: Unicode.Scalar(0)...Unicode.Scalar(127)))
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }
}
