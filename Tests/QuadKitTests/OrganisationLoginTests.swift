import Foundation
import QuadCore
import QuadPlatform
import QuadTestSupport
import Testing

@testable import QuadKit

/// `quad login --sso` against a real OpenID provider (`oidc-provider-mock`): the command prints where to sign in,
/// the browser goes through Quad and the provider and back to the command's loopback port, and the command keeps a
/// token as the password sign-in does.
@Suite(
    .serialized,
    .enabled(
        if: CLI.binary != nil && OpenIDProviderProcess.available, "the quad binary, python3 and oidc-provider-mock"))
struct OrganisationLoginTests {
    @Test func quadLoginSSOSignsInThroughTheBrowserAndKeepsAToken() async throws {
        let provider = try OpenIDProviderProcess()
        defer { provider.stop() }
        try await provider.setPerson("rowan-5", ["name": "Rowan Ash", "preferred_username": "rowan"])
        // The provider dates its tokens by the world's clock: so does this server.
        let server = try await LiveServer.start(at: SystemClock().now) { configuration in
            configuration.organisation = OrganisationSignIn(
                issuer: provider.issuer, clientID: "quad-cli-test", clientSecret: "a secret the command never sees")
            configuration.publicURL = "http://quad.test"
        }
        do {
            let cli = CLI(server: server.url, clock: server.clock)
            let login = try cli.start(["login", "--sso", "--no-browser"])
            try await eventually("the command says where to sign in") { login.err.contains("/signin/sso?") }
            let line = try #require(login.err.split(separator: "\n").first { $0.contains("/signin/sso?") })
            let address = try #require(URL(string: line.trimmingCharacters(in: .whitespaces)))
            #expect(address.absoluteString.hasPrefix(server.url.absoluteString + "/signin/sso?app_port="))

            // The browser: Quad, the provider's page, Quad's callback (at the public address: this server), the
            // command's loopback port.
            let atQuad = try await provider.open(address)
            #expect(atQuad.statusCode == 303)
            let cookie = try #require(atQuad.value(forHTTPHeaderField: "Set-Cookie")?.split(separator: ";").first)
            let back = try await provider.signIn(
                at: try #require(atQuad.value(forHTTPHeaderField: "Location")), as: "rowan-5")
            let callback = try #require(URL(string: server.url.absoluteString + back.path + "?" + (back.query ?? "")))
            let toCommand = try await provider.open(callback, cookie: String(cookie))
            #expect(toCommand.statusCode == 303)
            let loopback = try #require(toCommand.value(forHTTPHeaderField: "Location"))
            #expect(loopback.hasPrefix("http://127.0.0.1:"))
            #expect(try await provider.open(try #require(URL(string: loopback))).statusCode == 200)

            try await eventually("the command finishes") { !login.process.isRunning }
            #expect(login.process.terminationStatus == 0)
            #expect(login.out == "Signed in to \(server.url.absoluteString) as Rowan Ash.\n")
            let bookings = try await cli.run(["bookings"])
            #expect(bookings.status == 0, "the kept token signs the next command in: \(bookings.err)")
            #expect(!login.err.contains("a secret the command never sees"))
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }
}
