import ArgumentParser
import Foundation
import QuadCore
import QuadKit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `quad login`: signs in and keeps the token for this server.
struct Login: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Sign in; the token is kept in the config folder (mode 0600) for later commands.")

    @OptionGroup var options: ClientOptions

    @Option(help: "Your username (asked when absent).")
    var username: String?

    @Flag(help: "Read the password from the first line of standard input.")
    var passwordStdin = false

    @Flag(help: "Sign in with the organisation's account, in the browser (Quad sends the answer back to this machine).")
    var sso = false

    @Flag(help: "With --sso: print the address to open rather than opening the browser.")
    var noBrowser = false

    func run() async throws {
        try await runClient {
            let context = try ClientContext(options)
            if sso {
                let person = try await OrganisationLogin(context: context, openBrowser: !noBrowser).run()
                try save(person, context: context)
                return
            }
            guard let username = username ?? prompt("Username: ")?.trimmingCharacters(in: .whitespaces),
                !username.isEmpty
            else { throw CLIError.usage("a username is needed (--username)") }
            let password: String? =
                if passwordStdin || isatty(STDIN_FILENO) != 1 { readLine(strippingNewline: true) } else {
                    getpass("Password: ").map { String(cString: $0) }
                }
            guard let password, !password.isEmpty else { throw CLIError.usage("a password is needed") }
            try save(try await context.client.signIn(username: username, password: password), context: context)
        }
    }

    /// Keeps the token for this server and says who is signed in.
    private func save(_ session: (token: String, person: Person), context: ClientContext) throws {
        var credentials = Credentials.load()
        credentials.servers[Credentials.key(context.serverURL)] = .init(
            token: session.token, username: session.person.username)
        try credentials.save()
        if context.json {
            try context.printJSON(session.person)
        } else {
            context.print(
                "Signed in to \(context.serverURL.absoluteString) as \(TerminalText.visible(session.person.displayName)).\n"
            )
        }
    }

    private func prompt(_ text: String) -> String? {
        FileHandle.standardError.write(Data(text.utf8))
        return readLine()
    }
}

/// `quad logout`: ends the session and forgets the token.
struct Logout: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Sign out and forget the kept token.")

    @OptionGroup var options: ClientOptions

    func run() async throws {
        try await runClient {
            let context = try ClientContext(options)
            var credentials = Credentials.load()
            let key = Credentials.key(context.serverURL)
            guard credentials.servers[key] != nil else { throw CLIError.failed("not signed in to \(key)") }
            try? await context.client.signOut()
            credentials.servers[key] = nil
            try credentials.save()
            // What was theirs (bookings, timetable, kept responses) goes too; public data stays for offline use.
            await KitSession.forgetPersonalData(client: context.client, offline: context.offline)
            if !context.json { context.print("Signed out.\n") }
        }
    }
}

/// What `quad rooms --json` prints.
struct RoomsOutput: Encodable {
    var rooms: [Room]
    var offline: Bool
    var updatedAt: Date?
}

