import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import QuadCore
import QuadTestSupport
import Testing

@testable import QuadAccounts
@testable import QuadPlatform

/// What an `Idempotency-Key` may keep: only a signed-in person's API answers that hold no secret.
@Suite struct KeptAnswersTests {
    /// A visitor's key, a web form's and an answer that holds a secret keep nothing: a sign-in's cookie and a new
    /// app link's page were replayed, and every failed sign-in with a fresh key stored 6 KB.
    @Test func visitorsFormsAndSecretsKeepNothing() async throws {
        try await TestApp.run { app, client in
            _ = try await app.signedIn("ada")  // password "password-ada"
            let csrf = "abcdefghijklmnopqrstuvwxyz0123456789ABCD"
            for index in 0..<3 {
                try await client.execute(
                    uri: "/api/sessions", method: .post,
                    headers: [.contentType: "application/json", .idempotencyKey: "visitor-\(index)"],
                    body: ByteBuffer(string: #"{"username": "nobody", "password": "wrong-password"}"#)
                ) { #expect($0.status == .unauthorized) }
            }
            var cookies: [String] = []
            for _ in 0..<2 {
                try await client.execute(
                    uri: "/signin", method: .post,
                    headers: [
                        .contentType: "application/x-www-form-urlencoded", .cookie: "quad_csrf=\(csrf)",
                        .idempotencyKey: "the-same-key",
                    ],
                    body: ByteBuffer(string: "csrf=\(csrf)&username=ada&password=password-ada")
                ) { response in
                    #expect(response.status == .seeOther)
                    #expect(response.headers[.idempotentReplayed] == nil)
                    cookies.append(response.headers[.setCookie] ?? "")
                }
            }
            #expect(cookies[0].hasPrefix("quad_session=") && cookies[0] != cookies[1])

            let (token, _) = try await app.features.accounts.sessions.start(for: "ada", kind: .web)
            var pages: [String] = []
            for _ in 0..<2 {
                try await client.execute(
                    uri: "/account/app-links", method: .post,
                    headers: [
                        .contentType: "application/x-www-form-urlencoded",
                        .cookie: "quad_session=\(token); quad_csrf=\(csrf)", .idempotencyKey: "link-key",
                    ],
                    body: ByteBuffer(string: "csrf=\(csrf)&label=iPad")
                ) { response in
                    #expect(response.status.code < 400)
                    #expect(response.headers[.idempotentReplayed] == nil)
                    pages.append(response.text)
                }
            }
            #expect(pages[0] != pages[1])
            #expect(try await app.features.accounts.appLinks.list(for: "ada").count == 2)
            let kept = try await app.platform.database.withConnection { sql in
                try await sql.raw("SELECT COUNT(*) AS n FROM idempotency_keys").first()?.decode(
                    column: "n", as: Int.self)
            }
            #expect(kept == 0)
        }
    }
}
