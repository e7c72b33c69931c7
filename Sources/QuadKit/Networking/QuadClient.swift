import Foundation
import HTTPTypes
import OpenAPIRuntime
import OpenAPIURLSession
import QuadAPI
import QuadCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The session token, shared by the client's requests and whoever signs in or out.
public final class TokenBox: @unchecked Sendable {
    private let lock = NSLock()
    private var value: String?

    public init(_ token: String? = nil) {
        value = token
    }

    public var token: String? {
        get { lock.withLock { value } }
        set { lock.withLock { value = newValue } }
    }
}

/// A booking of the signed-in person, as `GET /api/me/bookings` lists it.
public struct MyBooking: Codable, Sendable, Equatable, Identifiable {
    public var id: String
    public var roomId: String
    public var roomName: String
    public var createdAt: Date
    /// When it starts and ends; nil for a booking made before rooms had time (held until cancelled).
    public var start: Date?
    public var end: Date?
    public var hold: Hold?
    /// Seats held (nil: the whole room, or one for a booking made before rooms had time).
    public var seats: Int?
    public var seriesId: String?
    /// Released at this time unless checked in.
    public var checkInBy: Date?
    public var checkedIn: Bool?

    public init(
        id: String, roomId: String, roomName: String, createdAt: Date, start: Date? = nil, end: Date? = nil,
        hold: Hold? = nil, seats: Int? = nil, seriesId: String? = nil, checkInBy: Date? = nil, checkedIn: Bool? = nil
    ) {
        self.id = id
        self.roomId = roomId
        self.roomName = roomName
        self.createdAt = createdAt
        self.start = start
        self.end = end
        self.hold = hold
        self.seats = seats
        self.seriesId = seriesId
        self.checkInBy = checkInBy
        self.checkedIn = checkedIn
    }

    /// Whether it can be checked in at `now`: from a quarter hour before it starts until it ends, once.
    public func canCheckIn(at now: Date) -> Bool {
        guard let start, let end, checkedIn != true else { return false }
        return CheckInWindow.isOpen(start: start, end: end, at: now)
    }
}

/// A booking at a time: when, how long, what, and how often.
public struct TimedBooking: Sendable, Equatable {
    public var start: Date
    public var minutes: Int
    public var hold: Hold
    /// Seats for a group (with `hold: .seat`).
    public var seats: Int
    /// Every day or week until a date (campus time), if repeated.
    public var repeats: (frequency: Recurrence.Frequency, until: LocalDate)?

    public init(
        start: Date, minutes: Int, hold: Hold = .seat, seats: Int = 1,
        repeats: (frequency: Recurrence.Frequency, until: LocalDate)? = nil
    ) {
        self.start = start
        self.minutes = minutes
        self.hold = hold
        self.seats = seats
        self.repeats = repeats
    }

    public static func == (a: TimedBooking, b: TimedBooking) -> Bool {
        a.start == b.start && a.minutes == b.minutes && a.hold == b.hold && a.seats == b.seats
            && a.repeats?.frequency == b.repeats?.frequency
            && a.repeats?.until == b.repeats?.until
    }
}

/// The rooms that fit a time and a number of people, and when the others are next free (`GET /api/free-rooms`).
public struct FoundRooms: Sendable, Equatable, Codable {
    public struct Room: Sendable, Equatable, Codable {
        public var id: String
        public var name: String
        public var freeSeats: Int
        public var nextFree: Date?
        /// How the group fits, among `fitting`: in seats, or as the whole room.
        public var hold: Hold?
    }

    public var fitting: [Room]
    public var others: [Room]
}

/// A response and whether it came from the ETag cache after a 304.
public struct Fetched<Value: Sendable>: Sendable {
    public var value: Value
    /// True when the server said "not modified" and the cached body was used.
    public var revalidated: Bool
    public var etag: String?
}

