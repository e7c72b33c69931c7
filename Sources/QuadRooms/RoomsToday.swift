import Foundation
import QuadCore
import QuadPlatform

/// Rooms' part of a day: a person's bookings today and tomorrow, with check-in once it opens (it counts on the badge
/// until done) and its deadline; a visitor's is the rooms free now.
extension Rooms: TodayPart {
    /// As many free rooms as a visitor's home lists.
    static let freeRoomsShown = 3

    /// Bookings and free seats (a building's new rules are announced as its rooms' changes).
    package var todayChanges: [HubChange] { [.event(.room)] }

    package func today(for person: Person?, at now: Date, t: Localizer) async throws -> [TodaySection] {
        let campus = await store.campusClock()
        guard let person else {
            let all = try await kept.rooms().map { $0.room(baseURL: "") }
            let free = all.filter { $0.availability != .full }
            return [
                TodaySection(
                    key: .freeRooms, title: t("rooms.today.freeRooms.title"),
                    empty: all.isEmpty ? t("rooms.today.freeRooms.none") : t("rooms.today.freeRooms.empty"),
                    more: TodayLink(label: t("rooms.today.freeRooms.more"), path: "/rooms"),
                    items: free.prefix(Self.freeRoomsShown).map {
                        TodayItem(
                            id: $0.id, title: $0.name,
                            detail: RoomsPage.seatsFree($0.spots, of: $0.seats ?? $0.capacity, t: t),
                            path: "/rooms/\($0.id)")
                    })
            ]
        }
        let today = campus.date(of: now)
        let afterTomorrow = campus.instant(today.adding(days: 2), LocalTime(hour: 0, minute: 0))
        let items = try await bookings(of: person).filter { ($0.booking.start ?? now) < afterTomorrow }.map {
            Self.todayItem($0.booking, roomName: $0.roomName, today: today, campus: campus, now: now, t: t)
        }
        return [
            TodaySection(
                key: .bookings, title: t("rooms.today.bookings.title"), empty: t("rooms.today.bookings.empty"),
                more: TodayLink(label: t("rooms.today.bookings.more"), path: "/rooms"), items: items)
        ]
    }

    /// A booking as a day shows it: when (today or tomorrow), and where check-in stands.
    static func todayItem(
        _ booking: Booking, roomName: String, today: LocalDate, campus: CampusClock, now: Date, t: Localizer
    ) -> TodayItem {
        guard let start = booking.start, let end = booking.end else {
            return TodayItem(
                id: booking.id, title: roomName, detail: t("rooms.today.bookings.untimed"),
                path: "/rooms/\(booking.roomId)")
        }
        let date = campus.date(of: start)
        let day =
            date == today
            ? t("rooms.today.day.today")
            : date == today.adding(days: 1) ? t("rooms.today.day.tomorrow") : t.longDate(date)
        var detail = t(
            "rooms.day.when",
            ["date": day, "start": campus.time(of: start).description, "end": campus.time(of: end).description])
        var item = TodayItem(
            id: booking.id, title: roomName, path: "/rooms/\(booking.roomId)?date=\(date)", startsAt: start)
        if booking.checkedIn == true {
            detail += " · " + t("rooms.today.bookings.checkedIn")
        } else if let deadline = booking.checkInBy {
            if Self.checkInOpen(booking, at: now) {
                detail += " · " + t("rooms.day.checkInBy", ["time": campus.time(of: deadline).description])
                item.endsAt = deadline
                item.needsYou = true
                item.actions = [
                    TodayAction(
                        kind: .checkIn, label: t("rooms.today.bookings.checkIn"),
                        form: "/rooms/\(booking.roomId)/bookings/\(booking.id)/check-in", method: .post,
                        api: "/api/rooms/\(booking.roomId)/bookings/\(booking.id)/check-in")
                ]
            } else {
                let opens = start.addingTimeInterval(-CheckInWindow.opensBefore)
                detail += " · " + t("rooms.today.bookings.checkInOpens", ["time": campus.time(of: opens).description])
            }
        }
        item.detail = detail
        return item
    }
}

/// What of Rooms' needs the person now (the badge on every page): their bookings whose check-in is open and not done.
extension Rooms: AttentionPart {
    package var attention: (any AttentionPart)? { self }

    package func attention(for person: Person, at now: Date) async throws -> Attention {
        let due = try await reservations.upcomingReservations(owner: person.username).map(\.booking).filter {
            $0.checkedIn != true && $0.checkInBy != nil
        }
        return Attention(
            count: due.filter { Self.checkInOpen($0, at: now) }.count,
            // A check-in opens, or its booking ends.
            changesAt: Attention.next(
                due.flatMap { [$0.start?.addingTimeInterval(-CheckInWindow.opensBefore), $0.checkInBy, $0.end] },
                after: now))
    }

    /// Whether `booking`'s check-in is open now and waits for the person (Today's `needsYou`, the badge).
    static func checkInOpen(_ booking: Booking, at now: Date) -> Bool {
        guard booking.checkedIn != true, booking.checkInBy != nil, let start = booking.start, let end = booking.end
        else { return false }
        return CheckInWindow.isOpen(start: start, end: end, at: now)
    }
}
