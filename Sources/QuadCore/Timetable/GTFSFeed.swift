import Foundation

extension GTFSSchedule {
    /// One of the feed's files, read: its rows as column → value, in file order (the header is row 1, so the first
    /// record is row 2).
    public typealias Table = [[String: String]]

    /// The most calls a feed may hold: a campus's lines, not a city's network (a network's feed can be cut down to the
    /// routes that serve the campus first, with gtfs-kit's `restrict_to_routes`).
    public static let maximumCalls = 100_000
    /// The errors a feed at fault reports, at most: the first ones say what is wrong.
    static let maximumErrors = 100

    /// Reads a feed from its files (`agency.txt` … by name). Throws every error found (at most a hundred), each naming
    /// the file, the row and the column at fault.
    public init(tables: [String: Table]) throws(ValidationFailure) {
        var errors = FeedErrors()
        for name in ["agency.txt", "stops.txt", "routes.txt", "trips.txt", "stop_times.txt"] where tables[name] == nil {
            errors.add(name, nil, "", "The feed has no \(name).")
        }
        if tables["calendar.txt"] == nil, tables["calendar_dates.txt"] == nil {
            errors.add("calendar.txt", nil, "", "The feed has neither calendar.txt nor calendar_dates.txt.")
        }
        try errors.throwIfAny()

        let agencies = tables["agency.txt"] ?? []
        var zone = TimeZone.gmt
        if let first = agencies.first {
            if let found = TimeZone(identifier: first["agency_timezone"] ?? "") {
                zone = found
            } else {
                errors.add(
                    "agency.txt", 2, "agency_timezone", "Give the agency's time zone, such as Australia/Melbourne.")
            }
        } else {
            errors.add("agency.txt", nil, "", "agency.txt names no agency.")
        }
        let agency = agencies.first?["agency_name"] ?? ""

        var stops: [Stop] = []
        var stopNames: [String: String] = [:]
        for (index, row) in (tables["stops.txt"] ?? []).enumerated() {
            guard let id = errors.required(row, "stops.txt", index, "stop_id") else { continue }
            // Stations, entrances and nodes are not where a bus is boarded.
            guard ["", "0"].contains(row["location_type"] ?? "") else { continue }
            let name = row["stop_name"].flatMap { $0.isEmpty ? nil : $0 } ?? id
            stops.append(Stop(id: id, name: name))
            stopNames[id] = name
        }

        var routes: [String: String] = [:]
        for (index, row) in (tables["routes.txt"] ?? []).enumerated() {
            guard let id = errors.required(row, "routes.txt", index, "route_id") else { continue }
            let short = row["route_short_name"] ?? "", long = row["route_long_name"] ?? ""
            if short.isEmpty, long.isEmpty {
                errors.add("routes.txt", index + 2, "route_short_name", "Give the route a short or a long name.")
            }
            routes[id] = short.isEmpty ? long : short
        }

        var services: [String: Service] = [:]
        let days = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
        for (index, row) in (tables["calendar.txt"] ?? []).enumerated() {
            guard let id = errors.required(row, "calendar.txt", index, "service_id") else { continue }
            var weekdays: Set<Int> = []
            for (offset, day) in days.enumerated() {
                switch row[day] {
                case "1": weekdays.insert(offset + 1)
                case "0": break
                default: errors.add("calendar.txt", index + 2, day, "Write 1 when the service runs that day, else 0.")
                }
            }
            let start = errors.date(row, "calendar.txt", index, "start_date")
            let end = errors.date(row, "calendar.txt", index, "end_date")
            services[id] = Service(weekdays: weekdays, start: start, end: end)
        }
        for (index, row) in (tables["calendar_dates.txt"] ?? []).enumerated() {
            guard let id = errors.required(row, "calendar_dates.txt", index, "service_id"),
                let date = errors.date(row, "calendar_dates.txt", index, "date")
            else { continue }
            var service = services[id] ?? Service(weekdays: [], start: nil, end: nil)
            switch row["exception_type"] {
            case "1": service.added.insert(date)
            case "2": service.removed.insert(date)
            default:
                errors.add(
                    "calendar_dates.txt", index + 2, "exception_type", "Write 1 for a date added, 2 for one removed.")
            }
            services[id] = service
        }

        var trips: [String: (service: String, route: String, headsign: String)] = [:]
        for (index, row) in (tables["trips.txt"] ?? []).enumerated() {
            guard let id = errors.required(row, "trips.txt", index, "trip_id"),
                let route = errors.required(row, "trips.txt", index, "route_id"),
                let service = errors.required(row, "trips.txt", index, "service_id")
            else { continue }
            guard let routeName = routes[route] else {
                errors.add("trips.txt", index + 2, "route_id", "No route \(route) in routes.txt.")
                continue
            }
            if services[service] == nil {
                errors.add(
                    "trips.txt", index + 2, "service_id", "No service \(service) in calendar.txt or calendar_dates.txt."
                )
            }
            trips[id] = (service, routeName, row["trip_headsign"] ?? "")
        }

        // Each trip's calls, then its last stop dropped (nobody boards there) and its headsign filled in.
        var byTrip: [String: [Call]] = [:]
        var pickups: [String: Set<Int>] = [:]
        for (index, row) in (tables["stop_times.txt"] ?? []).enumerated() {
            guard let tripId = errors.required(row, "stop_times.txt", index, "trip_id"),
                let stopId = errors.required(row, "stop_times.txt", index, "stop_id"),
                let sequenceText = errors.required(row, "stop_times.txt", index, "stop_sequence")
            else { continue }
            guard let trip = trips[tripId] else {
                errors.add("stop_times.txt", index + 2, "trip_id", "No trip \(tripId) in trips.txt.")
                continue
            }
            guard stopNames[stopId] != nil else {
                errors.add("stop_times.txt", index + 2, "stop_id", "No stop \(stopId) in stops.txt.")
                continue
            }
            guard let sequence = Int(sequenceText), sequence >= 0 else {
                errors.add("stop_times.txt", index + 2, "stop_sequence", "Write a whole number.")
                continue
            }
            // A stop without a time is passed between timed stops: it is not shown.
            let time = row["departure_time"].flatMap { $0.isEmpty ? nil : $0 } ?? row["arrival_time"] ?? ""
            guard !time.isEmpty else { continue }
            guard let seconds = Self.seconds(time) else {
                errors.add(
                    "stop_times.txt", index + 2, "departure_time",
                    "Write the time as HH:MM:SS (past 24:00 after midnight).")
                continue
            }
            byTrip[tripId, default: []].append(
                Call(
                    tripId: tripId, serviceId: trip.service, stopId: stopId, stopSequence: sequence, seconds: seconds,
                    route: trip.route, headsign: trip.headsign))
            if (row["pickup_type"] ?? "") != "1" { pickups[tripId, default: []].insert(sequence) }
        }
        var calls: [Call] = []
        for (tripId, tripCalls) in byTrip {
            let ordered = tripCalls.sorted { $0.stopSequence < $1.stopSequence }
            guard let last = ordered.last else { continue }
            let headsign = ordered[0].headsign.isEmpty ? stopNames[last.stopId] ?? last.stopId : ordered[0].headsign
            for var call in ordered.dropLast() where pickups[tripId]?.contains(call.stopSequence) == true {
                call.headsign = headsign
                calls.append(call)
            }
        }
        if calls.count > Self.maximumCalls {
            errors.add(
                "stop_times.txt", nil, "",
                "The feed has \(calls.count) departures; Quad takes at most \(Self.maximumCalls). Cut it down to the routes that serve the campus."
            )
        }
        try errors.throwIfAny()
        self.init(
            agency: agency, timeZone: zone, stops: stops.sorted { ($0.name, $0.id) < ($1.name, $1.id) },
            services: services, calls: calls)
    }
}

