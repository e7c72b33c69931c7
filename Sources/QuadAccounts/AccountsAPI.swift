import Foundation
import OpenAPIRuntime
import QuadCore
import QuadPlatform

/// Accounts' operations of the generated interface: sessions, `me`, and people (admin).
struct AccountsOperations: APIProtocol {
    let accounts: Accounts
    var platform: Platform { accounts.platform }
}

extension AccountsOperations {
    func createSession(_ input: Operations.CreateSession.Input) async throws -> Operations.CreateSession.Output {
        guard case .json(let body) = input.body else { throw Problem.malformedBody("Send the credentials as JSON.") }
        let person = try await accounts.signIn(
            username: body.username, password: body.password, address: RequestInfo.current.clientAddress)
        let (token, expiresAt) = try await accounts.sessions.start(for: person.username, kind: .api)
        return .created(.init(body: .json(.init(token: token, expiresAt: expiresAt, person: .init(person)))))
    }

    func redeemSignInCode(
        _ input: Operations.RedeemSignInCode.Input
    ) async throws
        -> Operations.RedeemSignInCode.Output
    {
        guard let organisation = accounts.organisation else {
            throw Problem.notFound("Quad has no sign-in with an organisation here.")
        }
        guard case .json(let body) = input.body else { throw Problem.malformedBody("Send the code as JSON.") }
        guard let username = try await organisation.flows.redeem(code: body.code, verifier: body.verifier),
            let person = try await accounts.people.find(username)
        else {
            throw Problem.unauthorized(
                "This code does not sign anyone in: it was used, it is over two minutes old, or the verifier is not its own. Sign in again."
            )
        }
        let (token, expiresAt) = try await accounts.sessions.start(
            for: person.username, kind: .api, endsAt: organisation.sessionEnd, via: Organisation.via)
        return .created(.init(body: .json(.init(token: token, expiresAt: expiresAt, person: .init(person)))))
    }

    func endPersonSessions(
        _ input: Operations.EndPersonSessions.Input
    ) async throws
        -> Operations.EndPersonSessions.Output
    {
        guard let person = try await accounts.people.find(input.path.username) else {
            throw Problem.notFound("There is no one called \(input.path.username).")
        }
        try await accounts.sessions.endAll(of: person.username)
        return .noContent(.init())
    }

    func endSession(_ input: Operations.EndSession.Input) async throws -> Operations.EndSession.Output {
        _ = try Access.person()
        if let token = RequestInfo.current.sessionToken { try await accounts.sessions.end(token) }
        return .noContent(.init())
    }

    func getMe(_ input: Operations.GetMe.Input) async throws -> Operations.GetMe.Output {
        let person = try Access.person()
        return .ok(.init(body: .json(.init(person, mail: try await accounts.addresses.entry(of: person.username)))))
    }

    func listPeople(_ input: Operations.ListPeople.Input) async throws -> Operations.ListPeople.Output {
        let mail = try await accounts.addresses.inUse()
        return .ok(
            .init(
                body: .json(
                    .init(
                        people: try await accounts.people.all().map { .init($0, mail: mail[$0.username.lowercased()]) })
                )))
    }

    func createPerson(_ input: Operations.CreatePerson.Input) async throws -> Operations.CreatePerson.Output {
        guard case .json(let body) = input.body else { throw Problem.malformedBody("Send the person as JSON.") }
        let person = try await accounts.add(
            username: body.username, displayName: body.displayName, password: body.password,
            role: body.role?.rawValue ?? Role.member.rawValue, studentId: body.studentId)
        return .created(.init(body: .json(.init(person))))
    }

    func updatePerson(_ input: Operations.UpdatePerson.Input) async throws -> Operations.UpdatePerson.Output {
        guard case .json(let body) = input.body else { throw Problem.malformedBody("Send the changes as JSON.") }
        let person = try await accounts.change(
            input.path.username, displayName: body.displayName, role: body.role?.rawValue,
            studentId: body.studentId.map { Optional($0) }, password: body.password, keepKeys: body.keepKeys ?? false,
            email: body.email, mailLanguage: try Self.mailLanguage(body.mailLanguage?.rawValue))
        return .ok(.init(body: .json(.init(person, mail: try await accounts.addresses.entry(of: person.username)))))
    }

