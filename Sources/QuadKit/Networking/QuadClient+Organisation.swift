import Crypto
import Foundation
import QuadAPI
import QuadCore

/// Sign-in with the organisation's accounts for an app or the command line (RFC 8252): the app opens `address` in
/// the person's browser and listens on `http://127.0.0.1:PORT/quad-sign-in`; Quad sends the browser there with a
/// one-time code once the provider has signed the person in, and the app trades the code for a token with its
/// verifier. The provider's client secret stays with Quad.
public struct OrganisationSignIn: Sendable {
    /// Where the browser goes first: Quad's `/signin/sso`, which sends it on to the provider.
    public let address: URL
    /// What the loopback answer must carry back: anything else is not this sign-in's.
    public let state: String
    /// PKCE's secret half (its S256 challenge went in `address`): only this app can trade the code.
    public let verifier: String

    /// A sign-in whose browser comes back to `port` on this machine.
    public init(server: URL, port: Int) {
        state = Self.random()
        verifier = Self.random()
        let challenge = Data(SHA256.hash(data: Data(verifier.utf8))).base64URLEncoded
        var components = URLComponents(
            url: server.appendingPathComponent("signin/sso"), resolvingAgainstBaseURL: false)!
        components.queryItems = [
            URLQueryItem(name: "app_port", value: String(port)), URLQueryItem(name: "app_state", value: state),
            URLQueryItem(name: "app_challenge", value: challenge),
        ]
        address = components.url!
    }

    /// The code of the loopback answer `target` (`/quad-sign-in?code=…&state=…`), when it is this sign-in's.
    public func code(from target: String) -> String? {
        guard let items = URLComponents(string: target)?.queryItems,
            URLComponents(string: target)?.path == "/quad-sign-in",
            items.first(where: { $0.name == "state" })?.value == state
        else { return nil }
        return items.first { $0.name == "code" }?.value
    }

    static func random() -> String {
        var generator = SystemRandomNumberGenerator()
        return Data((0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }).base64URLEncoded
    }
}

extension QuadClient {
    /// Trades the one-time code of a sign-in with the organisation for a session; the token is kept for later calls
    /// and returned so it can be saved.
    public func signIn(_ organisation: OrganisationSignIn, code: String) async throws -> (token: String, person: Person)
    {
        let output = try await call {
            try await api.redeemSignInCode(body: .json(.init(code: code, verifier: organisation.verifier)))
        }
        guard case .created(let created) = output, case .json(let session) = created.body else {
            throw Self.failure(output)
        }
        tokens.token = session.token
        return (session.token, Person(session.person))
    }
}