/// `quad rooms`: the rooms, most free spots first; offline, the last ones seen with their age.
struct RoomsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rooms", abstract: "List rooms, most free spots first (cached ones when offline).")

    @OptionGroup var options: ClientOptions

    @Option(help: "Only rooms with at least this many free spots.")
    var minSpots: Int?

    @Option(help: "Only rooms in this building.")
    var building: String?

    @OptionGroup var when: WhenOptions

    @Option(help: "With --at: rooms with seats for this many people (1 when absent).")
    var people: Int?

    func validate() throws {
        if let minSpots, minSpots < 0 { throw ValidationError("--min-spots must be 0 or more") }
        if let people, people < 1 { throw ValidationError("--people must be 1 or more") }
        if people != nil, when.at == nil { throw ValidationError("--people goes with --at") }
    }

    func run() async throws {
        try await runClient {
            let context = try ClientContext(options)
            // A time asked: the rooms that fit it, most room first, and when the others are next free.
            if let range = try await when.range(client: context.client, now: context.clock.now) {
                let found = try await context.client.findRooms(
                    start: range.start, minutes: range.minutes, people: people ?? 1)
                if context.json { return try context.printJSON(found) }
                let campus = CampusClock(timeZone: try await context.client.campusTimeZone())
                return context.print(TerminalText.foundTable(found, campus: campus, style: context.style))
            }
            let fetched = try await context.fetchOrCached("rooms", noun: "rooms") {
                try await context.client.rooms().value
            }
            let offline = fetched.offline
            let rooms = Room.sortedForBooking(Room.filtered(fetched.value, minSpots: minSpots, building: building))
            var booked: Set<String> = []
            if !offline, context.client.tokens.token != nil,
                let mine = try? await context.client.myBookings()
            {
                booked = Set(mine.map(\.roomId))
            }
            if context.json {
                try context.printJSON(RoomsOutput(rooms: rooms, offline: offline, updatedAt: fetched.updatedAt))
                return
            }
            if offline { context.noteOffline("rooms", savedAt: fetched.updatedAt) }
            context.print(TerminalText.roomsTable(rooms, booked: booked, style: context.style))
        }
    }
}

/// `quad book ROOM`.
struct BookCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "book", abstract: "Book a spot in a room (by id or name).")

    @OptionGroup var options: ClientOptions

    @Argument(help: "The room's id or name.")
    var room: String

    @OptionGroup var when: WhenOptions

    @Flag(help: "With --at: the whole room rather than one seat.")
    var wholeRoom = false

    @Option(help: "With --at: a seat for each of this many people (1 when absent).")
    var people: Int?

    @Option(help: "With --at: repeat every day or week.")
    var every: String?

    @Option(help: "With --every: the last date (YYYY-MM-DD).")
    var until: String?

    func validate() throws {
        if every != nil || until != nil || wholeRoom || people != nil, when.at == nil {
            throw ValidationError("--whole-room, --people, --every and --until go with --at")
        }
        if let people, people < 1 { throw ValidationError("--people must be 1 or more") }
        if people != nil, wholeRoom { throw ValidationError("--people books seats; --whole-room books the room") }
        if let every, !["day", "week"].contains(every) { throw ValidationError("--every takes day or week") }
        if (every == nil) != (until == nil) { throw ValidationError("--every and --until go together") }
        if let until, LocalDate(until) == nil { throw ValidationError("--until takes a date such as 2026-12-24") }
    }

    func run() async throws {
        try await runClient {
            let context = try ClientContext(options, signedIn: true)
            let target: Room
            do { target = try await resolveRoom(room, client: context.client) } catch let error as CLIError {
                throw error
            } catch { throw context.writeError(error, doing: "book") }
            if let range = try await when.range(client: context.client, now: context.clock.now) {
                return try await bookInTime(target, range, context)
            }
            // One key for this intent: the client's retries repeat it, so a lost answer never books twice.
            let result: (booking: Booking, spots: Int)
            do {
                result = try await context.client.book(roomId: target.id, idempotencyKey: UUID().uuidString)
            } catch {
                throw context.writeError(error, doing: "book")
            }
            if context.json {
                struct Output: Encodable {
                    var booking: Booking
                    var spots: Int
                }
                try context.printJSON(Output(booking: result.booking, spots: result.spots))
            } else {
                context.print(
                    "Booked a spot in \(TerminalText.visible(target.name)) (\(TerminalText.visible(target.building))); \(result.spots) left. Booking \(result.booking.id).\n"
                )
            }
        }
    }
}

