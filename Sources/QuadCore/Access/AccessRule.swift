/// Who may call an operation or open a page, as the contract (`x-quad-access`) and the page registrations
/// declare it. The platform's access layer reads the declaration of the matched route and decides before the
/// body is read: 401 without valid credentials, 403 for the wrong role.
public enum AccessRule: String, Codable, Sendable, CaseIterable {
    /// Anyone, signed in or not.
    case `public`
    /// Anyone signed in, whatever their role (their own account, signing out).
    case person
    /// A member or an admin: what people do with rooms, books and their week. Not a feed account.
    case member
    /// A member or an admin, and then only on what is theirs unless they are an admin: the handler asks the
    /// feature's policy (a booking's owner, a loan's borrower).
    case owner
    /// An admin.
    case admin
    /// A car-park or transit feed account, or an admin: posting readings, nothing else.
    case feed
    /// Whoever holds the link it was sent in by mail: the token in its URL is the authority, so the caller's
    /// credentials are not asked for, and a form from elsewhere is not refused (RFC 8058's one-click unsubscribe comes
    /// from a mail client, with no cookie and no CSRF token). Only for what that token alone may do.
    case link
    /// A monitoring system: from an address the operator names, or with the metrics token; never a person's
    /// session (the access layer decides by the address and the token, not by a role).
    case metrics

    /// What the layer decides for a caller with `role` (nil: not signed in).
    public func decide(_ role: Role?) -> AccessDecision {
        if self == .public || self == .link { return .allowed }
        if self == .metrics { return .forbidden("Metrics are for the monitoring system the operator names.") }
        guard let role else { return .signInFirst }
        switch self {
        case .public, .link, .person: return .allowed
        case .metrics: return .forbidden("Metrics are for the monitoring system the operator names.")
        case .member, .owner: return role == .feed ? .forbidden(Self.feedOnly) : .allowed
        case .admin: return role == .admin ? .allowed : .forbidden("Only an admin may do this.")
        case .feed:
            return role == .admin || role == .feed
                ? .allowed : .forbidden("Only a feed account or an admin may post readings.")
        }
    }

    static let feedOnly = "A feed account may only post readings."
}

public enum AccessDecision: Equatable, Sendable {
    case allowed
    /// 401: no valid credentials.
    case signInFirst
    /// 403, with the reason.
    case forbidden(String)
}
