import Foundation
import Logging
import OpenAPIHummingbird
import QuadCore
import QuadPlatform
import ServiceLifecycle

/// People, their sessions and sign-in throttling; creates the first admin. The access layer asks it who a
/// credential signs in (`PersonDirectory`).
package final class Accounts: Feature, PersonDirectory {
    let people: PeopleStore
    let sessions: SessionStore
    let throttle: LoginThrottle
    let appLinks: AppLinkStore
    /// Where each person gets mail, and in which language.
    let addresses: MailAddressStore
    /// Links to confirm an address: at most five an hour for one person (each is a message to an address they
    /// typed, which may be anyone's).
    let confirmations: RateLimiter
    /// Open sign-up: at most 5 new accounts an hour from one address, counted before any password is hashed (the
    /// hashing thread then takes one at a time: `PasswordHashing`).
    let signUps: RateLimiter
    /// Links that set a new password: at most ten asks an hour from one address, three links an hour for one
    /// account (each is a message to its owner's address).
    let resetAsks: RateLimiter
    let resetLinks: RateLimiter
    let resets: PasswordResets
    /// Sign-in with the organisation's accounts, when the operator set it up.
    let organisation: Organisation?
    /// Sign-ins through the provider started: at most 30 a minute from one address (each is a row for ten minutes).
    let organisationStarts: RateLimiter
    /// Sign-ins' passwords checked, a bounded queue on a thread of its own.
    let hashing = PasswordHashing()
    let platform: Platform
    /// What other features let go of when a person is removed (Rooms: their bookings).
    let removals: [any PersonRemoval]
    /// The person's calendar addresses, ended with their password or their removal (the Timetable's).
    let keys: any PersonKeys
    static let adminUsername = "admin"

    package init(platform: Platform, removals: [any PersonRemoval], keys: any PersonKeys) {
        self.platform = platform
        self.removals = removals
        self.keys = keys
        self.sessions = SessionStore(database: platform.database, clock: platform.clock, hub: platform.events)
        self.people = PeopleStore(
            database: platform.database, passwordCost: platform.configuration.passwordCost, clock: platform.clock,
            sessions: sessions.cache)
        self.throttle = LoginThrottle(database: platform.database, clock: platform.clock)
        self.appLinks = AppLinkStore(database: platform.database, clock: platform.clock)
        self.addresses = MailAddressStore(database: platform.database, clock: platform.clock)
        self.confirmations = RateLimiter(rate: 5.0 / 3600, burst: 5, clock: platform.clock)
        self.signUps = RateLimiter(rate: 5.0 / 3600, burst: 5, clock: platform.clock)
        self.resetAsks = RateLimiter(rate: 10.0 / 3600, burst: 10, clock: platform.clock)
        self.resetLinks = RateLimiter(rate: 3.0 / 3600, burst: 3, clock: platform.clock)
        self.resets = PasswordResets(database: platform.database, clock: platform.clock)
        self.organisation = Organisation(
            configuration: platform.configuration, database: platform.database, clock: platform.clock)
        self.organisationStarts = RateLimiter(rate: 0.5, burst: 30, clock: platform.clock)
    }

    /// When no admin exists, creates `admin` with a random password and announces it once.
    package func ensureAdmin(announce: @Sendable (String) -> Void) async throws {
        guard try await !people.hasAdmin() else { return }
        let password = SecureRandom.base64url(byteCount: 12)
        _ = try await people.create(
            Person(username: Self.adminUsername, displayName: "Administrator", role: .admin), password: password)
        announce("Admin account created: username admin, password \(password) (shown once)")
    }

    /// The person the admin token acts as: `admin`, or else the first admin there is.
    package func tokenAdmin() async throws -> Person? {
        if let admin = try await people.find(Self.adminUsername), admin.isAdmin { return admin }
        return try await people.all().first(where: \.isAdmin)
    }

    package func person(appLink key: String) async throws -> Person? { try await appLinks.person(for: key) }

    package func person(session token: String) async throws -> Person? { try await sessions.person(for: token) }

    package func sessionKey(token: String) -> String { SessionStore.hash(token) }

    package func rememberedPerson(sessionKey: String) -> Person? { sessions.rememberedPerson(hash: sessionKey) }

    // MARK: Feature

    package static var migrations: [Migration] { PeopleStore.migrations }

    package var adminLinks: [AdminLink] { [AdminLink(title: "people.title", path: "/admin/people")] }
    package var recordSets: [any RecordSet] { [PeopleRecords(accounts: self)] }

    package static let files = WebFiles(module: "QuadAccounts", bundle: .module)

    package func register(on routes: Routes, web: WebShell) throws {
        AccountsRoutes(accounts: self, web: web).register(on: routes)
        let account = AccountRoutes(accounts: self, web: web)
        account.register(on: routes)
        MailAddressRoutes(accounts: self, web: web, account: account).register(on: routes)
        UnsubscribeRoutes(accounts: self, web: web).register(on: routes)
        // Passwords off: no one sets one, so there is no link to ask for either.
        if platform.configuration.localPasswords { PasswordResetRoutes(accounts: self, web: web).register(on: routes) }
        if let organisation {
            OrganisationRoutes(accounts: self, organisation: organisation, web: web).register(on: routes)
        }
        try AccountsOperations(accounts: self).registerHandlers(
            on: routes.router, configuration: .quad, middlewares: .quad())
    }

    package var services: [any Service] { [SessionSweeper(sessions: sessions)] }

    /// Demo people, with random passwords announced once: student Kier of the Timetable demo among them.
    package func loadDemoData(announce: @escaping @Sendable (String) -> Void) async throws {
        let demo = [
            Person(username: "kier", displayName: "Kier", role: .member, studentId: "305491"),
            Person(username: "ada", displayName: "Ada Lovelace", role: .member),
            Person(username: "grace", displayName: "Grace Hopper", role: .member),
            // Rooms' demo books for them: a campus in use.
            Person(username: "lin.chen", displayName: "Lin Chen", role: .member),
            Person(username: "sam.rivera", displayName: "Sam Rivera", role: .member),
            Person(username: "noor.haddad", displayName: "Noor Haddad", role: .member),
            Person(username: "parking-feed", displayName: "Car park feed", role: .feed),
        ]
        var lines: [String] = []
        for person in demo {
            let password = SecureRandom.base64url(byteCount: 12)
            _ = try await people.create(person, password: password)
            lines.append("  \(person.username) (\(person.role.rawValue)): \(password)")
        }
        announce("Demo people (passwords shown once):\n" + lines.joined(separator: "\n"))
    }
}