extension BookCommand {
    /// `quad book ROOM --at 10:00 --for 30m [--every week --until DATE]`.
    func bookInTime(_ target: Room, _ range: (start: Date, minutes: Int), _ context: ClientContext) async throws {
        let repeats = every.flatMap { every in
            until.flatMap(LocalDate.init).map { (every == "day" ? Recurrence.Frequency.daily : .weekly, $0) }
        }
        let timed = TimedBooking(
            start: range.start, minutes: range.minutes, hold: wholeRoom ? .room : .seat, seats: people ?? 1,
            repeats: repeats)
        let result: (booking: Booking, spots: Int, outcomes: [OccurrenceOutcome])
        do {
            result = try await context.client.book(roomId: target.id, timed, idempotencyKey: UUID().uuidString)
        } catch {
            throw context.writeError(error, doing: "book")
        }
        if context.json {
            struct Output: Encodable {
                var booking: Booking
                var spots: Int
                var outcomes: [OccurrenceOutcome]
            }
            return try context.printJSON(
                Output(booking: result.booking, spots: result.spots, outcomes: result.outcomes))
        }
        let campus = CampusClock(timeZone: try await context.client.campusTimeZone())
        let start = result.booking.start ?? range.start
        let end = result.booking.end ?? start.addingTimeInterval(Double(range.minutes * 60))
        let seats = result.booking.seats ?? 1
        let what = wholeRoom ? "the whole of" : seats == 1 ? "a seat in" : "\(seats) seats in"
        context.print(
            "Booked \(what) \(TerminalText.visible(target.name)) on \(campus.date(of: start)), \(campus.time(of: start))–\(campus.time(of: end)). Booking \(result.booking.id).\n"
        )
        for outcome in result.outcomes where outcome.result != .booked {
            context.print(
                "  \(outcome.date): not booked (\(outcome.result.rawValue)\(outcome.reason.map { ": " + TerminalText.visible($0) } ?? ""))\n"
            )
        }
        if let checkInBy = result.booking.checkInBy {
            context.print("Check in by \(campus.time(of: checkInBy)) (`quad checkin`), or it is released.\n")
        }
    }
}

/// `quad cancel ROOM`: cancels your booking in that room.
struct CancelCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cancel", abstract: "Cancel your booking in a room (by id or name).")

    @OptionGroup var options: ClientOptions

    @Argument(help: "The room's id or name.")
    var room: String

    func run() async throws {
        try await runClient {
            let context = try ClientContext(options, signedIn: true)
            let booking: MyBooking
            do {
                let mine = try await context.client.myBookings()
                guard
                    let found = mine.first(where: {
                        $0.roomId == room || $0.roomName.caseInsensitiveCompare(room) == .orderedSame
                    })
                else { throw CLIError.failed("you have no booking in \"\(room)\"") }
                booking = found
                try await context.client.cancel(roomId: found.roomId, bookingId: found.id)
            } catch let error as CLIError {
                throw error
            } catch {
                throw context.writeError(error, doing: "cancel")
            }
            if context.json {
                try context.printJSON(booking)
            } else {
                context.print("Cancelled your booking in \(TerminalText.visible(booking.roomName)).\n")
            }
        }
    }
}

