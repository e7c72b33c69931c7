import Foundation
import HTTPTypes
import OpenAPIRuntime
import QuadCore

/// Import and export of rooms, people and books as CSV files (admins).
extension QuadClient {
    /// `GET /api/records/{kind}`: every room, person or book as a CSV file; everyone's bookings as an iCalendar file.
    public func exportRecords(_ kind: String) async throws -> Data {
        let (response, body) = try await send(
            HTTPRequest(
                method: .get, scheme: nil, authority: nil, path: "/api/records/\(try Self.kind(kind))",
                headerFields: [.accept: "text/csv, text/calendar"]), operationID: "exportRecords")
        let data = if let body { try await Data(collecting: body, upTo: 256 * 1024 * 1024) } else { Data() }
        guard response.status.code == 200 else { throw Self.problem(status: response.status.code, body: data) }
        return data
    }

    /// `PUT /api/records/{kind}`: all rows applied, or none. A refused file throws `KitError.invalid`, whose errors
    /// name each row (`FieldError.row`) and column at fault.
    public func importRecords(_ kind: String, csv: Data) async throws -> ImportSummary {
        let (response, body) = try await send(
            HTTPRequest(
                method: .put, scheme: nil, authority: nil, path: "/api/records/\(try Self.kind(kind))",
                headerFields: [.accept: "application/json", .contentType: "text/csv; charset=utf-8"]),
            body: HTTPBody(csv), operationID: "importRecords")
        let data = if let body { try await Data(collecting: body, upTo: 16 * 1024 * 1024) } else { Data() }
        guard response.status.code == 200 else { throw Self.problem(status: response.status.code, body: data) }
        return try Self.decode(ImportSummary.self, data, what: "the import")
    }

    /// `PUT /api/gtfs`: an operator's GTFS feed (a ZIP), loaded whole or not at all. A refused feed throws
    /// `KitError.invalid`, whose errors name each file, row and column at fault.
    public func importGTFS(zip: Data) async throws -> GTFSSummary {
        let (response, body) = try await send(
            HTTPRequest(
                method: .put, scheme: nil, authority: nil, path: "/api/gtfs",
                headerFields: [.accept: "application/json", .contentType: "application/zip"]),
            body: HTTPBody(zip), operationID: "importGTFS")
        let data = if let body { try await Data(collecting: body, upTo: 16 * 1024 * 1024) } else { Data() }
        guard response.status.code == 200 else { throw Self.problem(status: response.status.code, body: data) }
        return try Self.decode(GTFSSummary.self, data, what: "the feed")
    }

    /// A kind as a path segment: lowercase letters only (the server names the kinds it has).
    private static func kind(_ kind: String) throws -> String {
        guard !kind.isEmpty, kind.count <= 20, kind.allSatisfy({ ("a"..."z").contains($0) }) else {
            throw KitError.invalid(
                detail: "rooms, people or books", errors: [FieldError(field: "kind", message: "rooms, people or books")]
            )
        }
        return kind
    }
}
