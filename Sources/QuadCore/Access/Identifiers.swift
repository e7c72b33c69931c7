/// Identifiers parsed once, from a path or a query, before they reach a URL, a form action or a query: a value
/// that does not parse is refused where it arrives, never echoed.
public struct RoomID: Sendable, Hashable, CustomStringConvertible {
    public let value: String
    public var description: String { value }

    /// A room slug: lowercase letters, digits and single dashes (see `RoomValidation.isSlug`).
    public init?(_ raw: String?) {
        guard let raw, RoomValidation.isSlug(raw) else { return nil }
        value = raw
    }
}

public struct BookingID: Sendable, Hashable, CustomStringConvertible {
    public let value: String
    public var description: String { value }

    /// What the server makes: 16 random bytes in base64url (22 characters, no padding).
    public init?(_ raw: String?) {
        guard let raw, raw.count == 22,
            raw.unicodeScalars.allSatisfy({
                ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "-"
                    || $0 == "_"
            })
        else { return nil }
        value = raw
    }
}

public struct Username: Sendable, Hashable, CustomStringConvertible {
    public let value: String
    public var description: String { value }

    /// As `AccountValidation.username` accepts it.
    public init?(_ raw: String?) {
        guard let raw, let checked = try? AccountValidation.username(raw), checked == raw else { return nil }
        value = checked
    }
}

/// A place in a waiting line (and the offer it holds), as the server makes it: 16 random bytes in base64url.
public struct PlaceID: Sendable, Hashable, CustomStringConvertible {
    public let value: String
    public var description: String { value }

    public init?(_ raw: String?) {
        guard let booking = BookingID(raw) else { return nil }
        value = booking.value
    }
}

/// A notice (`Notice`), as the server makes it: 16 random bytes in base64url.
public struct NoticeID: Sendable, Hashable, CustomStringConvertible {
    public let value: String
    public var description: String { value }

    public init?(_ raw: String?) {
        guard let booking = BookingID(raw) else { return nil }
        value = booking.value
    }
}