/// Quad's API for apps: the client generated from `openapi.yaml` over URLSession, behind the kit's
/// middleware (idempotency keys, retries with backoff, bearer auth, ETag revalidation), plus the raw routes
/// the generator does not cover (`GET /api/rooms`, images) through the same middleware.
public final class QuadClient: Sendable {
    public struct Options: Sendable {
        public var clock: any KitClock = SystemClock()
        public var retry: RetryMiddleware?
        /// Middleware run innermost (after auth and ETag), e.g. to observe or disturb requests in tests.
        public var extraMiddlewares: [any ClientMiddleware] = []
        public var timeout: TimeInterval = 20
        /// Where the ETag cache keeps responses between launches (nil: memory only). `KitSession(serverURL:)`
        /// and the `quad` command line put it beside the offline store.
        public var cacheDirectory: URL?

        public init() {}
    }

    public let serverURL: URL
    public let tokens: TokenBox
    public let etags: ETagCache
    /// The generated client, for operations the kit has no helper for yet.
    public let api: Client
    let transport: any ClientTransport
    let middlewares: [any ClientMiddleware]
    public let clock: any KitClock

    public init(serverURL: URL, token: String? = nil, options: Options = Options()) {
        self.serverURL = serverURL
        self.tokens = TokenBox(token)
        self.clock = options.clock
        self.etags = ETagCache(directory: options.cacheDirectory)
        let configuration = URLSessionConfiguration.ephemeral
        // The kit revalidates with its own cache; URLSession's (which on Linux ignores no-cache) stays out.
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.timeoutIntervalForRequest = options.timeout
        let session = URLSession(configuration: configuration)
        transport = URLSessionTransport(configuration: .init(session: session))
        let tokens = tokens
        middlewares =
            [
                IdempotencyMiddleware(),
                options.retry ?? RetryMiddleware(clock: options.clock),
                AuthMiddleware { tokens.token },
                ETagMiddleware(cache: etags),
            ] + options.extraMiddlewares
        api = Client(serverURL: serverURL, transport: transport, middlewares: middlewares)
    }

