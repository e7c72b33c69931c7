import Foundation
import QuadCore
import QuadPlatform

/// The original app's eight rooms with their original spot counts, in three buildings, each with a
/// photo shipped with Quad (`DemoPhotos/`; nothing is downloaded).
enum RoomsDemo {
    static let rooms: [(name: String, building: String, capacity: Int, spots: Int)] = [
        ("Ljerka", "North Hall", 50, 43), ("Mostafa", "North Hall", 12, 4), ("Helmold", "Engineering", 100, 86),
        ("Painter", "Library Wing", 20, 16), ("Septima", "Engineering", 90, 84), ("Alexis", "Library Wing", 8, 0),
        ("Yana", "North Hall", 40, 34), ("Mina", "Library Wing", 45, 39),
    ]

    static func load(_ store: RoomStore, images: ImageStore) async throws {
        for (index, room) in rooms.enumerated() {
            let photo = try await images.store(try ImageStore.shipped("DemoPhotos/room-\(index + 1).png", in: .module))
            _ = try await store.create(
                RoomRecord(
                    id: RoomValidation.slug(room.name), name: room.name, building: room.building,
                    capacity: room.capacity, seats: room.spots, photo: photo.path))
        }
    }
}
