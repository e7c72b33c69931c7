import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import QuadAPI
import QuadCore
import QuadTestSupport
import Testing

@testable import QuadAccounts
@testable import QuadLibrary
@testable import QuadPlatform
@testable import QuadRooms
@testable import QuadServer
@testable import QuadSpecials
@testable import QuadTimetable

/// Every role against every operation the contract declares: what `x-quad-access` says is what a caller gets,
/// and the answer comes before the body is read (a malformed body cannot turn a 401 or a 403 into a 400).
@Suite struct AccessTableTests {
    static let operations: [AccessTable.Operation] = (try? AccessTable.operations(Contract.yaml)) ?? []

    /// A path of the operation with made-up identifiers (none of which exists).
    static func path(_ template: String) -> String {
        template.split(separator: "/", omittingEmptySubsequences: false).map { part in
            switch part {
            case "{bookId}": "999"
            case "{file}": "0000.png"
            default: part.hasPrefix("{") ? "nothing" : String(part)
            }
        }.joined(separator: "/")
    }

    enum Caller: String, CaseIterable {
        case visitor, feed, member, admin

        var role: Role? {
            switch self {
            case .visitor: nil
            case .feed: .feed
            case .member: .member
            case .admin: .admin
            }
        }

        func headers(_ app: TestApp) async throws -> HTTPFields {
            var headers: HTTPFields = [.contentType: "application/json"]
            switch self {
            case .visitor: break
            case .feed: headers = try await app.signedIn("feeder", role: .feed)
            case .member: headers = try await app.signedIn("ada")
            case .admin: headers[.authorization] = "Bearer \(TestApp.adminToken)"
            }
            return headers
        }
    }

    @Test func theContractDeclaresEveryOperationsAccessAndItsAnswers() throws {
        #expect(Self.operations.count >= 50)
        for operation in Self.operations {
            let name = "\(operation.method) \(operation.path)"
            let rule = operation.entry.rule
            // `security` says the same as `x-quad-access`: anonymous (`{}`) exactly for public operations and
            // those whose link is the authority.
            let open = [.public, .link].contains(rule)
            if rule == .metrics {
                // A monitoring system: by its address (anonymous) or the metrics token (bearer), never a session's
                // cookie; refused with 403, as no sign-in would help.
                #expect(operation.security == ["", "bearer"], "\(name): security")
                #expect(operation.statuses.contains("403") && !operation.statuses.contains("401"), "\(name)")
                continue
            }
            #expect(operation.security.contains("") == open, "\(name): security")
            #expect(operation.security.contains("bearer") && operation.security.contains("cookie"), "\(name)")
            if !open { #expect(operation.statuses.contains("401"), "\(name) answers 401") }
            if ![.public, .link, .person].contains(rule) {
                #expect(operation.statuses.contains("403"), "\(name) answers 403")
            }
        }
    }

    @Test func everyServedRouteIsDeclaredAndEveryOperationIsServed() async throws {
        try await TestApp.run { app, _ in
            let router = try await buildRouter(app.platform, features: app.features.all, people: app.features.accounts)
            let served = Set(router.routes.map { "\($0.method.rawValue) \(AccessTable.shape($0.path.description))" })
            for operation in Self.operations {
                #expect(
                    served.contains("\(operation.method) \(AccessTable.shape(operation.path))"), "\(operation.path)")
            }
            #expect(router.access.uncovered(router.routes.map { ($0.path.description, $0.method) }).isEmpty)
        }
    }

    /// The table: 401 for a visitor where someone must sign in, 403 for the wrong role, and otherwise never
    /// either (the handler's own answer, 404 for the made-up ids). The body is not JSON at all, so an operation
    /// that read it before deciding would answer 400.
    @Test(arguments: Caller.allCases)
    func everyRoleAgainstEveryOperation(caller: Caller) async throws {
        try await TestApp.run { app, client in
            // The event stream never ends (its access, public, is in the first test and its own suite).
            for operation in Self.operations where operation.entry.operationId != "streamEvents" {
                let method = HTTPRequest.Method(operation.method)!
                let uri = Self.path(operation.path)
                let headers = try await caller.headers(app)
                let body = method == .get || method == .delete ? nil : ByteBuffer(string: "{not json")
                let response = try await client.execute(uri: uri, method: method, headers: headers, body: body) { $0 }
                let name = "\(caller) \(operation.method) \(uri)"
                switch operation.entry.rule.decide(caller.role) {
                case .signInFirst: #expect(response.status == .unauthorized, "\(name)")
                case .forbidden: #expect(response.status == .forbidden, "\(name)")
                case .allowed:
                    #expect(![.unauthorized, .forbidden].contains(response.status), "\(name): \(response.status)")
                }
                #expect(response.status.code < 500, "\(name)")
            }
        }
    }

