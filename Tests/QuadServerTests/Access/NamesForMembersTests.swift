import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
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

/// Who has a book, who had it and who booked are for people signed in; the status stays public.
@Suite struct NamesForMembersTests {
    @Test func aVisitorSeesTheStatusButNoName() async throws {
        try await TestApp.run(at: TestTime.weekdayMorning, configure: { $0.loadDemoData = true }) { app, client in
            let ada = try await app.signedIn("ada")
            let id = try #require(try await app.features.library.store.all().first { $0.loan == nil }?.id)
            try await app.listening {
                let watcher = app.platform.events.subscribe(after: nil, types: [.book])
                var events = watcher.events.makeAsyncIterator()
                try await client.execute(uri: "/api/books/\(id)/checkout", method: .post, headers: ada) {
                    #expect($0.status == .ok)
                }
                // The event stream is public: its book events carry the status, not the borrower.
                let event = try #require(await events.next())
                #expect(event.data.contains("on-loan") && !event.data.contains("Ada Lovelace"))
            }
            let visitor = try await client.execute(uri: "/api/books/\(id)", method: .get) { $0 }
            #expect(visitor.json["status"] as? String == "on-loan")
            #expect(visitor.json["dueAt"] is String)
            #expect(!visitor.text.contains("Ada Lovelace") && visitor.json["loans"] == nil)
            #expect(visitor.json["lastCheckedOutBy"] is NSNull && visitor.json["borrower"] is NSNull)
            let list = try await client.execute(uri: "/api/books", method: .get) { $0 }
            #expect(!list.text.contains("Ada Lovelace"))
            let member = try await client.execute(uri: "/api/books/\(id)", method: .get, headers: ada) { $0 }
            #expect(member.json["borrower"] as? String == "Ada Lovelace")
            #expect((member.json["loans"] as? [[String: Any]])?.first?["person"] as? String == "Ada Lovelace")
            // Whatever names the demo loans carry, a visitor sees none of them in the list.
            let names = try await app.features.library.store.all().compactMap { $0.loan?.person }
            #expect(!names.isEmpty)
            for name in names { #expect(!list.text.contains(name), "\(name)") }
        }
    }
}
