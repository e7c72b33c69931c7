import Foundation
import Hummingbird
import HummingbirdTesting
import QuadTestSupport
import Testing

@testable import QuadPlatform
@testable import QuadRooms
@testable import QuadServer

@Suite struct RoomsAPITests {
    static let admin: HTTPFields = [.authorization: "Bearer \(TestApp.adminToken)", .contentType: "application/json"]
    static let json: HTTPFields = [.contentType: "application/json"]

    /// A test app with the demo rooms.
    static func run(
        _ engine: Database.Engine = .sqlite,
        _ body: @escaping @Sendable (TestApp, any TestClientProtocol) async throws -> Void
    ) async throws {
        try await TestApp.run(engine, at: TestTime.weekdayMorning, configure: { $0.loadDemoData = true }, body)
    }

    // The original app's models, as the reference describes them.
    struct RoomsResponse: Decodable { var rooms: [RoomResponse] }
    struct RoomResponse: Decodable {
        var name: String
        var spots: Int
        var thumbnail: URL?
    }
    struct BookRoomResponse: Decodable { var success: Bool }

    @Test func theOriginalAppsDecodeTheRoomsInBookingOrder() async throws {
        try await Self.run { _, client in
            try await client.execute(uri: "/api/rooms", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.cacheControl] == "no-cache")
                let decoded = try JSONDecoder().decode(RoomsResponse.self, from: Data(buffer: response.body))
                #expect(
                    decoded.rooms.map(\.name) == [
                        "Helmold", "Septima", "Ljerka", "Mina", "Yana", "Painter", "Mostafa", "Alexis",
                    ])
                #expect(decoded.rooms.map(\.spots) == [86, 84, 43, 39, 34, 16, 4, 0])
                let thumbnail = try #require(decoded.rooms.first?.thumbnail)
                #expect(thumbnail.scheme == "http" && thumbnail.host != nil)  // absolute, as the original apps need
                #expect(thumbnail.path.hasPrefix("/images/"))
            }
        }
    }

    @Test func theListRevalidatesAndChangesWithABooking() async throws {
        try await Self.run { app, client in
            let etag = try await client.execute(uri: "/api/rooms", method: .get) { try #require($0.headers[.eTag]) }
            try await client.execute(uri: "/api/rooms", method: .get, headers: [.ifNoneMatch: etag]) {
                #expect($0.status == .notModified)
                #expect($0.body.readableBytes == 0)
            }
            _ = try await client.book("ljerka", as: try await app.signedIn("ada"))
            try await client.execute(uri: "/api/rooms", method: .get, headers: [.ifNoneMatch: etag]) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.eTag] != etag)
                #expect(response.text.contains("\"spots\":42"))
            }
        }
    }

    @Test func filtersAndABadFilter() async throws {
        try await Self.run { _, client in
            try await client.execute(uri: "/api/rooms?minSpots=40&building=engineering", method: .get) { response in
                let rooms = try JSONDecoder().decode(RoomsResponse.self, from: Data(buffer: response.body)).rooms
                #expect(rooms.map(\.name) == ["Helmold", "Septima"])
            }
            try await client.execute(uri: "/api/rooms?minSpots=lots", method: .get) { response in
                #expect(response.status == .badRequest)
                #expect(response.headers[.contentType] == "application/problem+json")
            }
        }
    }

    @Test func bookingStatuses() async throws {
        try await Self.run { app, client in
            let ada = try await app.signedIn("ada")
            let booked = try await client.book("ljerka", as: ada)
            #expect(booked.status == .created)
            #expect(booked.json["spots"] as? Int == 42)
            let booking = try #require(booked.json["booking"] as? [String: Any])
            #expect(booking["person"] as? String == "Ada Lovelace")  // the demo account's display name
            let bookingId = try #require(booking["id"] as? String)
            #expect(bookingId.count >= 22)  // 128 random bits

            let again = try await client.book("ljerka", as: ada)
            #expect(again.status == .conflict)
            #expect(again.json["title"] as? String == "Already booked")
            let full = try await client.book("alexis", as: ada)
            #expect(full.status == .conflict)
            #expect(full.json["detail"] as? String == "Someone took the last spot.")
            #expect(try await client.book("nowhere", as: ada).status == .notFound)
            #expect(try await client.book("mina", as: Self.json).status == .unauthorized)

            try await client.execute(uri: "/api/me/bookings", method: .get, headers: ada) { response in
                let bookings = try #require(response.json["bookings"] as? [[String: Any]])
                #expect(bookings.map { $0["roomName"] as? String } == ["Ljerka"])
            }
            let uri = "/api/rooms/ljerka/bookings/\(bookingId)"
            try await client.execute(uri: uri, method: .delete) { #expect($0.status == .unauthorized) }
            try await client.execute(uri: uri, method: .delete, headers: try await app.signedIn("grace")) {
                #expect($0.status == .forbidden)
            }
            try await client.execute(uri: uri, method: .delete, headers: ada) { #expect($0.status == .noContent) }
            try await client.execute(uri: uri, method: .delete, headers: ada) { #expect($0.status == .notFound) }
            try await client.execute(uri: "/api/rooms/ljerka", method: .get) { #expect($0.json["spots"] as? Int == 43) }

            // An admin may cancel anyone's booking.
            let grace = try await client.book("mina", as: try await app.signedIn("grace"))
            let graceBooking = try #require((grace.json["booking"] as? [String: Any])?["id"] as? String)
            try await client.execute(
                uri: "/api/rooms/mina/bookings/\(graceBooking)", method: .delete, headers: Self.admin
            ) {
                #expect($0.status == .noContent)
            }
        }
    }

    /// The original Rooms app, given a personal app link as its base URL, books as the link's person.
    @Test func theOriginalBookCallThroughAnAppLink() async throws {
        try await Self.run { app, client in
            let base = try await client.appLink(for: try await app.signedIn("ada"))
            let ok = try await client.execute(
                uri: base + "/bookRoom.json", method: .post, headers: Self.json,
                body: ByteBuffer(string: "{\"name\": \"Mostafa\"}")
            ) { $0 }
            #expect(ok.status == .ok)
            #expect(try JSONDecoder().decode(BookRoomResponse.self, from: Data(buffer: ok.body)).success)
            let mine = try await client.execute(
                uri: "/api/me/bookings", method: .get, headers: try await app.signedIn("ada")
            ) { $0 }
            #expect((mine.json["bookings"] as? [[String: Any]])?.first?["roomId"] as? String == "mostafa")
            let full = try await client.execute(
                uri: base + "/bookRoom.json", method: .post, headers: Self.json,
                body: ByteBuffer(string: "{\"name\": \"Alexis\"}")
            ) { $0 }
            #expect(full.status == .conflict)
            #expect(try !JSONDecoder().decode(BookRoomResponse.self, from: Data(buffer: full.body)).success)
            let unknown = try await client.execute(
                uri: base + "/bookRoom.json", method: .post, headers: Self.json,
                body: ByteBuffer(string: "{\"name\": \"Nowhere\"}")
            ) { $0 }
            #expect(unknown.status == .notFound)
            try await client.execute(uri: "/api/rooms/mostafa", method: .get) { #expect($0.json["spots"] as? Int == 3) }
        }
    }

    /// Nobody fills a room anonymously any more: the original call needs someone it books for.
    @Test func theOriginalBookCallIsNotAnonymous() async throws {
        try await Self.run { _, client in
            try await client.execute(
                uri: "/api/book", method: .post, headers: Self.json, body: ByteBuffer(string: "{\"name\": \"Mostafa\"}")
            ) { #expect($0.status == .unauthorized) }
            try await client.execute(uri: "/api/rooms/mostafa", method: .get) { #expect($0.json["spots"] as? Int == 4) }
        }
    }

    @Test(arguments: TestDatabase.engines)
    func adminsManageRooms(engine: Database.Engine) async throws {
        try await Self.run(engine) { app, client in
            let body = ByteBuffer(string: "{\"name\": \"Ada Room\", \"building\": \"North Hall\", \"capacity\": 6}")
            try await client.execute(uri: "/api/rooms", method: .post, headers: Self.json, body: body) {
                #expect($0.status == .unauthorized)
            }
            try await client.execute(uri: "/api/rooms", method: .post, headers: Self.admin, body: body) { response in
                #expect(response.status == .created)
                #expect(response.json["id"] as? String == "ada-room")
                #expect(response.json["spots"] as? Int == 6)
            }
            try await client.execute(uri: "/api/rooms", method: .post, headers: Self.admin, body: body) {
                #expect($0.status == .conflict)
            }
            let bad = ByteBuffer(string: "{\"name\": \"\", \"building\": \"X\", \"capacity\": 0}")
            try await client.execute(uri: "/api/rooms", method: .post, headers: Self.admin, body: bad) { response in
                #expect(response.status == .unprocessableContent)
                let fields = (response.json["errors"] as? [[String: String]])?.compactMap { $0["field"] }
                #expect(fields == ["name", "capacity"])
            }
            _ = try await client.book("ada-room", as: try await app.signedIn("grace"))
            // `spots` is what the room offers: never fewer than are booked at any time ahead.
            let tooFew = ByteBuffer(string: "{\"spots\": 0}")
            try await client.execute(uri: "/api/rooms/ada-room", method: .patch, headers: Self.admin, body: tooFew) {
                #expect($0.status == .unprocessableContent)
                #expect($0.text.contains("Seats booked at some time ahead: 1."))
            }
            let rename = ByteBuffer(string: "{\"name\": \"Grace Room\", \"capacity\": 10}")
            try await client.execute(uri: "/api/rooms/ada-room", method: .patch, headers: Self.admin, body: rename) {
                #expect($0.status == .ok)
                #expect($0.json["name"] as? String == "Grace Room")
                #expect($0.json["spots"] as? Int == 5)
            }
            try await client.execute(uri: "/api/rooms/ada-room", method: .delete, headers: Self.admin) {
                #expect($0.status == .noContent)
            }
            try await client.execute(uri: "/api/rooms/ada-room", method: .get) { #expect($0.status == .notFound) }
            // Its bookings went with it.
            #expect(try await app.held(in: "ada-room").isEmpty)
        }
    }

    @Test func anAdminReplacesARoomsPhoto() async throws {
        try await Self.run { _, client in
            let png = TestImages.png
            var headers = Self.admin
            headers[.contentType] = "image/png"
            try await client.execute(uri: "/api/rooms/mina/photo", method: .put, body: ByteBuffer(bytes: png)) {
                #expect($0.status == .unauthorized)
            }
            let thumbnail = try await client.execute(
                uri: "/api/rooms/mina/photo", method: .put, headers: headers, body: ByteBuffer(bytes: png)
            ) { response in
                #expect(response.status == .ok)
                return try #require(response.json["thumbnail"] as? String)
            }
            let path = try #require(URL(string: thumbnail)?.path)
            try await client.execute(uri: path, method: .get) { #expect(Array(buffer: $0.body) == png) }
            try await client.execute(uri: "/api/rooms", method: .get) { #expect($0.text.contains(path)) }
            try await client.execute(
                uri: "/api/rooms/mina/photo", method: .put, headers: headers, body: ByteBuffer(string: "GIF89a")
            ) { #expect($0.status == .unsupportedMediaType) }
        }
    }
}