    /// Sends a request through the same middleware as the generated client.
    public func send(
        _ request: HTTPRequest, body: HTTPBody? = nil, baseURL: URL? = nil, operationID: String
    ) async throws -> (HTTPResponse, HTTPBody?) {
        let transport = transport
        var next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?) = {
            try await transport.send($0, body: $1, baseURL: $2, operationID: operationID)
        }
        for middleware in middlewares.reversed() {
            let inner = next
            next = { try await middleware.intercept($0, body: $1, baseURL: $2, operationID: operationID, next: inner) }
        }
        do {
            return try await next(request, body, baseURL ?? serverURL)
        } catch {
            throw KitError.from(error)
        }
    }

    /// GET of a raw route: the body, whether it was served from the ETag cache, and the ETag.
    public func get(path: String, operationID: String) async throws -> Fetched<Data> {
        let (response, body) = try await send(
            HTTPRequest(
                method: .get, scheme: nil, authority: nil, path: path, headerFields: [.accept: "application/json"]),
            operationID: operationID)
        let data = if let body { try await Data(collecting: body, upTo: 32 * 1024 * 1024) } else { Data() }
        guard response.status.code == 200 else { throw Self.problem(status: response.status.code, body: data) }
        return Fetched(
            value: data, revalidated: response.headerFields[.quadKitCache] != nil, etag: response.headerFields[.eTag])
    }

    /// Bytes at an absolute URL (an image), with retries.
    public func download(_ url: URL) async throws -> Data {
        guard var parts = URLComponents(url: url, resolvingAgainstBaseURL: true) else {
            throw KitError.unexpected("Not a URL: \(url)")
        }
        let path = parts.percentEncodedPath + (parts.percentEncodedQuery.map { "?" + $0 } ?? "")
        parts.path = ""
        parts.query = nil
        let base = parts.url ?? serverURL
        let (response, body) = try await send(
            HTTPRequest(method: .get, scheme: nil, authority: nil, path: path), baseURL: base,
            operationID: "getImage")
        let data = if let body { try await Data(collecting: body, upTo: 64 * 1024 * 1024) } else { Data() }
        guard response.status.code == 200 else { throw Self.problem(status: response.status.code, body: data) }
        return data
    }

    // MARK: Accounts

    /// Signs in; the token is kept for later calls and returned so it can be saved.
    public func signIn(username: String, password: String) async throws -> (token: String, person: Person) {
        let output = try await call {
            try await api.createSession(body: .json(.init(username: username, password: password)))
        }
        guard case .created(let created) = output, case .json(let session) = created.body else {
            throw Self.failure(output)
        }
        tokens.token = session.token
        return (session.token, Person(session.person))
    }

    public func signOut() async throws {
        let output = try await call { try await api.endSession() }
        tokens.token = nil
        switch output {
        case .noContent, .unauthorized: return
        default: throw Self.failure(output)
        }
    }

    public func me() async throws -> Person {
        let output = try await call { try await api.getMe() }
        guard case .ok(let ok) = output, case .json(let person) = ok.body else { throw Self.failure(output) }
        return Person(person)
    }

    // MARK: Rooms

    /// `GET /api/rooms` (a raw route, so not in the generated client), decoded with QuadCore's `Room`.
    public func rooms(minSpots: Int? = nil, building: String? = nil) async throws -> Fetched<[Room]> {
        var query = URLComponents()
        var items: [URLQueryItem] = []
        if let minSpots { items.append(URLQueryItem(name: "minSpots", value: String(minSpots))) }
        if let building { items.append(URLQueryItem(name: "building", value: building)) }
        query.queryItems = items.isEmpty ? nil : items
        let fetched = try await get(
            path: "/api/rooms" + (query.percentEncodedQuery.map { "?" + $0 } ?? ""), operationID: "listRooms")
        struct RoomList: Decodable { var rooms: [Room] }
        do {
            let list = try JSONDecoder().decode(RoomList.self, from: fetched.value)
            return Fetched(value: list.rooms, revalidated: fetched.revalidated, etag: fetched.etag)
        } catch {
            throw KitError.unexpected("The rooms could not be read: \(error)")
        }
    }

    /// Books a spot; `idempotencyKey` identifies the user's intent, so repeating it never books twice.
    public func book(roomId: String, idempotencyKey: String) async throws -> (booking: Booking, spots: Int) {
        let output = try await call {
            try await api.bookRoom(
                path: .init(roomId: roomId), headers: .init(idempotencyKey: idempotencyKey), body: .json(.init()))
        }
        guard case .created(let created) = output, case .json(let result) = created.body else {
            throw Self.failure(output)
        }
        return (Self.booking(result.booking), result.spots)
    }

    /// Books `timed` (a series when it repeats); returns the booking (a series' first date), the room's free seats
    /// now, and per date what became of a series.
    public func book(
        roomId: String, _ timed: TimedBooking, idempotencyKey: String
    ) async throws -> (booking: Booking, spots: Int, outcomes: [OccurrenceOutcome]) {
        let body = Components.Schemas.BookingInput(
            start: timed.start, minutes: timed.minutes, hold: .init(rawValue: timed.hold.rawValue),
            seats: timed.hold == .seat && timed.seats != 1 ? timed.seats : nil,
            _repeat: timed.repeats.map {
                .init(every: $0.frequency == .daily ? .day : .week, until: $0.until.description)
            })
        let output = try await call {
            try await api.bookRoom(
                path: .init(roomId: roomId), headers: .init(idempotencyKey: idempotencyKey), body: .json(body))
        }
        guard case .created(let created) = output, case .json(let result) = created.body else {
            throw Self.failure(output)
        }
        let outcomes = (result.series?.outcomes ?? []).compactMap { outcome in
            LocalDate(outcome.date).map {
                OccurrenceOutcome(
                    date: $0, result: OccurrenceOutcome.Result(rawValue: outcome.result.rawValue) ?? .unavailable,
                    reason: outcome.reason)
            }
        }
        return (Self.booking(result.booking), result.spots, outcomes)
    }

    /// Checks in the person's booking (from a quarter hour before it starts until it ends).
    public func checkIn(roomId: String, bookingId: String) async throws -> Booking {
        let output = try await call {
            try await api.checkInBooking(path: .init(roomId: roomId, bookingId: bookingId))
        }
        guard case .ok(let ok) = output, case .json(let booking) = ok.body else { throw Self.failure(output) }
        return Self.booking(booking)
    }

    /// The rooms with seats for `people` from `start` for `minutes`, and when the others are next free.
    public func findRooms(start: Date, minutes: Int, people: Int) async throws -> FoundRooms {
        let output = try await call {
            try await api.findRooms(query: .init(start: start, minutes: minutes, people: people))
        }
        guard case .ok(let ok) = output, case .json(let found) = ok.body else { throw Self.failure(output) }
        let room = { (room: Components.Schemas.FoundRoom) in
            FoundRooms.Room(
                id: room.id, name: room.name, freeSeats: room.freeSeats, nextFree: room.nextFree,
                hold: room.hold.flatMap { Hold(rawValue: $0.rawValue) })
        }
        return FoundRooms(fitting: found.fitting.map(room), others: found.others.map(room))
    }

    /// The campus's time zone, in which opening hours and booking times are read.
    public func campusTimeZone() async throws -> TimeZone {
        let output = try await call { try await api.listBuildings() }
        guard case .ok(let ok) = output, case .json(let list) = ok.body, let zone = TimeZone(identifier: list.timeZone)
        else { throw Self.failure(output) }
        return zone
    }

    static func booking(_ booking: Components.Schemas.Booking) -> Booking {
        Booking(
            id: booking.id, roomId: booking.roomId, person: booking.person,
            createdAt: ISO8601DateFormatter().string(from: booking.createdAt), start: booking.start, end: booking.end,
            hold: booking.hold.flatMap { Hold(rawValue: $0.rawValue) }, seats: booking.seats,
            seriesId: booking.seriesId, checkInBy: booking.checkInBy, checkedIn: booking.checkedIn)
    }

    /// Cancels a booking; with `following`, the later dates of its series too.
    public func cancel(roomId: String, bookingId: String, following: Bool = false) async throws {
        let output = try await call {
            try await api.cancelBooking(
                path: .init(roomId: roomId, bookingId: bookingId), query: .init(following: following ? true : nil))
        }
        guard case .noContent = output else { throw Self.failure(output) }
    }

    public func myBookings() async throws -> [MyBooking] {
        let output = try await call { try await api.listMyBookings() }
        guard case .ok(let ok) = output, case .json(let list) = ok.body else { throw Self.failure(output) }
        return list.bookings.map {
            MyBooking(
                id: $0.id, roomId: $0.roomId, roomName: $0.roomName, createdAt: $0.createdAt, start: $0.start,
                end: $0.end, hold: $0.hold.flatMap { Hold(rawValue: $0.rawValue) }, seats: $0.seats,
                seriesId: $0.seriesId,
                checkInBy: $0.checkInBy, checkedIn: $0.checkedIn)
        }
    }

    // MARK: Errors

    func call<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch {
            throw KitError.from(error)
        }
    }

    /// A `KitError` for an output the caller did not expect: the problem's detail when the server sent one.
    static func failure<T>(_ output: T) -> KitError {
        guard let child = Mirror(reflecting: output).children.first else {
            return .unexpected("The server's answer was not understood.")
        }
        if let response = child.value as? Components.Responses.Problem,
            case .applicationProblemJson(let problem) = response.body
        {
            let detail = problem.detail ?? problem.title
            if problem.status == 401 { return .unauthorized("Not signed in: \(detail) (run `quad login`)") }
            return .problem(status: problem.status, type: problem._type, detail: detail)
        }
        let status = Mirror(reflecting: child.value).children.first { $0.label == "statusCode" }?.value as? Int
        return .unexpected("The server answered \(status.map(String.init) ?? child.label ?? "something unexpected").")
    }

    /// A `KitError` from a raw response's status and problem+json body.
    static func problem(status: Int, body: Data) -> KitError {
        struct Problem: Decodable {
            var type: String?
            var title: String?
            var detail: String?
            var errors: [FieldError]?
        }
        let problem = try? JSONDecoder().decode(Problem.self, from: body)
        let detail = problem?.detail ?? problem?.title ?? "The server answered \(status)."
        if status == 401 { return .unauthorized("Not signed in: \(detail)") }
        if status == 422 || (status == 400 && problem?.errors != nil) {
            return .invalid(detail: detail, errors: problem?.errors ?? [])
        }
        return .problem(status: status, type: problem?.type ?? "about:blank", detail: detail)
    }
}

extension Person {
    init(_ person: Components.Schemas.Person) {
        self.init(
            username: person.username, displayName: person.displayName,
            role: Role(rawValue: person.role.rawValue) ?? .member, studentId: person.studentId)
    }
}
