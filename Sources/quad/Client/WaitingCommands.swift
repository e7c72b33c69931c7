import ArgumentParser
import Foundation
import QuadCore
import QuadKit

/// `quad wait ROOM --at 10:00 --for 1h`: waits in line for a room's time that is full.
struct WaitCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "wait",
        abstract: "Wait in line for a room at a time that is full (the seat is held for you when one frees up).")

    @OptionGroup var options: ClientOptions

    @Argument(help: "The room's id or name.")
    var room: String

    @OptionGroup var when: WhenOptions

    @Flag(help: "The whole room rather than one seat.")
    var wholeRoom = false

    func validate() throws {
        if when.at == nil { throw ValidationError("say when with --at (and --for, --on)") }
    }

    func run() async throws {
        try await runClient {
            let context = try ClientContext(options, signedIn: true)
            let place: WaitingPlaceRecord
            let target: Room
            do {
                target = try await resolveRoom(room, client: context.client)
                guard let range = try await when.range(client: context.client, now: context.clock.now) else {
                    throw CLIError.usage("say when with --at")
                }
                place = try await context.client.wait(
                    roomId: target.id, start: range.start, minutes: range.minutes, hold: wholeRoom ? .room : .seat,
                    idempotencyKey: UUID().uuidString)
            } catch let error as CLIError {
                throw error
            } catch {
                throw context.writeError(error, doing: "wait")
            }
            if context.json { return try context.printJSON(place) }
            context.print(
                "In line for \(TerminalText.visible(place.label)): \(TerminalText.ordinal(place.position)). "
                    + "When a seat frees up it is held for the first in line; see `quad offers`.\n")
        }
    }
}

/// `quad offers`: what is held for you (with how to take it), your places in line and your loans.
struct OffersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "offers", abstract: "What is held for you, your places in line, and your loans due.")

    @OptionGroup var options: ClientOptions

    func run() async throws {
        try await runClient {
            let context = try ClientContext(options, signedIn: true)
            let notes: KitNotifications
            do { notes = try await context.client.notifications() } catch {
                throw context.writeError(error, doing: "read your offers")
            }
            if context.json { return try context.printJSON(notes) }
            // Notices say their times on the campus's clock, as bookings do.
            let zone = notes.notices.isEmpty ? nil : try? await context.client.campusTimeZone()
            context.print(
                TerminalText.notifications(
                    notes, now: context.clock.now, campus: CampusClock(timeZone: zone ?? .current), style: context.style
                ))
        }
    }
}

/// `quad accept OFFER`: takes what is held for you (books the seat, checks the book out).
struct AcceptCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "accept", abstract: "Take an offer held for you (its id, from `quad offers`).")

    @OptionGroup var options: ClientOptions

    @Argument(help: "The offer's id.")
    var offer: String

    func validate() throws {
        if PlaceID(offer) == nil { throw ValidationError("an offer's id is 22 letters, digits, - or _") }
    }

    func run() async throws {
        try await runClient {
            let context = try ClientContext(options, signedIn: true)
            let accepted: AcceptedOfferNote
            do {
                accepted = try await context.client.acceptOffer(placeId: offer, idempotencyKey: UUID().uuidString)
            } catch {
                throw context.writeError(error, doing: "accept the offer")
            }
            if context.json {
                struct Output: Encodable {
                    var kind: String
                    var thing: String
                    var path: String
                    var bookingId: String?
                }
                return try context.printJSON(
                    Output(
                        kind: accepted.kind.rawValue, thing: accepted.thing, path: accepted.path,
                        bookingId: accepted.bookingId))
            }
            switch accepted.kind {
            case .room:
                context.print(
                    "Booked: the seat in \(TerminalText.visible(accepted.thing)) is yours (`quad bookings`).\n")
            case .book:
                context.print("Checked out: book \(TerminalText.visible(accepted.thing)) is yours.\n")
            }
        }
    }
}

/// `quad library hold ID`: waits in line for a book on loan.
struct LibraryHold: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hold", abstract: "Wait in line for a book on loan (it is held for you when it comes back).")

    @OptionGroup var options: ClientOptions
    @Argument(help: "The book's id.") var id: Int

    func run() async throws {
        try await runClient {
            let context = try ClientContext(options, signedIn: true)
            let place: WaitingPlaceRecord
            do { place = try await context.client.holdBook(id: id, idempotencyKey: UUID().uuidString) } catch {
                throw context.libraryError(error, doing: "wait for book \(id)")
            }
            if context.json { return try context.printJSON(place) }
            context.print(
                "In line for \"\(TerminalText.visible(place.label))\": \(TerminalText.ordinal(place.position)). "
                    + "It is held for you for two days when it is your turn; see `quad offers`.\n")
        }
    }
}