    /// `en` or `fr`; nil (left out, or null) leaves it.
    static func mailLanguage(_ raw: String?) throws(ValidationFailure) -> Language? {
        guard let raw else { return nil }
        guard let language = Language(rawValue: raw) else {
            throw ValidationFailure(field: "mailLanguage", message: "Give en or fr, or leave it out.")
        }
        return language
    }

    func unsubscribeMail(_ input: Operations.UnsubscribeMail.Input) async throws -> Operations.UnsubscribeMail.Output {
        guard let choice = try await accounts.addresses.unsubscribe(token: input.query.token),
            let off = Components.Schemas.MailChoiceOff.ChoicePayload(rawValue: choice.rawValue)
        else { throw Problem.notFound("This link no longer works: choose what Quad mails you on your account page.") }
        return .ok(.init(body: .json(.init(choice: off, on: false))))
    }

    func deletePerson(_ input: Operations.DeletePerson.Input) async throws -> Operations.DeletePerson.Output {
        try await accounts.remove(input.path.username)
        return .noContent(.init())
    }
}

extension Components.Schemas.Person {
    /// `mail`: where their mail goes, for the answers that show it (`email` only when an address is in use).
    init(_ person: Person, mail: MailAddressStore.Entry? = nil) {
        self.init(
            username: person.username, displayName: person.displayName,
            role: .init(rawValue: person.role.rawValue) ?? .member, studentId: person.studentId,
            email: mail?.address,
            mailLanguage: mail?.address == nil ? nil : mail.flatMap { .init(rawValue: $0.language.rawValue) })
    }
}

/// Personal app links (see `AppLinkStore`).
extension AccountsOperations {
    func listMyAppLinks(_ input: Operations.ListMyAppLinks.Input) async throws -> Operations.ListMyAppLinks.Output {
        let links = try await accounts.appLinks.list(for: try Access.person().username)
        return .ok(
            .init(body: .json(.init(links: links.map { .init(id: $0.id, label: $0.label, createdAt: $0.createdAt) }))))
    }

    func createMyAppLink(_ input: Operations.CreateMyAppLink.Input) async throws -> Operations.CreateMyAppLink.Output {
        guard case .json(let body) = input.body else { throw Problem.malformedBody("Send {\"label\": \"…\"}.") }
        return .created(.init(body: .json(try await newAppLink(for: try Access.person(), label: body.label))))
    }

    func revokeMyAppLink(_ input: Operations.RevokeMyAppLink.Input) async throws -> Operations.RevokeMyAppLink.Output {
        guard try await accounts.appLinks.revoke(input.path.linkId, of: try Access.person().username) else {
            throw Problem.notFound("You have no app link \(input.path.linkId).")
        }
        return .noContent(.init())
    }

    func createAppLinkFor(_ input: Operations.CreateAppLinkFor.Input) async throws -> Operations.CreateAppLinkFor.Output
    {
        guard case .json(let body) = input.body else { throw Problem.malformedBody("Send {\"label\": \"…\"}.") }
        guard let person = try await accounts.people.find(input.path.username) else {
            throw Problem.notFound("There is no one called \(input.path.username).")
        }
        return .created(.init(body: .json(try await newAppLink(for: person, label: body.label))))
    }

    /// A feed account cannot have one: an app link acts as a member on the original apps' routes.
    private func newAppLink(for person: Person, label: String) async throws -> Components.Schemas.NewAppLink {
        guard person.role != .feed else {
            throw Problem(.forbidden, detail: "A feed account may only post readings: it gets no app link.")
        }
        let label = try AccountValidation.displayName(label, field: "label")
        let (link, key) = try await accounts.appLinks.create(for: person.username, label: label)
        return .init(
            id: link.id, label: link.label, createdAt: link.createdAt,
            url: RequestInfo.current.baseURL + AppLinkPath.prefix + key)
    }
}
