import Foundation
import QuadAPI
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

/// The stops a student uses and those they may choose (`/api/me/stops`).
public struct KitStops: Sendable, Equatable, Encodable {
    public struct Stop: Sendable, Equatable, Encodable {
        public var id: String
        public var name: String
    }

    /// The ids of the stops chosen, in the order given.
    public var chosen: [String]
    /// The operator's boarding stops, by name.
    public var stops: [Stop]
}

extension QuadClient {
    /// `GET /api/me/stops`: the signed-in student's stops, and the choices.
    public func myStops() async throws -> KitStops {
        let output = try await call { try await api.getMyStops() }
        guard case .ok(let ok) = output, case .json(let stops) = ok.body else { throw Self.failure(output) }
        return KitStops(stops)
    }

    /// `PUT /api/me/stops`: the stops the signed-in student uses from now on (none for no choice).
    public func setMyStops(_ ids: [String]) async throws -> KitStops {
        let output = try await call { try await api.setMyStops(body: .json(.init(stops: ids))) }
        guard case .ok(let ok) = output, case .json(let stops) = ok.body else { throw Self.failure(output) }
        return KitStops(stops)
    }
}

extension KitStops {
    init(_ stops: Components.Schemas.MyStops) {
        chosen = stops.chosen
        self.stops = stops.stops.map { Stop(id: $0.id, name: $0.name) }
    }
}