extension TerminalText {
    /// "1st in line", "2nd in line", "11th in line": the web app's words (`waiting.position`).
    static func ordinal(_ position: Int) -> String {
        Localizer(language: .english)("waiting.position", ordinal: position)
    }

    /// A change to one of the person's places in line, as `quad watch` prints it (nil: nothing to say).
    static func waitingLine(_ change: WaitingEvent, style: TerminalStyle) -> String? {
        let label = visible(change.label)
        switch change.change {
        case .offered:
            let until = change.offeredUntil.flatMap { try? Date($0, strategy: .iso8601) }.map {
                " until " + $0.formatted(Date.FormatStyle().hour(.twoDigits(amPM: .omitted)).minute(.twoDigits))
            }
            return style.paint("Held for you", .green) + ": \(label)\(until ?? ""): quad accept \(change.place)"
        case .lapsed: return "Your offer for \(label) ended; it passed to the next in line."
        case .moved: return change.position.map { "\(label): you are \(ordinal($0))." }
        case .removed: return "An admin took you out of the line for \(label)."
        case .ended: return "The time you waited for is over: \(label)."
        case .joined, .accepted, .left: return nil
        }
    }

    /// What changed without them first (each with its id to dismiss it), then the offers (each with its id to accept
    /// it and until when), then the places in line, then the loans.
    static func notifications(
        _ notes: KitNotifications, now: Date, campus: CampusClock, style: TerminalStyle
    ) -> String {
        var out = ""
        let time = Date.FormatStyle().weekday(.abbreviated).hour(.twoDigits(amPM: .omitted)).minute(.twoDigits)
        if notes.notices.isEmpty && notes.offers.isEmpty && notes.waiting.isEmpty && notes.loans.isEmpty {
            return "Nothing for you right now: no offers, no lines, no loans.\n"
        }
        if !notes.notices.isEmpty {
            // The pages' sentence, in English.
            let t = Localizer(language: .english)
            out += style.paint("What changed", .yellow) + "\n"
            for notice in notes.notices {
                out += "  \(visible(notice.sentence(t, clock: campus))) (dismiss: quad dismiss \(notice.id))\n"
            }
        }
        if !notes.offers.isEmpty {
            out += style.paint("Held for you", .green) + "\n"
            for offer in notes.offers {
                let until = offer.offerEnds.map { " until " + $0.formatted(time) } ?? ""
                out += "  \(visible(offer.label))\(until): quad accept \(offer.id)\n"
            }
        }
        if !notes.waiting.isEmpty {
            out += "In line\n"
            for place in notes.waiting {
                out += "  \(visible(place.label)): \(ordinal(place.position)) (leave: quad leave \(place.id))\n"
            }
        }
        if !notes.loans.isEmpty {
            out += "Your loans\n"
            for loan in notes.loans {
                let standing =
                    switch loan.standing {
                    case .overdue: style.paint("overdue", .red)
                    case .dueToday: style.paint("due today", .yellow)
                    case .dueSoon: style.paint("due soon", .yellow)
                    case .onLoan: "on loan"
                    }
                out +=
                    "  \(visible(loan.title)) (book \(loan.bookId)): due \(loan.dueAt.formatted(time)), \(standing)\n"
            }
        }
        return out
    }
}

/// `quad leave PLACE`: leaves a line (declines its offer).
struct LeaveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "leave", abstract: "Leave a line, or decline an offer (its id, from `quad offers`).")

    @OptionGroup var options: ClientOptions

    @Argument(help: "The place's or offer's id.")
    var place: String

    func validate() throws {
        if PlaceID(place) == nil { throw ValidationError("a place's id is 22 letters, digits, - or _") }
    }

    func run() async throws {
        try await runClient {
            let context = try ClientContext(options, signedIn: true)
            do { try await context.client.leaveLine(placeId: place) } catch {
                throw context.writeError(error, doing: "leave the line")
            }
            if !context.json { context.print("Left the line.\n") }
        }
    }
}

/// `quad dismiss NOTICE`: dismisses a notice (what changed without you, from `quad offers`).
struct DismissCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dismiss", abstract: "Dismiss a notice of what changed without you (its id, from `quad offers`).")

    @OptionGroup var options: ClientOptions

    @Argument(help: "The notice's id.")
    var notice: String

    func validate() throws {
        if NoticeID(notice) == nil { throw ValidationError("a notice's id is 22 letters, digits, - or _") }
    }

    func run() async throws {
        try await runClient {
            let context = try ClientContext(options, signedIn: true)
            do { try await context.client.dismissNotice(id: notice) } catch {
                throw context.writeError(error, doing: "dismiss the notice")
            }
            if !context.json { context.print("Dismissed.\n") }
        }
    }
}
