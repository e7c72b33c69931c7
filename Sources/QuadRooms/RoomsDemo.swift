import Foundation
import QuadCore
import QuadPlatform

/// The original app's eight rooms with their original spot counts, in three buildings, each with a
/// photo shipped with Quad (`DemoPhotos/`; nothing is downloaded); then what makes it look like a campus in use:
/// buildings with their hours (one asking for check-in), bookings made for later today and tomorrow, and a line on
/// a time that is full. Everything booked is in the future and by demo people nobody signs in as by default, so
/// what is free now is the original app's.
enum RoomsDemo {
    static let rooms: [(name: String, building: String, capacity: Int, spots: Int)] = [
        ("Ljerka", "North Hall", 50, 43), ("Mostafa", "North Hall", 12, 4), ("Helmold", "Engineering", 100, 86),
        ("Painter", "Library Wing", 20, 16), ("Septima", "Engineering", 90, 84), ("Alexis", "Library Wing", 8, 0),
        ("Yana", "North Hall", 40, 34), ("Mina", "Library Wing", 45, 39),
    ]

    /// North Hall is the study hall, open around the clock; the others keep a campus's hours, and Engineering's
    /// bookings are released unless checked in within 15 minutes.
    static let buildings: [(name: String, hours: String, checkIn: Int?)] = [
        ("North Hall", "Mon-Sun 00:00-24:00", nil),
        ("Engineering", "Mon-Fri 07:00-21:00; Sat 09:00-17:00", 15),
        ("Library Wing", "Mon-Fri 08:00-22:00; Sat-Sun 10:00-18:00", nil),
    ]

    /// Demo people who book (Accounts' demo has them): a study group, and someone waiting.
    static let lin = Person(username: "lin.chen", displayName: "Lin Chen", role: .member)
    static let sam = Person(username: "sam.rivera", displayName: "Sam Rivera", role: .member)
    static let noor = Person(username: "noor.haddad", displayName: "Noor Haddad", role: .member)

    static func load(_ rooms: Rooms, images: ImageStore) async throws {
        for (index, room) in self.rooms.enumerated() {
            let photo = try await images.store(try ImageStore.shipped("DemoPhotos/room-\(index + 1).png", in: .module))
            _ = try await rooms.store.create(
                RoomRecord(
                    id: RoomValidation.slug(room.name), name: room.name, building: room.building,
                    capacity: room.capacity, seats: room.spots, photo: photo.path))
        }
        for building in buildings {
            var policy = BookingPolicy.default
            policy.hours = try OpeningHours(building.hours)
            policy.checkInMinutes = building.checkIn
            try await rooms.setRules(policy, forBuilding: building.name)
        }
        try await book(rooms)
    }

    /// Later today, on the hour after next (when the building is open then), and tomorrow: groups in Yana and
    /// Septima, Painter taken whole for a study group, and Noor waiting for a seat there.
    static func book(_ rooms: Rooms) async throws {
        let campus = await rooms.store.campusClock()
        let now = rooms.platform.clock.now
        let today = campus.date(of: now)
        let tomorrow = today.adding(days: 1)
        func at(_ date: LocalDate, _ time: String) -> Date { campus.instant(date, LocalTime(time)!) }
        let later = LocalTime(hour: min(campus.time(of: now).hour + 2, 23), minute: 0)
        let bookings: [(room: String, who: Person, start: Date, minutes: Int, hold: Hold, seats: Int)] = [
            ("yana", noor, campus.instant(today, later), 60, .seat, 2),
            ("septima", sam, campus.instant(today, later), 60, .seat, 8),
            ("septima", sam, at(tomorrow, "09:00"), 90, .seat, 12),
            ("yana", noor, at(tomorrow, "14:00"), 60, .seat, 6),
            ("painter", lin, at(tomorrow, "10:00"), 120, .room, 1),
        ]
        for booking in bookings {
            // Later today may be past the building's hours, or past midnight: then there is nothing to book today.
            _ = try? await rooms.book(
                roomId: booking.room, owner: booking.who, start: booking.start, minutes: booking.minutes,
                hold: booking.hold, seats: booking.seats, recurrence: nil)
        }
        // Painter is Lin's group's then, so Noor can only wait (a demo that fails to wait still starts).
        _ = try? await rooms.wait(
            roomId: "painter", person: noor, start: at(tomorrow, "10:00"), minutes: 60, hold: .seat)
    }
}
