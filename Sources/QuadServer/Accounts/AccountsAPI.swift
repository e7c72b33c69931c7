import Foundation
import OpenAPIRuntime
import QuadAPI
import QuadCore

/// Accounts' operations of the generated interface: sessions, `me`, and people (admin).
extension APIHandler {
    func createSession(_ input: Operations.CreateSession.Input) async throws -> Operations.CreateSession.Output {
        guard case .json(let body) = input.body else { throw Problem.malformedBody("Send the credentials as JSON.") }
        let person = try await accounts.signIn(
            username: body.username, password: body.password, address: RequestInfo.current.clientAddress)
        let (token, expiresAt) = try await accounts.sessions.start(for: person.username, kind: .api)
        return .created(.init(body: .json(.init(token: token, expiresAt: expiresAt, person: .init(person)))))
    }

    func endSession(_ input: Operations.EndSession.Input) async throws -> Operations.EndSession.Output {
        _ = try Access.person()
        if let token = RequestInfo.current.sessionToken { try await accounts.sessions.end(token) }
        return .noContent(.init())
    }

    func getMe(_ input: Operations.GetMe.Input) async throws -> Operations.GetMe.Output {
        .ok(.init(body: .json(.init(try Access.person()))))
    }

    func listMyBookings(_ input: Operations.ListMyBookings.Input) async throws -> Operations.ListMyBookings.Output {
        let person = try Access.person()
        let bookings = try await rooms.store.bookings(owner: person.username)
        return .ok(
            .init(
                body: .json(
                    .init(
                        bookings: bookings.map {
                            .init(
                                id: $0.booking.id, roomId: $0.booking.roomId, roomName: $0.roomName,
                                createdAt: Timestamp.date($0.booking.createdAt) ?? Date(timeIntervalSince1970: 0))
                        }))))
    }

    func listPeople(_ input: Operations.ListPeople.Input) async throws -> Operations.ListPeople.Output {
        try Access.admin()
        return .ok(
            .init(body: .json(.init(people: try await accounts.people.all().map(Components.Schemas.Person.init)))))
    }

    func createPerson(_ input: Operations.CreatePerson.Input) async throws -> Operations.CreatePerson.Output {
        try Access.admin()
        guard case .json(let body) = input.body else { throw Problem.malformedBody("Send the person as JSON.") }
        let person = try await accounts.add(
            username: body.username, displayName: body.displayName, password: body.password,
            role: body.role?.rawValue ?? Role.member.rawValue, studentId: body.studentId)
        return .created(.init(body: .json(.init(person))))
    }

    func updatePerson(_ input: Operations.UpdatePerson.Input) async throws -> Operations.UpdatePerson.Output {
        try Access.admin()
        guard case .json(let body) = input.body else { throw Problem.malformedBody("Send the changes as JSON.") }
        let person = try await accounts.change(
            input.path.username, displayName: body.displayName, role: body.role?.rawValue,
            studentId: body.studentId.map { Optional($0) }, password: body.password)
        return .ok(.init(body: .json(.init(person))))
    }

    func deletePerson(_ input: Operations.DeletePerson.Input) async throws -> Operations.DeletePerson.Output {
        try Access.admin()
        try await accounts.remove(input.path.username, rooms: rooms)
        return .noContent(.init())
    }
}

extension Components.Schemas.Person {
    init(_ person: Person) {
        self.init(
            username: person.username, displayName: person.displayName,
            role: .init(rawValue: person.role.rawValue) ?? .member, studentId: person.studentId)
    }
}