/// The errors found in a feed, each naming its file, row and column (`stops.txt` row 4, `stop_id`), kept to the first
/// hundred.
private struct FeedErrors {
    var errors: [FieldError] = []
    var more = 0

    mutating func add(_ file: String, _ row: Int?, _ column: String, _ message: String) {
        guard errors.count < GTFSSchedule.maximumErrors else {
            more += 1
            return
        }
        errors.append(FieldError(field: column.isEmpty ? file : "\(file) \(column)", message: message, row: row))
    }

    /// The row's value of `column` when it has one, else an error and nil.
    mutating func required(_ row: [String: String], _ file: String, _ index: Int, _ column: String) -> String? {
        if let value = row[column], !value.isEmpty { return value }
        add(file, index + 2, column, "This column needs a value.")
        return nil
    }

    /// A `YYYYMMDD` date.
    mutating func date(_ row: [String: String], _ file: String, _ index: Int, _ column: String) -> LocalDate? {
        let text = row[column] ?? ""
        if text.count == 8, text.allSatisfy(\.isASCII),
            let date = LocalDate("\(text.prefix(4))-\(text.dropFirst(4).prefix(2))-\(text.suffix(2))")
        {
            return date
        }
        add(file, index + 2, column, "Write the date as YYYYMMDD.")
        return nil
    }

    func throwIfAny() throws(ValidationFailure) {
        guard !errors.isEmpty else { return }
        var all = errors
        if more > 0 { all.append(FieldError(field: "", message: "And \(more) more errors.")) }
        throw ValidationFailure(all)
    }
}
