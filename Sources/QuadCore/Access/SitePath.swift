import Foundation

/// A path on this site, checked once, for everything that sends a browser somewhere: redirects after a form,
/// the sign-in's `next`, links built from a request. A value from a request becomes a `SitePath` only here.
public struct SitePath: Sendable, Hashable, CustomStringConvertible {
    /// The path with its query and fragment, as it goes into `Location` or an `href`.
    public let value: String

    public var description: String { value }

    /// Accepts only an absolute path on this site: it starts with one `/` followed by something other than `/`
    /// or `\`; no scheme, no host, no backslash, no whitespace or control character anywhere (browsers drop
    /// tabs and new lines, so `/\t/evil.example` would become `//evil.example`), and no dot segments.
    public init?(_ raw: String?) {
        guard let raw, raw.hasPrefix("/"), raw.count <= 2048 else { return nil }
        let second = raw.dropFirst().first
        guard second != "/", second != "\\" else { return nil }
        guard
            !raw.unicodeScalars.contains(where: {
                $0 == "\\" || CharacterSet.whitespacesAndNewlines.contains($0)
                    || CharacterSet.controlCharacters.contains($0) || CharacterSet.illegalCharacters.contains($0)
            })
        else { return nil }
        guard let components = URLComponents(string: raw), components.scheme == nil, components.host == nil,
            components.percentEncodedPath.hasPrefix("/")
        else { return nil }
        let segments = components.percentEncodedPath.split(separator: "/", omittingEmptySubsequences: false)
        guard !segments.contains(where: { $0 == "." || $0 == ".." }) else { return nil }
        let decoded = components.path
        guard !decoded.hasPrefix("//"), !decoded.contains("\\") else { return nil }
        value = raw
    }

    /// The fallback every redirect has: the home page.
    public static let home = SitePath("/")!

    /// A path built by Quad from known parts; a typo in code fails loudly in tests.
    public init(known: String) {
        guard let path = SitePath(known) else { preconditionFailure("Not a site path: \(known)") }
        self = path
    }

    /// `raw` when it is a site path, else `fallback`.
    public static func from(_ raw: String?, else fallback: SitePath = .home) -> SitePath {
        SitePath(raw) ?? fallback
    }
}
