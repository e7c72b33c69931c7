import Foundation
import Hummingbird
import HummingbirdTesting
import QuadCore
import QuadTestSupport
import Testing

@testable import QuadAccounts
@testable import QuadPlatform
@testable import QuadRooms
@testable import QuadServer

/// An admin removes a room: each person booked there, or waiting, is told what they lost, on their notifications
/// (page and API), on Today and in the badge, until they dismiss it; nobody else is told, and nobody can dismiss
/// another's notice.
@Suite struct RoomRemovalNoticesTests {
    static let csrf = "abcdefghijklmnopqrstuvwxyz0123456789ABCD"
    static let campus = CampusClock(timeZone: TestTime.melbourne)
    /// A Tuesday, 09:50 on the demo campus.
    static let tuesday = TestTime.next(LocalTime(hour: 9, minute: 50), where: { $0.weekday == 2 })
    static func at(_ time: String) -> Date { campus.instant(campus.date(of: tuesday), LocalTime(time)!) }

    static func person(_ app: TestApp, _ username: String) async throws -> Person {
        _ = try await app.signedIn(username)
        return try #require(try await app.person(username))
    }

    static func notices(_ client: any TestClientProtocol, _ headers: HTTPFields) async throws -> [[String: Any]] {
        try await client.execute(uri: "/api/me/notifications", method: .get, headers: headers) { response in
            #expect(response.status == .ok)
            return try #require(response.json["notices"] as? [[String: Any]])
        }
    }

