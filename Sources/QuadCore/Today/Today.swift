import Foundation

/// A person's day as Quad draws it: on `/` (signed in), in `GET /api/me/today` and in `quad today`, the same sections
/// from the same server code. Each section comes from the feature that owns what it shows, already in the person's
/// language, so a page, an app and the terminal only lay it out.
public struct Today: Codable, Sendable, Hashable {
    public var generatedAt: Date
    /// How many things need the person now (offers held for them, check-ins open, overdue loans): the badge's count.
    public var needsYou: Int
    /// In the order they matter (`TodaySection.Key`); a section with nothing to show says so (`empty`).
    public var sections: [TodaySection]

    public init(generatedAt: Date, sections: [TodaySection]) {
        self.generatedAt = generatedAt
        self.sections = sections.sorted { $0.key.rank < $1.key.rank }
        needsYou = sections.reduce(0) { $0 + $1.items.filter(\.needsYou).count }
    }
}

/// One part of a day, from one feature.
public struct TodaySection: Codable, Sendable, Hashable {
    /// What the section holds, which also sets its place on the page: what is held for the person comes first.
    public enum Key: String, Codable, Sendable, CaseIterable {
        case offers, notices, bookings, waiting, loans, classes, shuttles, parkings, freeRooms, specials

        /// Its place: the order of the cases.
        public var rank: Int { Self.allCases.firstIndex(of: self)! }
    }

    public var key: Key
    public var title: String
    /// What it says when it holds nothing, instead of an empty box.
    public var empty: String
    /// Where the whole of it is ("All your bookings").
    public var more: TodayLink?
    public var items: [TodayItem]

    public init(key: Key, title: String, empty: String, more: TodayLink? = nil, items: [TodayItem]) {
        self.key = key
        self.title = title
        self.empty = empty
        self.more = more
        self.items = items
    }
}

/// A link a section or an item leads to: its text and its page's path.
public struct TodayLink: Codable, Sendable, Hashable {
    public var label: String
    public var path: String

    public init(label: String, path: String) {
        self.label = label
        self.path = path
    }
}

/// One thing in a section: a booking, an offer, a class, a shuttle, a special.
public struct TodayItem: Codable, Sendable, Hashable {
    /// Unique within its section (a place in line's id, a booking's, a class meeting's).
    public var id: String
    public var title: String
    /// What to know about it, said in words ("Yours to take until 14:15", "In 25 min, room B12").
    public var detail: String?
    /// Its page.
    public var path: String?
    /// A picture of it (a special's tile).
    public var image: String?
    /// When it starts (a booking, a class, a shuttle).
    public var startsAt: Date?
    /// What its countdown counts to: an offer's end, a check-in's deadline, a loan's due date.
    public var endsAt: Date?
    /// It counts on the badge: the person must act on it now.
    public var needsYou: Bool
    /// What the person can do about it, most likely first.
    public var actions: [TodayAction]

    public init(
        id: String, title: String, detail: String? = nil, path: String? = nil, image: String? = nil,
        startsAt: Date? = nil, endsAt: Date? = nil, needsYou: Bool = false, actions: [TodayAction] = []
    ) {
        self.id = id
        self.title = title
        self.detail = detail
        self.path = path
        self.image = image
        self.startsAt = startsAt
        self.endsAt = endsAt
        self.needsYou = needsYou
        self.actions = actions
    }
}

/// Something a person can do from their day, in one tap: as a web form (`form`, a POST with the CSRF token) and as
/// the API's operation (`method` and `api`), so the page, an app and the command line all offer it.
public struct TodayAction: Codable, Sendable, Hashable {
    public enum Kind: String, Codable, Sendable, CaseIterable {
        case accept, decline, leave, checkIn, returnBook, dismiss
    }

    public enum Method: String, Codable, Sendable {
        case post = "POST"
        case delete = "DELETE"
    }

    public var kind: Kind
    public var label: String
    public var form: String
    public var method: Method
    public var api: String

    public init(kind: Kind, label: String, form: String, method: Method, api: String) {
        self.kind = kind
        self.label = label
        self.form = form
        self.method = method
        self.api = api
    }
}
