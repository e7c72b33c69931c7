import Foundation
import QuadCore

extension QuadClient {
    /// `GET /api/schedules[?date=]` (a plain route keeping the original app's shape), read with QuadCore's
    /// `ScheduleResponse`: the signed-in student's week of `date` (the campus's today when nil), the car
    /// parks and the next shuttles.
    public func schedules(date: LocalDate? = nil) async throws -> Fetched<ScheduleResponse> {
        let path = "/api/schedules" + (date.map { "?date=\($0.description)" } ?? "")
        let fetched = try await get(path: path, operationID: "getSchedules")
        return Fetched(
            value: try Self.decode(ScheduleResponse.self, fetched.value, what: "the timetable"),
            revalidated: fetched.revalidated, etag: fetched.etag)
    }
}