/// Sweeps expired sessions once an hour.
struct SessionSweeper: Service {
    let sessions: SessionStore

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try? await sessions.deleteExpired()
                try? await Task.sleep(for: .seconds(3600))
            }
        }
    }
}

/// What the API and the pages do with people, with the same rules and answers.
extension Accounts {
    /// Checks the password, minding the throttle. Unknown user and wrong password get the same 401.
    func signIn(username: String, password: String, address: String) async throws -> Person {
        guard platform.configuration.localPasswords else {
            throw Problem(
                .forbidden, type: "passwords-off", title: "Passwords are off",
                detail: "Quad's own passwords are turned off here: sign in with the organisation's account.")
        }
        // A name no one can have is counted (and answered) like an unknown one, and never reaches a query as is.
        let username = (try? AccountValidation.username(username)) ?? "?"
        // A place to hash and the try itself are taken before any hash: a full queue is a 503 that counts as no
        // try, and racing tries each see the ones before them.
        let place = try hashing.place()
        let reservation: String
        let failuresBefore: Int
        switch try await throttle.reserve(username: username, address: address) {
        case .wait(let wait):
            throw Problem(
                .tooManyRequests, type: "sign-in-locked", title: "Too many failed sign-ins",
                detail:
                    "Too many failed sign-ins: try again in \(wait < 60 ? "\(wait) seconds" : "\(wait / 60 + 1) minutes").",
                headers: [.retryAfter: String(wait)])
        case .reserved(let id, let before):
            reservation = id
            failuresBefore = before
        }
        let person: Person?
        do {
            person = try await people.verify(username: username, password: password, place: place)
        } catch {
            try? await throttle.cancel(reservation: reservation)
            throw error
        }
        guard let person else {
            platform.metrics.signInFailure()
            // Past the free ones, a failure is someone guessing (or someone locked out): the operator sees it.
            if failuresBefore >= LoginThrottle.freeFailures {
                await platform.audit.record(
                    AuditEntry(
                        at: platform.clock.now, actor: "", action: "signInFailed", target: username,
                        detail: "failure \(failuresBefore + 1) in \(LoginThrottle.window / 60) minutes",
                        address: address))
            }
            throw Problem.unauthorized("The username or password is not right.")
        }
        try await throttle.recordSuccess(username: username, address: address, reservation: reservation)
        return person
    }

