import Foundation

/// Where and how often Quad reads the transit operator's GTFS-Realtime TripUpdates, and how long it believes them.
public struct GTFSRealtimeSettings: Sendable, Equatable {
    /// `QUAD_GTFS_RT_URL`: the feed (http or https; an operator's key may sit in its query, so it is never logged).
    public var url: URL
    /// `QUAD_GTFS_RT_EVERY`: seconds between reads (default 30, as operators refresh their feeds).
    public var every = 30
    /// `QUAD_GTFS_RT_STALE_AFTER`: seconds after the feed's data was made past which its predictions are not believed
    /// and the departures read "Scheduled" (default 90: three reads missed).
    public var staleAfter = 90

    public init(url: URL) { self.url = url }
}

extension ServerConfiguration {
    mutating func readGTFSRealtime(
        raw: (Setting) -> (value: String, name: String)?,
        parse: (Setting, String, (String) -> String?) throws -> String?
    ) throws {
        guard let (value, name) = raw(.gtfsRealtimeURL) else {
            for setting in [Setting.gtfsRealtimeEvery, .gtfsRealtimeStaleAfter] where raw(setting) != nil {
                throw ConfigurationError(setting: setting.variable, message: "it needs QUAD_GTFS_RT_URL")
            }
            return
        }
        // The message never repeats the address: its query may hold the operator's key.
        guard let components = URLComponents(string: value.trimmingCharacters(in: .whitespaces)),
            ["http", "https"].contains(components.scheme?.lowercased() ?? ""), components.host?.isEmpty == false,
            let url = components.url
        else { throw ConfigurationError(setting: name, message: "it is not an http:// or https:// address") }
        var settings = GTFSRealtimeSettings(url: url)
        func seconds(_ setting: Setting, _ range: ClosedRange<Int>) throws -> Int? {
            try parse(setting, "a whole number of seconds from \(range.lowerBound) to \(range.upperBound)") {
                Int($0).flatMap { range.contains($0) ? String($0) : nil }
            }.flatMap(Int.init)
        }
        if let every = try seconds(.gtfsRealtimeEvery, 1...3600) { settings.every = every }
        if let staleAfter = try seconds(.gtfsRealtimeStaleAfter, 2...86400) { settings.staleAfter = staleAfter }
        guard settings.staleAfter > settings.every else {
            throw ConfigurationError(
                setting: Setting.gtfsRealtimeStaleAfter.variable,
                message: "it must be longer than QUAD_GTFS_RT_EVERY (\(settings.every) s), or every read would be stale"
            )
        }
        gtfsRealtime = settings
    }
}
