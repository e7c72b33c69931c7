import Foundation
import Hummingbird
import HummingbirdTesting
import QuadCore
import QuadTestSupport
import Testing

@testable import QuadPlatform
@testable import QuadRooms
@testable import QuadServer

/// An admin's rooms on the web, through the forms alone (no JavaScript): adding a room, changing it, a fault shown
/// beside its field, and removing one with what it cancels said first.
@Suite struct RoomsAdminWebTests {
    static let csrf = RoomsWebInTimeTests.csrf

    static func post(
        _ client: any TestClientProtocol, _ uri: String, _ form: String, headers: HTTPFields
    ) async throws -> TestResponse {
        try await RoomsWebInTimeTests.post(client, uri, form, headers: headers)
    }

    @Test func anAdminAddsChangesAndRemovesARoomOnTheWeb() async throws {
        try await RoomsInTimeTests.run { app, client in
            let boss = try await app.browser("boss", role: .admin, csrf: Self.csrf)
            let kier = try await app.browser("kier", csrf: Self.csrf)
            // A member may not.
            try await client.execute(uri: "/admin/rooms/new", method: .get, headers: kier) {
                #expect($0.status == .forbidden)
            }
            let index = try await client.execute(uri: "/admin/rooms", method: .get, headers: boss) { $0.text }
            #expect(index.contains(#"href="/admin/rooms/mostafa">Mostafa</a>"#))
            #expect(index.contains("4 of 4 seats free · Holds 12 people"))

            // A fault is drawn again beside its field, with what was typed.
            let bad = try await Self.post(
                client, "/admin/rooms/new", "name=Quiet%20Room&building=North%20Hall&capacity=6&spots=9",
                headers: boss)
            #expect(bad.status == .unprocessableContent)
            #expect(bad.text.contains(#"id="r-spots-error""#) && bad.text.contains(#"value="Quiet Room""#))
            let taken = try await Self.post(
                client, "/admin/rooms/new", "name=mostafa&building=North%20Hall&capacity=6&spots=6", headers: boss)
            #expect(taken.status == .unprocessableContent && taken.text.contains("Another room has this name."))

            let added = try await Self.post(
                client, "/admin/rooms/new", "name=Quiet%20Room&building=North%20Hall&capacity=8&spots=6", headers: boss)
            #expect(added.headers[.location] == "/admin/rooms/quiet-room?saved=1")
            let room = try #require(try await app.features.rooms.store.find("quiet-room"))
            #expect(room.name == "Quiet Room" && room.capacity == 8 && room.seats == 6)
            // It opens as North Hall does, and is bookable at once.
            let booking = try await RoomsInTimeTests.book(
                client, "quiet-room", as: try await app.signedIn("kier"),
                #"{"start": "\#(RoomsInTimeTests.iso(RoomsInTimeTests.at("10:00")))", "minutes": 30}"#)
            #expect(booking.status == .created)

            // Changed: fewer seats than are booked ahead is refused, beside the field.
            let tooFew = try await Self.post(
                client, "/admin/rooms/quiet-room", "name=Quiet%20Room&building=North%20Hall&capacity=8&spots=0",
                headers: boss)
            #expect(tooFew.status == .unprocessableContent && tooFew.text.contains(#"id="r-spots-error""#))
            let changed = try await Self.post(
                client, "/admin/rooms/quiet-room", "name=Quiet%20Room&building=North%20Hall&capacity=10&spots=8",
                headers: boss)
            #expect(changed.headers[.location] == "/admin/rooms/quiet-room?saved=1")
            let form = try await client.execute(uri: "/admin/rooms/quiet-room?saved=1", method: .get, headers: boss) {
                $0.text
            }
            #expect(form.contains("The room is saved.") && form.contains(#"value="10""#))
            // Removing it says first what goes with it.
            #expect(form.contains("Its booking to come is cancelled with it."))

            // Not meant (the box left unticked): nothing goes, and the page asks.
            let unsure = try await Self.post(client, "/admin/rooms/quiet-room/remove", "", headers: boss)
            #expect(unsure.status == .unprocessableContent && unsure.text.contains("Tick the box to say you mean it."))
            #expect(try await app.features.rooms.store.find("quiet-room") != nil)
            let removed = try await Self.post(
                client, "/admin/rooms/quiet-room/remove", "confirm=1", headers: boss)
            #expect(removed.headers[.location] == "/admin/rooms?removed=1")
            #expect(try await app.features.rooms.store.find("quiet-room") == nil)
            #expect(try await app.features.rooms.reservations.upcomingCount(roomId: "quiet-room") == 0)
            let after = try await client.execute(uri: "/admin/rooms?removed=1", method: .get, headers: boss) { $0.text }
            #expect(after.contains("The room is removed.") && !after.contains("Quiet Room"))
            try await client.execute(uri: "/admin/rooms/quiet-room", method: .get, headers: boss) {
                #expect($0.status == .notFound)
            }
        }
    }
}