    @Test(arguments: TestDatabase.engines)
    func thePeopleBookedOrWaitingAreToldAndDismissIt(engine: Database.Engine) async throws {
        try await TestApp.run(engine, at: Self.tuesday, configure: { $0.loadDemoData = true }) { app, client in
            let rooms = app.features.rooms
            let (kier, grace, ada) = (
                try await Self.person(app, "kier"), try await Self.person(app, "grace"),
                try await Self.person(app, "ada")
            )
            // Kier: one booking at 10:00. Grace: the whole room from 11:00, twice a day for two days. Ada: in line
            // for a seat at 11:00, the room being Grace's then.
            _ = try await rooms.book(
                roomId: "mostafa", owner: kier, start: Self.at("10:00"), minutes: 30, hold: .seat, recurrence: nil)
            _ = try await rooms.book(
                roomId: "mostafa", owner: grace, start: Self.at("11:00"), minutes: 60, hold: .room,
                recurrence: Recurrence(
                    frequency: .daily, until: Self.campus.date(of: Self.tuesday).adding(days: 1)))
            _ = try await rooms.wait(roomId: "mostafa", person: ada, start: Self.at("11:00"), minutes: 30, hold: .seat)
            // What else needs Kier now (the demo's overdue loan), before.
            let needed = try await app.features.waiting.attention(for: kier, at: app.clock.now).count
            let boss = try await app.browser("boss", role: .admin, csrf: Self.csrf)
            var headers = boss
            headers[.contentType] = "application/x-www-form-urlencoded"
            let removed = try await client.execute(
                uri: "/admin/rooms/mostafa/remove", method: .post, headers: headers,
                body: ByteBuffer(string: "csrf=\(Self.csrf)&confirm=1")
            ) { $0.headers[.location] }
            #expect(removed == "/admin/rooms?removed=1")

            let t = Localizer(language: .english)
            let day = t.longDate(Self.campus.date(of: Self.tuesday))
            let kierAPI = try await app.signedIn("kier")
            let kiers = try await Self.notices(client, kierAPI)
            #expect(kiers.count == 1)
            #expect(kiers.first?["kind"] as? String == "bookingsEnded" && kiers.first?["room"] as? String == "Mostafa")
            #expect(kiers.first?["count"] as? Int == 1)
            #expect(kiers.first?["start"] as? String == Self.at("10:00").formatted(.iso8601))
            let graces = try await Self.notices(client, try await app.signedIn("grace"))
            #expect(graces.map { $0["count"] as? Int } == [2] && graces.first?["start"] == nil)
            let adaAPI = try await app.signedIn("ada")
            let adas = try await Self.notices(client, adaAPI)
            #expect(adas.map { $0["kind"] as? String } == ["placesEnded"])
            // Ada's place went with the room.
            let adaWaiting = try await client.execute(uri: "/api/me/notifications", method: .get, headers: adaAPI) {
                $0.json["waiting"] as? [Any]
            }
            #expect(adaWaiting?.isEmpty == true)
            // Nobody else hears of it.
            #expect(try await Self.notices(client, try await app.signedIn("lea")).isEmpty)

            // Kier's pages say it in words, with a way to dismiss it; the badge counts it.
            let kierWeb = try await app.browser("kier", csrf: Self.csrf)
            let page = try await client.execute(uri: "/notifications", method: .get, headers: kierWeb) { $0.text }
            #expect(page.contains("Mostafa was removed: your booking on \(day), 10:00–10:30 is cancelled."))
            let noticeId = try #require(kiers.first?["id"] as? String)
            #expect(page.contains(#"action="/notifications/notices/\#(noticeId)/dismiss""#))
            let today = try await client.execute(uri: "/", method: .get, headers: kierWeb) { $0.text }
            #expect(today.contains(#"id="today-notices""#) && today.contains("Mostafa was removed"))
            #expect(try await app.features.waiting.attention(for: kier, at: app.clock.now).count == needed + 1)
            let gracePage = try await client.execute(
                uri: "/notifications", method: .get, headers: try await app.browser("grace", csrf: Self.csrf)
            ) { $0.text }
            #expect(gracePage.contains("Mostafa was removed: your 2 bookings there are cancelled."))

            // Not Ada's to dismiss; Kier's, once.
            try await client.execute(uri: "/api/me/notices/\(noticeId)", method: .delete, headers: adaAPI) {
                #expect($0.status == .notFound)
            }
            try await client.execute(uri: "/api/me/notices/\(noticeId)", method: .delete, headers: kierAPI) {
                #expect($0.status == .noContent)
            }
            try await client.execute(uri: "/api/me/notices/\(noticeId)", method: .delete, headers: kierAPI) {
                #expect($0.status == .notFound)
            }
            #expect(try await Self.notices(client, kierAPI).isEmpty)
            #expect(try await app.features.waiting.attention(for: kier, at: app.clock.now).count == needed)

            // Ada dismisses hers with the page's form, without a script.
            let adaId = try #require(adas.first?["id"] as? String)
            var adaForm = try await app.browser("ada", csrf: Self.csrf)
            adaForm[.contentType] = "application/x-www-form-urlencoded"
            let dismissed = try await client.execute(
                uri: "/notifications/notices/\(adaId)/dismiss", method: .post, headers: adaForm,
                body: ByteBuffer(string: "csrf=\(Self.csrf)")
            ) { $0.headers[.location] }
            #expect(dismissed == "/notifications?done=dismissed")
            let after = try await client.execute(
                uri: "/notifications?done=dismissed", method: .get, headers: adaForm
            ) { $0.text }
            #expect(after.contains("Dismissed.") && !after.contains("Mostafa was removed"))
        }
    }

    /// A person removed takes their notices with them.
    @Test func aPersonRemovedTakesTheirNotices() async throws {
        try await TestApp.run(at: Self.tuesday, configure: { $0.loadDemoData = true }) { app, client in
            let kier = try await Self.person(app, "kier")
            _ = try await app.features.rooms.book(
                roomId: "mostafa", owner: kier, start: Self.at("10:00"), minutes: 30, hold: .seat, recurrence: nil)
            #expect(try await app.features.rooms.remove("mostafa"))
            #expect(try await app.features.waiting.lines.notices(of: "kier").count == 1)
            try await app.features.accounts.remove("kier")
            #expect(try await app.features.waiting.lines.notices(of: "kier").isEmpty)
        }
    }
}
