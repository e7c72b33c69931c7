import Foundation
import QuadCore

/// A person's notifications as the kit reads them (`GET /api/me/notifications`).
public struct KitNotifications: Codable, Sendable, Equatable {
    /// Held for them now, soonest ending first: `offerEnds` says until when.
    public var offers: [WaitingPlaceRecord]
    /// Their places in line (`position` 1 is next).
    public var waiting: [WaitingPlaceRecord]
    public var loans: [LoanNote]
    /// What happened to their bookings and places that they did not do, newest first, until they dismiss it.
    public var notices: [Notice]
    /// The reminder kinds they turned off.
    public var remindersOff: Set<ReminderKind>

    public init(
        offers: [WaitingPlaceRecord] = [], waiting: [WaitingPlaceRecord] = [], loans: [LoanNote] = [],
        notices: [Notice] = [], remindersOff: Set<ReminderKind> = []
    ) {
        self.offers = offers
        self.waiting = waiting
        self.loans = loans
        self.notices = notices
        self.remindersOff = remindersOff
    }
}

/// A loan of theirs and where it stands.
public struct LoanNote: Codable, Sendable, Equatable {
    public var bookId: Int
    public var title: String
    public var dueAt: Date
    public var standing: LoanStanding
}

/// What accepting an offer gave: where to see it (and the booking, for a room).
public struct AcceptedOfferNote: Sendable, Equatable {
    public var kind: WaitingKind
    public var thing: String
    public var path: String
    public var bookingId: String?
}

/// Waiting lines: joining one (a room's time, a book), one's notifications, taking an offer, leaving a line.
extension QuadClient {
    /// Waits in line for a seat (or the whole room) from `start` for `minutes`, while it is full then.
    public func wait(
        roomId: String, start: Date, minutes: Int, hold: Hold = .seat, idempotencyKey: String
    ) async throws -> WaitingPlaceRecord {
        let output = try await call {
            try await api.joinRoomWaitingLine(
                path: .init(roomId: roomId), headers: .init(idempotencyKey: idempotencyKey),
                body: .json(.init(start: start, minutes: minutes, hold: .init(rawValue: hold.rawValue))))
        }
        guard case .created(let created) = output, case .json(let place) = created.body else {
            throw Self.failure(output)
        }
        return place
    }

    /// Waits in line for a book on loan.
    public func holdBook(id: Int, idempotencyKey: String) async throws -> WaitingPlaceRecord {
        let output = try await call {
            try await api.holdBook(path: .init(bookId: id), headers: .init(idempotencyKey: idempotencyKey))
        }
        guard case .created(let created) = output, case .json(let place) = created.body else {
            throw Self.failure(output)
        }
        return place
    }

    public func notifications() async throws -> KitNotifications {
        let output = try await call { try await api.getNotifications() }
        guard case .ok(let ok) = output, case .json(let notes) = ok.body else { throw Self.failure(output) }
        var off = Set<ReminderKind>()
        if !notes.reminders.offers { off.insert(.offers) }
        if !notes.reminders.dueSoon { off.insert(.dueSoon) }
        if !notes.reminders.dueToday { off.insert(.dueToday) }
        if !notes.reminders.overdue { off.insert(.overdue) }
        return KitNotifications(
            offers: notes.offers, waiting: notes.waiting,
            loans: notes.loans.map {
                LoanNote(
                    bookId: $0.bookId, title: $0.title, dueAt: $0.dueAt,
                    standing: LoanStanding(rawValue: $0.standing.rawValue) ?? .onLoan)
            },
            notices: notes.notices, remindersOff: off)
    }

    /// Dismisses one of their notices (404 when it is not theirs).
    public func dismissNotice(id: String) async throws {
        let output = try await call { try await api.dismissNotice(path: .init(noticeId: id)) }
        guard case .noContent = output else { throw Self.failure(output) }
    }

    /// Takes what is held for them; 409 (`KitError.problem`, type `offer-ended`) once the offer has ended.
    public func acceptOffer(placeId: String, idempotencyKey: String) async throws -> AcceptedOfferNote {
        let output = try await call {
            try await api.acceptOffer(path: .init(placeId: placeId), headers: .init(idempotencyKey: idempotencyKey))
        }
        guard case .ok(let ok) = output, case .json(let accepted) = ok.body else { throw Self.failure(output) }
        return AcceptedOfferNote(
            kind: WaitingKind(rawValue: accepted.kind.rawValue) ?? .room, thing: accepted.thing, path: accepted.path,
            bookingId: accepted.bookingId)
    }

    /// Leaves a line (declining its offer, if they hold one).
    public func leaveLine(placeId: String) async throws {
        let output = try await call { try await api.leaveWaitingLine(path: .init(placeId: placeId)) }
        guard case .noContent = output else { throw Self.failure(output) }
    }

    /// Turns off exactly the reminder kinds in `off`.
    public func setReminders(off: Set<ReminderKind>) async throws {
        let output = try await call {
            try await api.setReminders(
                body: .json(
                    .init(
                        offers: !off.contains(.offers), dueSoon: !off.contains(.dueSoon),
                        dueToday: !off.contains(.dueToday), overdue: !off.contains(.overdue))))
        }
        guard case .ok = output else { throw Self.failure(output) }
    }
}
