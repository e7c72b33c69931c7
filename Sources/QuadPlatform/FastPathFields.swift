import NIOHTTP1

/// The header fields of a request that `FastPath` reads, found in one pass over its headers, each as the router
/// reads it (`HTTPFields`): every line of a field joined with ", " (the `Cookie` lines with "; "); the `Host`, its
/// first line.
///
/// Why: a `first(name:)` or `headers[name]` is a pass over all the headers of its own, and a signed-in poll asked for
/// up to seven (about 3 % of its time in the fast path, perf of `rooms-304-cookie`, issue 41).
struct FastPathFields: Equatable {
    private(set) var authorization: String?
    private(set) var cookie: String?
    private(set) var host: String?
    private(set) var ifNoneMatch: String?
    private(set) var ifModifiedSince: String?
    private(set) var acceptEncoding: String?
    private(set) var acceptLanguage: String?
    private(set) var lastEventId: String?
    /// How many `Last-Event-ID` lines came (more than one is the router's to judge).
    private(set) var lastEventIds = 0
    private(set) var forwardedFor: String?
    private(set) var forwardedHost: String?
    private(set) var forwardedProto: String?

    init(_ headers: HTTPHeaders) {
        for (name, value) in headers { add(name.utf8, value) }
    }

    /// None yet: `RequestScanner` adds each line it reads.
    init() {}

    /// A line of the request's head; its value made only when the field is one of these (`value`).
    mutating func add<Name: Collection<UInt8>>(_ name: Name, _ value: @autoclosure () -> String) {
        // Told apart by length first: most of a request's fields are of none of these lengths.
        switch name.count {
        case 4:
            if Self.named(name, "host"), host == nil { host = value() }
        case 6:
            if Self.named(name, "cookie") { Self.add(value(), to: &cookie, separator: "; ") }
        case 13:
            if Self.named(name, "authorization") {
                Self.add(value(), to: &authorization)
            } else if Self.named(name, "if-none-match") {
                Self.add(value(), to: &ifNoneMatch)
            } else if Self.named(name, "last-event-id") {
                Self.add(value(), to: &lastEventId)
                lastEventIds += 1
            }
        case 15:
            if Self.named(name, "accept-encoding") {
                Self.add(value(), to: &acceptEncoding)
            } else if Self.named(name, "accept-language") {
                Self.add(value(), to: &acceptLanguage)
            } else if Self.named(name, "x-forwarded-for") {
                Self.add(value(), to: &forwardedFor)
            }
        case 16:
            if Self.named(name, "x-forwarded-host") { Self.add(value(), to: &forwardedHost) }
        case 17:
            if Self.named(name, "if-modified-since") {
                Self.add(value(), to: &ifModifiedSince)
            } else if Self.named(name, "x-forwarded-proto") {
                Self.add(value(), to: &forwardedProto)
            }
        default: break
        }
    }

    private static func add(_ value: String, to field: inout String?, separator: String = ", ") {
        field = field.map { $0 + separator + value } ?? value
    }

    /// Whether a field's name, of the same length as `lowercased`, is it in any case (names are ASCII: HTTP's tokens).
    static func named<Name: Collection<UInt8>>(_ name: Name, _ lowercased: StaticString) -> Bool {
        lowercased.withUTF8Buffer { expected in
            zip(name, expected).allSatisfy { byte, wanted in
                byte == wanted || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") && byte + 32 == wanted)
            }
        }
    }
}
