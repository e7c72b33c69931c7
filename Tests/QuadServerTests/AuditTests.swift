import Foundation
import Hummingbird
import HummingbirdTesting
import QuadCore
import QuadTestSupport
import Testing

@testable import QuadAccounts
@testable import QuadPlatform
@testable import QuadServer

/// The audit trail (`/admin/audit`): every admin action and security event with who, what, on what, when and from
/// where; filtered, exported as CSV, forgotten after `QUAD_AUDIT_DAYS`; for admins only.
@Suite struct AuditTests {
    static let admin: HTTPFields = [.authorization: "Bearer \(TestApp.adminToken)", .contentType: "application/json"]
    static let csrf = "abcdefghijklmnopqrstuvwxyz0123456789ABCD"

    static func entries(_ app: TestApp, _ filter: AuditFilter = AuditFilter()) async throws -> [AuditEntry] {
        try await app.platform.audit.entries(filter, limit: 1000)
    }

    @Test(arguments: TestDatabase.engines)
    func adminActionsAndSecurityEventsAreKeptAndNothingElse(engine: Database.Engine) async throws {
        try await TestApp.run(engine) { app, client in
            let kim = try await app.signedIn("kim")
            // An admin's change of role: who, what, on what, the change itself.
            let patched = try await client.execute(
                uri: "/api/people/kim", method: .patch, headers: Self.admin,
                body: ByteBuffer(string: #"{"role":"admin"}"#))
            #expect(patched.status == .ok)
            // A member's app link: a security event whoever makes it.
            let lea = try await app.signedIn("lea")
            let link = try await client.execute(
                uri: "/api/me/app-links", method: .post, headers: lea, body: ByteBuffer(string: #"{"label":"Phone"}"#))
            #expect(link.status == .created)
            // A refused change is no action; a member's ordinary write is none of the trail's business.
            let refused = try await client.execute(
                uri: "/api/people/nobody-here", method: .patch, headers: Self.admin,
                body: ByteBuffer(string: #"{"role":"admin"}"#))
            #expect(refused.status == .notFound)
            _ = kim

            let all = try await Self.entries(app)
            #expect(all.map(\.action) == ["createMyAppLink", "updatePerson"])
            let role = try #require(all.last)
            #expect(role.actor == "admin token" && role.target == "/api/people/kim")
            #expect(role.detail == "kim: role member → admin" && !role.address.isEmpty)
            #expect(abs(role.at.timeIntervalSince(app.clock.now)) < 60)
            #expect(all.first?.actor == "lea" && all.first?.target == "/api/me/app-links")
        }
    }

    /// Three failed sign-ins are free (a typo, twice); past them each failure is kept, the username tried as its
    /// target, with no one as its actor.
    @Test func signInFailuresPastTheFreeOnesAreKept() async throws {
        try await TestApp.run { app, client in
            _ = try await app.signedIn("ada")
            func tryPassword() async throws -> HTTPResponse.Status {
                try await client.execute(
                    uri: "/api/sessions", method: .post, headers: [.contentType: "application/json"],
                    body: ByteBuffer(string: #"{"username":"ada","password":"not-her-password"}"#)
                ).status
            }
            for _ in 0..<3 { #expect(try await tryPassword() == .unauthorized) }
            #expect(try await Self.entries(app).isEmpty)
            app.clock.advance(by: .seconds(LoginThrottle.delay(afterFailures: 3) + 1))
            #expect(try await tryPassword() == .unauthorized)
            let kept = try await Self.entries(app)
            #expect(kept.map(\.action) == ["signInFailed"] && kept[0].target == "ada" && kept[0].actor == "")
            #expect(kept[0].detail == "failure 4 in 15 minutes")
        }
    }

    /// The page narrows the trail by who, what and when, and its file holds the same entries; a member sees none of
    /// it; entries older than the days kept are forgotten.
    @Test func thePageFiltersExportsAndForgets() async throws {
        try await TestApp.run(configure: { $0.auditDays = 30 }) { app, client in
            let trail = app.platform.audit
            let now = app.clock.now
            for (days, actor, action) in [
                (40, "old", "updatePerson"), (2, "boss", "deletePerson"), (0, "kim", "createMyAppLink"),
            ] {
                await trail.record(
                    AuditEntry(
                        at: now.addingTimeInterval(-Double(days) * 86400), actor: actor, action: action,
                        target: "/api/people/\(actor)", address: "192.0.2.1"))
            }
            let admin = try await app.browser("boss", role: .admin, csrf: Self.csrf)
            let page = try await client.execute(uri: "/admin/audit?who=KIM", method: .get, headers: admin)
            #expect(page.status == .ok)
            #expect(page.text.contains("/api/people/kim") && !page.text.contains("/api/people/boss"))
            let csv = try await client.execute(
                uri: "/admin/audit.csv?action=deletePerson", method: .get, headers: admin)
            #expect(csv.headers[.contentType]?.hasPrefix("text/csv") == true)
            let lines = csv.text.split(separator: "\r\n").map(String.init)
            #expect(lines.count == 2 && lines[0] == "at,who,action,target,detail,address")
            #expect(lines[1].contains(",boss,deletePerson,/api/people/boss,,192.0.2.1"))
            let today = String(now.formatted(.iso8601).prefix(10))
            let dated = try await client.execute(uri: "/admin/audit.csv?from=\(today)", method: .get, headers: admin)
            #expect(dated.text.split(separator: "\r\n").count == 2, "\(dated.text)")
            let bad = try await client.execute(uri: "/admin/audit?from=yesterday", method: .get, headers: admin)
            #expect(bad.status == .unprocessableContent && bad.text.contains("Give a date such as"))

            let member = try await app.browser("kim", csrf: Self.csrf)
            #expect(try await client.execute(uri: "/admin/audit", method: .get, headers: member).status == .forbidden)
            #expect(
                try await client.execute(uri: "/admin/audit.csv", method: .get, headers: member).status == .forbidden)

            #expect(try await trail.forgetOld() == 1)
            #expect(try await Self.entries(app).map(\.actor).sorted() == ["boss", "kim"])
        }
    }
}
