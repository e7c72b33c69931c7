import Foundation
import Hummingbird
import HummingbirdTesting
import QuadCore
import QuadTestSupport
import Testing

@testable import QuadPlatform
@testable import QuadServer

/// `/admin`: an admin's index of what they can manage, a link to each feature's page for admins, in their language;
/// nobody else's.
@Suite struct AdminIndexTests {
    static let csrf = "abcdefghijklmnopqrstuvwxyz0123456789ABCD"

    @Test func anAdminFindsEveryPageToManageAndNobodyElseDoes() async throws {
        try await TestApp.run { app, client in
            let admin = try await app.browser("boss", role: .admin, csrf: Self.csrf)
            try await client.execute(uri: "/admin", method: .get, headers: admin) { response in
                #expect(response.status == .ok)
                let links = response.text.matches(
                    of: #/<li class="card"><a href="([^"]+)"><span class="card-title">([^<]+)</#
                )
                .map { "\($0.output.1) \($0.output.2)" }
                #expect(
                    links == [
                        "/admin/rooms Rooms and buildings", "/admin/people People",
                        "/admin/specials Manage specials", "/library/new Add a book",
                        "/admin/timetable Timetable settings", "/admin/waiting Waiting lines",
                        "/admin/records Import and export", "/admin/audit Audit trail",
                    ])
                // Every page's header leads there.
                #expect(response.text.contains(#"<a href="/admin">Admin</a>"#))
            }
            var french = admin
            french[.acceptLanguage] = "fr"
            try await client.execute(uri: "/admin", method: .get, headers: french) { response in
                #expect(response.text.contains("<h1>Administration</h1>"))
                #expect(response.text.contains("Gérer les promotions"))
            }
            let member = try await app.browser("kim", csrf: Self.csrf)
            try await client.execute(uri: "/admin", method: .get, headers: member) { response in
                #expect(response.status == .forbidden)
                #expect(!response.text.contains("/admin/people"))
            }
            try await client.execute(uri: "/admin", method: .get, headers: [.accept: "text/html"]) { response in
                #expect(response.status == .seeOther || response.status == .unauthorized)
            }
        }
    }
}
