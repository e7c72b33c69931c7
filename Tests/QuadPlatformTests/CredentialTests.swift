import QuadCore
import Testing

@testable import QuadPlatform

/// The one reading of a request's credentials, for the router and the fast path alike.
@Suite struct CredentialTests {
    @Test func theAuthorizationHeaderWinsOverTheCookie() {
        let cookies = ["quad_csrf=x; quad_session=cookie-token"]
        #expect(Credential.read(authorization: "Bearer  abc ", cookies: cookies) == .bearer("abc"))
        #expect(Credential.read(authorization: "bearer abc", cookies: []) == .bearer("abc"))
        #expect(Credential.read(authorization: "Basic YWxhZGRpbjpvcGVu", cookies: cookies) == .otherScheme)
        #expect(Credential.read(authorization: "Bearer", cookies: cookies) == .otherScheme)
        #expect(Credential.read(authorization: nil, cookies: cookies) == .sessionCookie("cookie-token"))
    }

    /// The scheme in any case, then the token without the spaces and tabs around it; anything else is another scheme.
    @Test func aBearerTokenIsReadAsAnyClientWritesIt() {
        #expect(Credential.read(authorization: "BEARER \tabc\t ", cookies: []) == .bearer("abc"))
        #expect(Credential.read(authorization: "BeArEr a b", cookies: []) == .bearer("a b"))
        #expect(Credential.read(authorization: "Bearer ", cookies: []) == .bearer(""))
        #expect(Credential.read(authorization: "Bearer\tabc", cookies: []) == .otherScheme)
        #expect(Credential.read(authorization: "Bearerxabc", cookies: []) == .otherScheme)
        #expect(Credential.read(authorization: "Béarer abc", cookies: []) == .otherScheme)
        #expect(Credential.read(authorization: "Bear", cookies: []) == .otherScheme)
    }

    @Test func digestsAreWrittenInLowercaseHex() {
        #expect([0x00, 0x0f, 0xa5, 0xff].hex == "000fa5ff")
        #expect([UInt8]().hex == "")
    }

    @Test func theSessionCookieIsFoundInAnyCookieHeader() {
        #expect(
            Credential.read(authorization: nil, cookies: ["quad_lang=fr", " quad_session=t=1"]) == .sessionCookie("t=1")
        )
        #expect(Credential.read(authorization: nil, cookies: ["xquad_session=t; quad_lang=fr"]) == .none)
        #expect(
            Credential.read(authorization: nil, cookies: ["quad_csrf=a;\tquad_session=é; quad_session=b"])
                == .sessionCookie("é"))
        #expect(
            Credential.read(authorization: nil, cookies: ["quad_lang=fr;", "; ;quad_session="]) == .sessionCookie(""))
        #expect(Credential.read(authorization: nil, cookies: ["quad_sessio=n; quad_session"]) == .none)
        #expect(Credential.read(authorization: nil, cookies: []) == .none)
    }

    @Test func aClientIsThePersonElseTheAddressAProxyForwardsFor() {
        let person = Person(username: "Kier", displayName: "Kier", role: .member)
        #expect(ClientKey.of(person, address: "192.0.2.1") == "user:kier")
        #expect(ClientKey.of(nil, address: "192.0.2.1") == "192.0.2.1")
        let trusted: Set = ["10.0.0.1"]
        #expect(
            ClientKey.forwardedClient(forwardedFor: "203.0.113.5, 192.0.2.7", peer: "10.0.0.1", trusted: trusted)
                == "192.0.2.7")
        #expect(ClientKey.forwardedClient(forwardedFor: "192.0.2.7", peer: "192.0.2.99", trusted: trusted) == nil)
        #expect(ClientKey.forwardedClient(forwardedFor: "not an address", peer: "10.0.0.1", trusted: trusted) == nil)
    }
}
