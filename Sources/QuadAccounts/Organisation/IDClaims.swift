import Foundation
import JWTKit

/// An ID token's claims: the standard ones Quad checks, and every other one kept by name (the groups and the
/// student id are in claims the operator names).
struct IDClaims: JWTPayload, Equatable {
    /// A claim's value, as far as Quad reads claims: text, a list of texts, a yes or no, a number, or other.
    enum Value: Codable, Equatable, Sendable {
        case text(String)
        case texts([String])
        case flag(Bool)
        case number(Double)
        case other

        init(from decoder: any Decoder) throws {
            let value = try decoder.singleValueContainer()
            if let text = try? value.decode(String.self) {
                self = .text(text)
            } else if let flag = try? value.decode(Bool.self) {
                self = .flag(flag)
            } else if let number = try? value.decode(Double.self) {
                self = .number(number)
            } else if let texts = try? value.decode([String].self) {
                self = .texts(texts)
            } else {
                self = .other
            }
        }

        func encode(to encoder: any Encoder) throws {
            var value = encoder.singleValueContainer()
            switch self {
            case .text(let text): try value.encode(text)
            case .texts(let texts): try value.encode(texts)
            case .flag(let flag): try value.encode(flag)
            case .number(let number): try value.encode(number)
            case .other: try value.encodeNil()
            }
        }
    }

    let claims: [String: Value]

    init(claims: [String: Value]) { self.claims = claims }

    init(from decoder: any Decoder) throws {
        claims = try decoder.singleValueContainer().decode([String: Value].self)
    }

    func encode(to encoder: any Encoder) throws {
        var value = encoder.singleValueContainer()
        try value.encode(claims)
    }

    /// jwt-kit asks this after the signature; the claims are checked against Quad's clock instead (`check`).
    func verify(using algorithm: some JWTAlgorithm) async throws {}

    func text(_ name: String) -> String? {
        if case .text(let text) = claims[name] { return text }
        return nil
    }

    /// A list claim (`groups`), also when the provider sends one group as text.
    func texts(_ name: String) -> [String] {
        switch claims[name] {
        case .texts(let texts): texts
        case .text(let text): [text]
        default: []
        }
    }

    func number(_ name: String) -> Double? {
        if case .number(let number) = claims[name] { return number }
        return nil
    }

    var subject: String? { text("sub").flatMap { (1...255).contains($0.count) ? $0 : nil } }

    /// The address, unless the provider says it has not checked it.
    var email: String? {
        if case .flag(false) = claims["email_verified"] { return nil }
        return text("email")
    }

    /// Clocks that differ this much still agree (the provider's and Quad's).
    static let skew: TimeInterval = 120

    /// OpenID Connect Core §3.1.3.7: the issuer is the provider, the audience is Quad (and when there are several,
    /// the token was given to Quad), it has not expired, it was not issued in the future, and its nonce is the one
    /// this sign-in sent.
    func check(issuer: String, clientID: String, nonce: String, now: Date) throws(OpenIDProvider.Failure) {
        guard text("iss") == issuer else { throw .untrusted("the ID token was issued by someone else") }
        let audience = texts("aud")
        guard audience.contains(clientID) else { throw .untrusted("the ID token is for another client") }
        if audience.count > 1, text("azp") != clientID {
            throw .untrusted("the ID token was given to another client")
        }
        guard subject != nil else { throw .untrusted("the ID token names no one") }
        guard let expiry = number("exp"), now.timeIntervalSince1970 < expiry + Self.skew else {
            throw .untrusted("the ID token has expired")
        }
        guard let issued = number("iat"), issued <= now.timeIntervalSince1970 + Self.skew else {
            throw .untrusted("the ID token was issued in the future")
        }
        guard text("nonce") == nonce else { throw .untrusted("the ID token was made for another sign-in") }
    }
}
