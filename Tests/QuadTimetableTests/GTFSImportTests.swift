import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import QuadCore
import QuadTestSupport
import Testing
import ZIPFoundation

@testable import QuadAccounts
@testable import QuadPlatform
@testable import QuadServer
@testable import QuadTimetable

/// `PUT /api/gtfs`: an operator's feed, loaded whole or refused with every fault named, bounded however it is packed.
@Suite struct GTFSImportTests {
    /// A ZIP of `files`, deflated as operators' feeds are.
    static func zip(_ files: [(String, Data)]) throws -> Data {
        let archive = try Archive(data: Data(), accessMode: .create)
        for (name, data) in files {
            try archive.addEntry(
                with: name, type: .file, uncompressedSize: Int64(data.count),
                modificationDate: Date(timeIntervalSince1970: 1_800_000_000), compressionMethod: .deflate
            ) { position, size in data.subdata(in: Int(position)..<Int(position) + size) }
        }
        return archive.data ?? Data()
    }

    /// A shuttle every weekday at 08:00 from Clayton to Caulfield, for a year from the test clock's day.
    static func feed(stopTimes: String? = nil) throws -> Data {
        try zip(
            [
                ("agency.txt", "agency_name,agency_timezone\r\nCampus Shuttle,Australia/Melbourne\r\n"),
                ("stops.txt", "stop_id,stop_name\r\nCL,Clayton\r\nCA,Caulfield\r\n"),
                ("routes.txt", "route_id,route_short_name\r\n601,601\r\n"),
                ("trips.txt", "route_id,service_id,trip_id,trip_headsign\r\n601,WD,t1,Caulfield\r\n"),
                (
                    "stop_times.txt",
                    stopTimes
                        ?? "trip_id,departure_time,stop_id,stop_sequence\r\nt1,08:00:00,CL,1\r\nt1,08:25:00,CA,2\r\n"
                ),
                (
                    "calendar.txt",
                    "service_id,monday,tuesday,wednesday,thursday,friday,saturday,sunday,start_date,end_date\r\n"
                        + "WD,1,1,1,1,1,1,1,20200101,20991231\r\n"
                ),
            ].map { ($0.0, Data($0.1.utf8)) })
    }

    static func put(
        _ client: some TestClientProtocol, _ body: Data, headers: HTTPFields, type: String = "application/zip"
    )
        async throws -> TestResponse
    {
        var headers = headers
        headers[.contentType] = type
        return try await client.execute(uri: "/api/gtfs", method: .put, headers: headers, body: ByteBuffer(data: body))
    }

    @Test(arguments: TestDatabase.engines)
    func aFeedIsLoadedWholeAndItsDeparturesListed(engine: Database.Engine) async throws {
        try await TestApp.run(engine) { app, client in
            let admin = try await app.signedIn("ops", role: .admin)
            let member = try await app.signedIn("kim")
            #expect(try await Self.put(client, try Self.feed(), headers: member).status == .forbidden)
            let csv = try await Self.put(client, Data("t".utf8), headers: admin, type: "text/csv")
            #expect(csv.status == .badRequest && csv.text.contains("expected: application/zip"))
            // The campus clock the departures are said on.
            let zone = TimeZone(identifier: "Australia/Melbourne")!
            try await TimetableStore(database: app.platform.database).setCampus(
                CampusSettings(
                    name: "Clayton", timeZone: zone, semesterStart: LocalDate("2026-01-05")!, teachingWeeks: 12,
                    breaks: []))

            let loaded = try await Self.put(client, try Self.feed(), headers: admin)
            #expect(loaded.status == .ok)
            let summary = loaded.json
            #expect(summary["agency"] as? String == "Campus Shuttle")
            #expect(summary["stops"] as? Int == 2 && summary["services"] as? Int == 1 && summary["calls"] as? Int == 1)
            let listed = try await client.execute(uri: "/api/departures", method: .get)
            let departures = listed.json["departures"] as? [[String: Any]] ?? []
            #expect(departures.first?["departure"] as? String == "Clayton")
            #expect(departures.first?["arrival"] as? String == "Caulfield")
            #expect((departures.first?["predicted_arrival_date"] as? String)?.hasSuffix("T08:00:00") == true)
            #expect((departures.first?["id"] as? String)?.hasPrefix("t1-cl-") == true)

            // A feed at fault changes nothing: the one before stays.
            let refused = try await Self.put(
                client,
                try Self.feed(stopTimes: "trip_id,departure_time,stop_id,stop_sequence\r\nt2,08:00:00,CL,1\r\n"),
                headers: admin)
            #expect(refused.status == .unprocessableContent)
            #expect(refused.text.contains("No trip t2 in trips.txt."))
            let after = try await client.execute(uri: "/api/departures", method: .get)
            #expect((after.json["departures"] as? [[String: Any]])?.count == departures.count)
        }
    }

    @Test func whatIsNoFeedOrTooLargeIsRefused() async throws {
        try await TestApp.run { app, client in
            let admin = try await app.signedIn("ops", role: .admin)
            let notZip = try await Self.put(client, Data("agency_name\r\nNope\r\n".utf8), headers: admin)
            #expect(notZip.status == .unprocessableContent)
            #expect(notZip.text.contains("This is not a ZIP file"))
            #expect(try await Self.put(client, Data(count: 6 * 1024 * 1024), headers: admin).status == .contentTooLarge)
            // A few hundred KiB that unpack to 65 MiB: refused before it is unpacked whole.
            let huge = Data(repeating: 0x20, count: 65 * 1024 * 1024)
            let bomb = try Self.zip([("stop_times.txt", huge)])
            #expect(bomb.count < BodyLimit.upload)
            let refused = try await Self.put(client, bomb, headers: admin)
            #expect(refused.status == .unprocessableContent)
            #expect(refused.text.contains("unpacks to more than 64 MiB"))
            // A feed without its files says which.
            let empty = try await Self.put(
                client, try Self.zip([("shapes.txt", Data("shape_id\r\n".utf8))]), headers: admin)
            #expect(empty.status == .unprocessableContent)
            #expect(empty.text.contains("The feed has no stop_times.txt."))
        }
    }
}
