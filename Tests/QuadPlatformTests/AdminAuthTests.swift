import Foundation
import QuadTestSupport
import SQLKit
import Testing

@testable import QuadPlatform
@testable import QuadServer

@Suite struct AdminAuthTests {
    @Test(arguments: TestDatabase.engines)
    func aGeneratedTokenIsPrintedOnceAndOnlyItsHashIsKept(engine: Database.Engine) async throws {
        try await TestDatabase.withDatabase(engine) { database in
            var configuration = TestApp.configuration()
            configuration.adminToken = nil
            let printed = Announcements()
            let first = try await Features.start(configuration, database: database, logger: TestDatabase.logger) {
                printed.record($0)
            }.platform
            let line = try #require(printed.all.first { $0.hasPrefix("Admin token") })
            let token = try #require(line.split(separator: " ").last.map(String.init))
            #expect(token.count >= 43)  // 256 bits
            #expect(first.admin.isAdminToken(token))
            #expect(!first.admin.isAdminToken(token + "x"))

            let stored = try await database.withConnection { sql in
                try await sql.raw("SELECT value FROM quad_settings").all().map {
                    try $0.decode(column: "value", as: String.self)
                }
            }
            #expect(!stored.contains(token))

            let second = try await Features.start(configuration, database: database, logger: TestDatabase.logger) {
                printed.record($0)
            }.platform
            #expect(printed.all.filter { $0.hasPrefix("Admin token") }.count == 1)
            #expect(second.admin.isAdminToken(token))
        }
    }

    @Test func anEmptyTokenNeverMatches() {
        #expect(!AdminAuth(tokenHash: []).isAdminToken(""))
        #expect(!AdminAuth(tokenHash: []).isAdminToken("anything"))
    }
}