    @Test func aFeedAccountPostsReadingsAndNothingElse() async throws {
        try await TestApp.run(at: TestTime.weekdayMorning, configure: { $0.loadDemoData = true }) { app, client in
            let feed = try await app.signedIn("feeder", role: .feed)
            let book = try await client.execute(
                uri: "/api/books", method: .post, headers: feed,
                body: ByteBuffer(string: #"{"title": "T", "author": "A"}"#)
            ) { $0 }
            #expect(book.status == .forbidden)
            #expect(try await client.book("ljerka", as: feed).status == .forbidden)
            try await client.execute(
                uri: "/api/books/delete", method: .post, headers: feed, body: ByteBuffer(string: #"{"ids": [1]}"#)
            ) { #expect($0.status == .forbidden) }
            try await client.execute(
                uri: "/api/books/1/checkout", method: .post, headers: feed, body: ByteBuffer(string: "{}")
            ) { #expect($0.status == .forbidden) }
            try await client.execute(uri: "/api/books", method: .get) { #expect($0.status == .ok) }
        }
    }
}

/// The order of the checks: credentials and role before the body, and refused credentials count against the
/// rate limit, so guessing tokens is no faster than any other flood.
@Suite struct AccessOrderTests {
    @Test func refusedCredentialsSpendTheRateLimit() async throws {
        try await TestApp.run(configure: {
            $0.rateLimit = 0.01; $0.rateBurst = 2
        }) { _, client in
            let guess: HTTPFields = [.authorization: "Bearer not-a-token"]
            var statuses: [HTTPResponse.Status] = []
            for _ in 0..<3 {
                statuses.append(try await client.execute(uri: "/api/rooms", method: .get, headers: guess) { $0.status })
            }
            #expect(statuses == [.unauthorized, .unauthorized, .tooManyRequests])
        }
    }

    @Test func anAdminRouteAnswersWhoBeforeWhat() async throws {
        try await TestApp.run { app, client in
            let malformed = ByteBuffer(string: "{\"name\": ")
            try await client.execute(
                uri: "/api/rooms", method: .post, headers: [.contentType: "application/json"], body: malformed
            ) { #expect($0.status == .unauthorized) }
            try await client.execute(
                uri: "/api/rooms", method: .post, headers: try await app.signedIn("ada"), body: malformed
            ) { #expect($0.status == .forbidden) }
            try await client.execute(
                uri: "/api/rooms", method: .post,
                headers: [.authorization: "Bearer \(TestApp.adminToken)", .contentType: "application/json"],
                body: malformed
            ) { #expect($0.status == .badRequest) }
        }
    }

    @Test func theOldSwitchIsRefusedWithWhatReplacedIt() {
        do {
            _ = try ServerConfiguration(environment: ["QUAD_LEGACY_API": "on"])
            Issue.record("QUAD_LEGACY_API was accepted")
        } catch {
            #expect("\(error)".contains("QUAD_LEGACY_API") && "\(error)".contains("app link"))
        }
    }
}

/// The admin token acts as an admin: Quad never lets the last admin go, so the token cannot lock itself out.
@Suite struct LastAdminTests {
    @Test func theLastAdminCanBeNeitherRemovedNorDemoted() async throws {
        try await TestApp.run { _, client in
            let admin: HTTPFields = [.authorization: "Bearer \(TestApp.adminToken)", .contentType: "application/json"]
            try await client.execute(uri: "/api/people/admin", method: .delete, headers: admin) {
                #expect($0.status == .conflict)
            }
            try await client.execute(
                uri: "/api/people/admin", method: .patch, headers: admin,
                body: ByteBuffer(string: #"{"role": "member"}"#)
            ) { #expect($0.status == .conflict) }
            try await client.execute(uri: "/api/me", method: .get, headers: admin) { response in
                #expect(response.status == .ok && response.json["role"] as? String == "admin")
            }
        }
    }
}