/// `quad watch rooms`: the rooms, then each change as it happens (live events; Ctrl-C stops).
struct Watch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Follow live changes (quad watch rooms); signed in, offers held for you show too.")

    @OptionGroup var options: ClientOptions

    @Argument(help: "What to watch: rooms.")
    var what: String

    func validate() throws {
        guard what == "rooms" else { throw ValidationError("quad watch knows: rooms") }
    }

    func run() async throws {
        try await runClient {
            let context = try ClientContext(options)
            // Offline, the last rooms seen with their age; the stream reconnects by itself (with backoff) and
            // the table is drawn afresh once the server is back.
            let fetched = try await context.fetchOrCached("rooms", noun: "rooms") {
                try await context.client.rooms().value
            }
            let startedOffline = fetched.offline
            var rooms = Self.byId(fetched.value)
            if startedOffline, !context.json { context.noteOffline("rooms", savedAt: fetched.updatedAt) }
            if !context.json {
                context.print(TerminalText.roomsTable(Room.sortedForBooking(Array(rooms.values)), style: context.style))
                if startedOffline {
                    context.note("Waiting for the server, then watching for changes (Ctrl-C to stop)…")
                }
            }
            // Signed in, the stream is theirs: offers made to them (`waiting` events) and what changed without them
            // (`notice` events) come on it, and only on theirs.
            let events = EventStreamClient(
                serverURL: context.serverURL, types: [.room, .waiting, .notice, .reset],
                tokens: context.client.tokens.token == nil ? nil : context.client.tokens)
            // Events and the connection's status, in one sequence, so one loop owns the table.
            enum Update {
                case event(ServerEvent)
                case status(EventStreamClient.Status)
            }
            let (updates, sink) = AsyncStream<Update>.makeStream()
            let stream = await events.events()
            let statuses = await events.statusUpdates()
            let forwarders = [
                Task { for await event in stream { sink.yield(.event(event)) } },
                Task { for await status in statuses { sink.yield(.status(status)) } },
            ]
            defer { for forwarder in forwarders { forwarder.cancel() } }
            await events.start()
            let time = Date.FormatStyle().hour(.twoDigits(amPM: .omitted)).minute(.twoDigits).second(.twoDigits)
            var wasConnected = false
            var needsReload = startedOffline
            // Said once the stream is open, so that from then on no change can be missed.
            var watching = startedOffline || context.json
            for await update in updates {
                let event: ServerEvent
                switch update {
                case .status(.connected):
                    wasConnected = true
                    if !watching {
                        watching = true
                        context.note("Watching for changes (Ctrl-C to stop)…")
                    }
                    guard needsReload, let fresh = try? await context.client.rooms().value else { continue }
                    needsReload = false
                    try? context.offline.save(fresh, for: "rooms", at: context.clock.now)
                    rooms = Self.byId(fresh)
                    if !context.json {
                        context.note("Back online.")
                        context.print(TerminalText.roomsTable(Room.sortedForBooking(fresh), style: context.style))
                    }
                    continue
                case .status(.disconnected):
                    if wasConnected, !context.json { context.note("Connection lost; reconnecting…") }
                    wasConnected = false
                    continue
                case .status:
                    continue
                case .event(let received):
                    event = received
                }
                if context.json {
                    struct Line: Encodable {
                        var id: String?
                        var type: String
                        var data: String
                    }
                    let encoder = JSONEncoder()
                    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
                    let line = try encoder.encode(Line(id: event.id, type: event.type, data: event.data))
                    context.print(String(decoding: line, as: UTF8.self) + "\n")
                    continue
                }
                if event.kind == .notice, let change = event.decode(NoticeEvent.self) {
                    if change.change == .posted {
                        context.print(
                            "\(context.clock.now.formatted(time))  Something changed without you: `quad offers` says what.\n"
                        )
                    }
                    continue
                }
                if event.kind == .waiting, let change = event.decode(WaitingEvent.self) {
                    if let line = TerminalText.waitingLine(change, style: context.style) {
                        context.print("\(context.clock.now.formatted(time))  \(line)\n")
                    }
                    continue
                }
                guard event.kind == .room, let change = event.decode(RoomEvent.self) else {
                    if event.kind == .reset, let fresh = try? await context.client.rooms().value {
                        rooms = Self.byId(fresh)
                        context.print(TerminalText.roomsTable(Room.sortedForBooking(fresh), style: context.style))
                    }
                    continue
                }
                let stamp = context.clock.now.formatted(time)
                if let spots = change.spots, let room = rooms[change.id] {
                    let updated = Room(
                        id: room.id, name: room.name, building: room.building, capacity: room.capacity, spots: spots,
                        thumbnail: room.thumbnail)
                    rooms[room.id] = updated
                    let status =
                        switch updated.availability {
                        case .bookable: context.style.paint("available", .green)
                        case .runningLow: context.style.paint("running low", .yellow)
                        case .full: context.style.paint("full", .red)
                        }
                    context.print(
                        "\(stamp)  \(TerminalText.visible(updated.name)): \(spots) of \(updated.capacity) free, \(status)\n"
                    )
                } else {
                    context.print(
                        "\(stamp)  \(TerminalText.visible(change.id)): \(change.change.rawValue)\n")
                    if let fresh = try? await context.client.rooms().value { rooms = Self.byId(fresh) }
                }
            }
        }
    }

    static func byId(_ rooms: [Room]) -> [String: Room] {
        Dictionary(rooms.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
    }
}
