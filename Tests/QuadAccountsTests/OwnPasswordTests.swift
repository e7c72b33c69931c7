import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import QuadCore
import QuadTestSupport
import Testing

@testable import QuadAccounts
@testable import QuadPlatform

/// A person changes their own password on `/account`: the current one is asked first, and their other sessions end
/// while the one they use stays.
@Suite struct OwnPasswordTests {
    static let csrf = "abcdefghijklmnopqrstuvwxyz0123456789ABCD"

    static func change(
        _ client: some TestClientProtocol, session: String, current: String, new: String
    ) async throws -> TestResponse {
        try await client.execute(
            uri: "/account/password", method: .post,
            headers: [
                .contentType: "application/x-www-form-urlencoded",
                .cookie: "quad_session=\(session); quad_csrf=\(csrf)",
                .acceptLanguage: "en",
            ],
            body: ByteBuffer(string: "csrf=\(csrf)&current=\(current)&password=\(new)")
        ) { $0 }
    }

    @Test func theCurrentPasswordFirstThenEveryOtherSessionEnds() async throws {
        try await TestApp.run { app, client in
            let other = try await app.signedIn("ada")  // password "password-ada"
            let (web, _) = try await app.features.accounts.sessions.start(for: "ada", kind: .web)

            let wrong = try await Self.change(client, session: web, current: "not-my-password", new: "a-fresh-password")
            #expect(wrong.status == .unprocessableContent)
            #expect(wrong.text.contains("This is not your current password."))
            let short = try await Self.change(client, session: web, current: "password-ada", new: "short")
            #expect(short.status == .unprocessableContent)

            let changed = try await Self.change(client, session: web, current: "password-ada", new: "a-fresh-password")
            #expect(changed.status == .seeOther)
            #expect(changed.headers[.location] == "/account?done=password")
            try await client.execute(
                uri: "/account?done=password", method: .get, headers: [.cookie: "quad_session=\(web)"]
            ) { response in
                #expect(response.status == .ok)
                #expect(response.text.contains("Your password was changed."))
            }
            try await client.execute(uri: "/api/me", method: .get, headers: other) {
                #expect($0.status == .unauthorized)
            }
            let person = try await app.features.accounts.signIn(
                username: "ada", password: "a-fresh-password", address: "192.0.2.1")
            #expect(person.username == "ada")
        }
    }
}
