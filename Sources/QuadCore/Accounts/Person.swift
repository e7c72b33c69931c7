/// What someone may do in Quad.
public enum Role: String, Codable, Sendable, CaseIterable {
    case member
    case admin
    /// A machine account for car-park and transit feeds: it may only post readings.
    case feed
}

/// Someone who signs in: bookings, loans and timetables belong to them.
public struct Person: Codable, Sendable, Equatable {
    /// Unique, compared without case; shown as it was typed.
    public var username: String
    public var displayName: String
    public var role: Role
    /// Links the person to a student's timetable.
    public var studentId: String?

    public init(username: String, displayName: String, role: Role, studentId: String? = nil) {
        self.username = username
        self.displayName = displayName
        self.role = role
        self.studentId = studentId
    }

    public var isAdmin: Bool { role == .admin }
}
