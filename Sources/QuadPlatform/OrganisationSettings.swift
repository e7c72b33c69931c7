import Foundation

/// How people sign in with the organisation's accounts (OpenID Connect). Everything else (where to send people,
/// where the keys are) comes from the provider's discovery document, read at first use.
public struct OrganisationSignIn: Sendable, Equatable {
    /// `QUAD_OIDC_ISSUER`: the provider's issuer, exactly as its ID tokens say it (`https://id.campus.example`).
    public var issuer: String
    public var clientID: String
    /// From `QUAD_OIDC_CLIENT_SECRET` or the file `QUAD_OIDC_CLIENT_SECRET_FILE` names; never logged.
    public var clientSecret: String
    /// The button's words: "Sign in with <label>" (`QUAD_OIDC_LABEL`, else "your organisation").
    public var label: String?
    /// Someone whose groups claim holds this value is an admin; someone whose does not is not (each sign-in says).
    /// Nil: roles are given in Quad, by an admin.
    public var adminGroup: String?
    /// The claim listing someone's groups (`groups`).
    public var groupsClaim = "groups"
    /// The claim holding a student's id, which links their timetable; nil: ids are given in Quad.
    public var studentIDClaim: String?
    /// Whether someone already known here (by username or mail address) is linked to their organisation account at
    /// their first sign-in. Off: an address in use stops the sign-in, and a username in use gets a new one.
    public var linkExisting = false
    /// A session made through the provider lasts this long, then the provider is asked again: someone removed
    /// there is out within this time.
    public var sessionHours = 12

    /// The issuer's origin (`https://id.campus.example`): where Quad may send a browser to sign out there.
    public var origin: String {
        guard let url = URLComponents(string: issuer), let scheme = url.scheme, let host = url.host else {
            return issuer
        }
        return scheme + "://" + host + (url.port.map { ":\($0)" } ?? "")
    }

    public init(issuer: String, clientID: String, clientSecret: String) {
        self.issuer = issuer
        self.clientID = clientID
        self.clientSecret = clientSecret
    }
}

extension ServerConfiguration {
    /// The organisation's sign-in: an issuer needs a client id, a secret and the public address (the provider
    /// sends people back to it).
    mutating func readOrganisation(
        raw: (Setting) -> (value: String, name: String)?,
        parse: (Setting, String, (String) -> String?) throws -> String?
    ) throws {
        if let value = try parse(.localPasswords, "on or off", { Self.parseSwitch($0).map { $0 ? "on" : "off" } }) {
            localPasswords = value == "on"
        }
        let issuer = try parse(.oidcIssuer, "an https address (http only for this machine)", Self.parseIssuer)
        guard let issuer else {
            let others: [Setting] = [
                .oidcClientId, .oidcClientSecret, .oidcClientSecretFile, .oidcLabel, .oidcAdminGroup, .oidcGroupsClaim,
                .oidcStudentIdClaim, .oidcLinkExisting, .oidcSessionHours,
            ]
            if let set = others.first(where: { raw($0) != nil }) {
                throw ConfigurationError(setting: set.variable, message: "it needs QUAD_OIDC_ISSUER")
            }
            if !localPasswords {
                throw ConfigurationError(
                    setting: Setting.localPasswords.variable,
                    message: "turning passwords off needs QUAD_OIDC_ISSUER (no one could sign in)")
            }
            return
        }
        guard let clientID = try parse(.oidcClientId, "a client id", { $0.isEmpty ? nil : $0 }) else {
            throw ConfigurationError(
                setting: Setting.oidcClientId.variable, message: "it is needed with QUAD_OIDC_ISSUER")
        }
        var secret = raw(.oidcClientSecret)?.value
        if let path = try parse(
            .oidcClientSecretFile, "a readable file", { FileManager.default.isReadableFile(atPath: $0) ? $0 : nil })
        {
            // The file's first line: a secret kept out of the environment (systemd credentials, Docker secrets).
            secret = (try? String(contentsOfFile: path, encoding: .utf8))?.split(whereSeparator: \.isNewline).first
                .map(String.init)
        }
        guard let secret, !secret.isEmpty else {
            throw ConfigurationError(
                setting: Setting.oidcClientSecret.variable,
                message: "it (or QUAD_OIDC_CLIENT_SECRET_FILE) is needed with QUAD_OIDC_ISSUER")
        }
        guard publicURL != nil else {
            throw ConfigurationError(
                setting: Setting.publicURL.variable,
                message: "it is needed with QUAD_OIDC_ISSUER (the provider sends people back to it)")
        }
        var settings = OrganisationSignIn(issuer: issuer, clientID: clientID, clientSecret: secret)
        settings.label = try parse(.oidcLabel, "1 to 60 characters", { (1...60).contains($0.count) ? $0 : nil })
        settings.adminGroup = try parse(.oidcAdminGroup, "a group's name", { $0.isEmpty ? nil : $0 })
        settings.groupsClaim = try parse(.oidcGroupsClaim, "a claim's name", Self.parseClaimName) ?? "groups"
        settings.studentIDClaim = try parse(.oidcStudentIdClaim, "a claim's name", Self.parseClaimName)
        if let value = try parse(.oidcLinkExisting, "on or off", { Self.parseSwitch($0).map { $0 ? "on" : "off" } }) {
            settings.linkExisting = value == "on"
        }
        if let value = try parse(
            .oidcSessionHours, "a whole number of hours from 1 to 720",
            { Int($0).flatMap { (1...720).contains($0) ? String($0) : nil } })
        {
            settings.sessionHours = Int(value) ?? settings.sessionHours
        }
        organisation = settings
    }

    /// An https address with no query or fragment; http only for a provider on this machine (tests, a trial).
    static func parseIssuer(_ value: String) -> String? {
        guard let url = URLComponents(string: value), let host = url.host, !host.isEmpty, url.query == nil,
            url.fragment == nil, url.user == nil
        else { return nil }
        let loopback = ["localhost", "127.0.0.1", "::1", "[::1]"].contains(host.lowercased())
        guard url.scheme?.lowercased() == "https" || (url.scheme?.lowercased() == "http" && loopback) else {
            return nil
        }
        return value
    }

    static func parseClaimName(_ value: String) -> String? {
        (1...64).contains(value.count)
            && value.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "_-:.".contains($0)) })
            ? value : nil
    }
}