    /// Adds a person; `chosenBySelf`: they sign themselves up, and their display name may not claim a role.
    func add(
        username: String, displayName: String, password: String, role: String, studentId: String?,
        chosenBySelf: Bool = false
    ) async throws -> Person {
        var errors: [FieldError] = []
        func check<T>(_ rule: () throws -> T) -> T? {
            do { return try rule() } catch let failure as ValidationFailure {
                errors += failure.errors
                return nil
            } catch {
                return nil
            }
        }
        let username = check { try AccountValidation.username(username) }
        let displayName = check {
            try chosenBySelf
                ? AccountValidation.chosenDisplayName(displayName) : AccountValidation.displayName(displayName)
        }
        let password = check { try AccountValidation.password(password) }
        let role = check { try AccountValidation.role(role) }
        let studentId = check { try AccountValidation.studentId(studentId) }
        guard errors.isEmpty, let username, let displayName, let password, let role, let studentId else {
            throw ValidationFailure(errors)
        }
        return try await people.create(
            Person(username: username, displayName: displayName, role: role, studentId: studentId), password: password,
            uniqueName: chosenBySelf)
    }

    /// An admin's change. `email`: nil leaves it, empty stops their mail, else it is in use at once;
    /// `mailLanguage`: nil leaves it.
    func change(
        _ username: String, displayName: String?, role: String?, studentId: String??, password: String?,
        keepKeys: Bool = false, email: String? = nil, mailLanguage: Language? = nil
    ) async throws -> Person {
        let displayName = try displayName.map { name throws(ValidationFailure) in
            try AccountValidation.displayName(name)
        }
        let role = try role.map { role throws(ValidationFailure) in try AccountValidation.role(role) }
        let password = try password.map { password throws(ValidationFailure) in try AccountValidation.password(password)
        }
        let studentId: String?? =
            switch studentId {
            case .none: .none
            case .some(let value): .some(try AccountValidation.studentId(value))
            }
        let email: String?? = try email.map { email throws(ValidationFailure) in
            try AccountValidation.mailAddress(email)
        }
        let addresses = self.addresses
        let before = role == nil ? nil : try await people.find(username)
        let person = try await people.update(
            username, displayName: displayName, role: role, studentId: studentId, password: password,
            keepKeys: keepKeys, keys: keys
        ) { sql in
            if let email {
                try await addresses.set(username, address: email, language: mailLanguage, sql)
            } else if let mailLanguage {
                try await addresses.setLanguage(username, mailLanguage, sql)
            }
        }
        // A role's change is a security event: the request's audit entry says which (`AuditMiddleware`).
        if let before, before.role != person.role {
            RequestInfo.current.audit.add("\(person.username): role \(before.role.rawValue) → \(person.role.rawValue)")
        }
        return person
    }

    /// Removes a person; what they held in other features (their bookings) is released in the same transaction,
    /// and announced once it is committed.
    func remove(_ username: String) async throws {
        guard let announcements = try await people.delete(username, removals: removals, keys: keys) else {
            throw Problem.notFound("There is no one called \(username).")
        }
        for announce in announcements { await announce() }
    }
}
