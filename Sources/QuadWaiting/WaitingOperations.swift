import Foundation
import OpenAPIRuntime
import QuadCore
import QuadPlatform
import QuadWaitingLines

/// The waiting lines' operations that are the same for every kind: a person's notifications, offers and reminders,
/// and the admins' view of every line. Joining a line is the feature's that keeps it (`joinRoomWaitingLine`,
/// `holdBook`).
struct WaitingOperations: APIProtocol {
    let waiting: Waiting
}

extension WaitingOperations {

    func getNotifications(_ input: Operations.GetNotifications.Input) async throws -> Operations.GetNotifications.Output
    {
        let person = try Access.person()
        let notes = try await waiting.notifications(of: person.username)
        return .ok(
            .init(
                body: .json(
                    .init(
                        notices: notes.notices, offers: notes.offers.map { .init($0, position: 1) },
                        waiting: notes.waiting.map { .init($0.place, position: $0.position) },
                        loans: notes.loans.map {
                            .init(
                                bookId: $0.loan.bookId, title: $0.loan.title, dueAt: $0.loan.dueAt,
                                standing: .init(rawValue: $0.standing.rawValue) ?? .onLoan)
                        },
                        reminders: .init(off: notes.off)))))
    }

    func setReminders(_ input: Operations.SetReminders.Input) async throws -> Operations.SetReminders.Output {
        let person = try Access.person()
        guard case .json(let body) = input.body else { throw Problem.malformedBody("Send the reminders as JSON.") }
        var off = Set<ReminderKind>()
        if !body.offers { off.insert(.offers) }
        if !body.dueSoon { off.insert(.dueSoon) }
        if !body.dueToday { off.insert(.dueToday) }
        if !body.overdue { off.insert(.overdue) }
        try await waiting.lines.setRemindersOff(off, for: person.username)
        return .ok(.init(body: .json(.init(off: off))))
    }

    func leaveWaitingLine(_ input: Operations.LeaveWaitingLine.Input) async throws -> Operations.LeaveWaitingLine.Output
    {
        try await waiting.lines.leave(try WaitingAPI.placeId(input.path.placeId), by: try Access.person())
        return .noContent(.init())
    }

    func dismissNotice(_ input: Operations.DismissNotice.Input) async throws -> Operations.DismissNotice.Output {
        try await waiting.lines.dismiss(try WaitingAPI.noticeId(input.path.noticeId), by: try Access.person())
        return .noContent(.init())
    }

    func acceptOffer(_ input: Operations.AcceptOffer.Input) async throws -> Operations.AcceptOffer.Output {
        let accepted = try await waiting.lines.accept(
            try WaitingAPI.placeId(input.path.placeId), by: try Access.person())
        return .ok(
            .init(
                body: .json(
                    .init(
                        kind: .init(rawValue: accepted.kind.rawValue) ?? .room, thing: accepted.thing,
                        path: accepted.path, bookingId: accepted.bookingId))))
    }

    func listWaitingLines(_ input: Operations.ListWaitingLines.Input) async throws -> Operations.ListWaitingLines.Output
    {
        let lines = try await waiting.lines.lines()
        return .ok(
            .init(
                body: .json(
                    .init(
                        lines: lines.map { line in
                            let first = line.places[0]
                            return .init(
                                kind: .init(rawValue: first.kind.rawValue) ?? .room, thing: first.thing,
                                label: first.label,
                                people: line.places.enumerated().map { index, place in
                                    .init(
                                        id: place.id, username: place.owner, name: place.name, position: index + 1,
                                        joinedAt: place.joinedAt, offeredUntil: place.offeredUntil)
                                })
                        }))))
    }

    func removeFromWaitingLine(
        _ input: Operations.RemoveFromWaitingLine.Input
    ) async throws -> Operations.RemoveFromWaitingLine.Output {
        try await waiting.lines.remove(try WaitingAPI.placeId(input.path.placeId))
        return .noContent(.init())
    }
}

/// How the platform's and the features' operations read and write places in line.
package enum WaitingAPI {
    /// A place's id as the server makes it (`PlaceID`); anything else names no place.
    package static func placeId(_ raw: String) throws -> String {
        guard let id = PlaceID(raw) else { throw Problem.notFound("There is no such place in line.") }
        return id.value
    }

    /// A notice's id as the server makes it (`NoticeID`); anything else names no notice.
    package static func noticeId(_ raw: String) throws -> String {
        guard let id = NoticeID(raw) else { throw Problem.notFound("You have no such notice.") }
        return id.value
    }
}

extension Components.Schemas.ReminderSettings {
    init(off: Set<ReminderKind>) {
        self.init(
            offers: !off.contains(.offers), dueSoon: !off.contains(.dueSoon), dueToday: !off.contains(.dueToday),
            overdue: !off.contains(.overdue))
    }
}
