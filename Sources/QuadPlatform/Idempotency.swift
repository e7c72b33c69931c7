import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import QuadCore
import SQLKit
import ServiceLifecycle

/// `Idempotency-Key` on POST (IETF httpapi draft): the first response for a key is stored and replayed
/// for a repeat with the same body; the same key with another body is refused (422), and a repeat while
/// the first is still running is told to wait (409). Keys live in the database, so they hold across
/// instances and restarts, and expire after 24 hours.
///
/// Only what a signed-in person asks of the API is kept (the original apps' routes under a person's app link
/// among it); elsewhere the key is ignored:
/// - an answer that holds a secret (a session token, an app link, a calendar address): the contract marks those
///   operations (`x-quad-secret-answer`), and an answer that sets a cookie is never kept whatever its route;
/// - web forms: their answers are pages, which may show a secret once (a new app link) and carry the CSRF token;
/// - visitors: a key of theirs would let anyone make the server keep answers (a failed sign-in's 6 KB a key).
struct IdempotencyMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    package let store: IdempotencyStore
    package let table: AccessTable

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    )
        async throws -> Response
    {
        guard request.method == .post, let key = request.headers[.idempotencyKey],
            context.endpointPath.flatMap({ table.entry(request.method, endpoint: $0) })?.secretAnswer != true
        else {
            return try await next(request, context)
        }
        guard (1...255).contains(key.count) else {
            throw Problem(
                .badRequest, type: "idempotency-key", title: "Invalid Idempotency-Key",
                detail: "An Idempotency-Key is 1 to 255 characters long.")
        }
        guard let person = context.person, AccessTable.isAPI(request.uri.path) else {
            return try await next(request, context)
        }
        var request = request
        let body = try await request.collectBody(upTo: BodyLimit.upload)
        // A key belongs to one person and one operation.
        let who = ClientKey.of(person)
        let scope = SHA256.hash(data: Data((who + " " + request.method.rawValue + " " + request.uri.path).utf8)).hex
        let fingerprint = SHA256.hash(data: Data(buffer: body)).hex

        switch try await store.claim(scope: scope, key: key, fingerprint: fingerprint) {
        case .claimed:
            break
        case .mismatch:
            throw Problem(
                .unprocessableContent, type: "idempotency-key-reused", title: "Idempotency-Key reused",
                detail: "This Idempotency-Key was already used with a different request body.")
        case .inProgress:
            throw Problem(
                .conflict, type: "idempotency-in-progress", title: "Request already in progress",
                detail: "A request with this Idempotency-Key is still being processed; retry shortly.",
                headers: [.retryAfter: "1"])
        case .completed(let stored):
            var response = Response(
                status: .init(code: stored.status), headers: stored.headers,
                body: .init(byteBuffer: ByteBuffer(bytes: stored.body)))
            response.headers[.idempotentReplayed] = "true"
            return response
        }

        let response: Response
        do {
            response = try await next(request, context)
        } catch let problem as Problem where problem.status.code < 500 {
            response = problem.response(instance: request.uri.path)
        } catch {
            try? await store.release(scope: scope, key: key)
            throw error
        }
        guard response.status.code < 500, response.headers[.setCookie] == nil else {
            try? await store.release(scope: scope, key: key)
            return response
        }
        let collector = CollectingWriter()
        var finished = response
        try await finished.body.write(collector.writer)
        let bytes = Array(buffer: collector.buffer)
        var headers = response.headers
        headers[.date] = nil
        try await store.complete(
            scope: scope, key: key, response: .init(status: Int(response.status.code), headers: headers, body: bytes))
        finished.body = .init(byteBuffer: collector.buffer)
        return finished
    }
}

extension HTTPField.Name {
    static let idempotentReplayed = HTTPField.Name("Idempotent-Replayed")!
}

/// The stored first responses, in table `idempotency_keys`.
package final class IdempotencyStore: Service, Sendable {
    struct StoredResponse: Sendable {
        package var status: Int
        package var headers: HTTPFields
        package var body: [UInt8]
    }

    enum Claim: Sendable {
        case claimed, mismatch, inProgress
        case completed(StoredResponse)
    }

    static let lifetime: TimeInterval = 24 * 60 * 60
    package let database: Database
    private let clock: any QuadClock

    package init(database: Database, clock: any QuadClock) {
        self.database = database
        self.clock = clock
    }

    package static let migration = Migration(
        id: 3, name: "idempotency keys",
        statements: [
            """
            CREATE TABLE idempotency_keys (
                scope TEXT NOT NULL, key TEXT NOT NULL, fingerprint TEXT NOT NULL,
                status INTEGER, headers TEXT, body TEXT, created_at BIGINT NOT NULL,
                PRIMARY KEY (scope, key))
            """
        ])

    /// Answers kept before secrets were left out may hold a session token or an app link: all are forgotten
    /// (a key's worst loss is that a retry within 24 hours runs again).
    static let forgetSecrets = Migration(
        id: 5, name: "idempotent answers without secrets", statements: ["DELETE FROM idempotency_keys"])

    func claim(scope: String, key: String, fingerprint: String) async throws -> Claim {
        let now = Int64(clock.now.timeIntervalSince1970)
        let expired = now - Int64(Self.lifetime)
        // A first request still unfinished after a minute died with its process: let the repeat run.
        let abandoned = now - 60
        return try await database.transaction { sql in
            try await sql.raw(
                """
                DELETE FROM idempotency_keys WHERE scope = \(bind: scope) AND key = \(bind: key)
                AND (created_at < \(bind: expired) OR (status IS NULL AND created_at < \(bind: abandoned)))
                """
            ).run()
            let inserted = try await sql.raw(
                """
                INSERT INTO idempotency_keys (scope, key, fingerprint, created_at)
                VALUES (\(bind: scope), \(bind: key), \(bind: fingerprint), \(bind: now))
                ON CONFLICT (scope, key) DO NOTHING RETURNING key
                """
            ).first()
            if inserted != nil { return .claimed }
            guard
                let row = try await sql.raw(
                    "SELECT fingerprint, status, headers, body FROM idempotency_keys WHERE scope = \(bind: scope) AND key = \(bind: key)"
                ).first()
            else { return .inProgress }
            if try row.decode(column: "fingerprint", as: String.self) != fingerprint { return .mismatch }
            guard let status = try row.decode(column: "status", as: Int?.self) else { return .inProgress }
            let headerPairs =
                try row.decode(column: "headers", as: String?.self)
                .flatMap { try JSONDecoder().decode([[String]].self, from: Data($0.utf8)) } ?? []
            var headers = HTTPFields()
            for pair in headerPairs where pair.count == 2 {
                if let name = HTTPField.Name(pair[0]) { headers.append(HTTPField(name: name, value: pair[1])) }
            }
            let body = try row.decode(column: "body", as: String?.self).flatMap { Data(base64Encoded: $0) } ?? Data()
            return .completed(StoredResponse(status: status, headers: headers, body: Array(body)))
        }
    }

    func complete(scope: String, key: String, response: StoredResponse) async throws {
        let pairs = response.headers.map { [$0.name.rawName, $0.value] }
        let headers = String(decoding: try JSONEncoder().encode(pairs), as: UTF8.self)
        let body = Data(response.body).base64EncodedString()
        try await database.withConnection { sql in
            try await sql.raw(
                """
                UPDATE idempotency_keys SET status = \(bind: response.status), headers = \(bind: headers), body = \(bind: body)
                WHERE scope = \(bind: scope) AND key = \(bind: key)
                """
            ).run()
        }
    }

    /// Forgets a key whose request failed on our side, so that a retry runs again.
    package func release(scope: String, key: String) async throws {
        try await database.withConnection { sql in
            try await sql.raw("DELETE FROM idempotency_keys WHERE scope = \(bind: scope) AND key = \(bind: key)").run()
        }
    }

    package func deleteExpired() async throws {
        let expired = Int64(clock.now.timeIntervalSince1970 - Self.lifetime)
        try await database.withConnection { sql in
            try await sql.raw("DELETE FROM idempotency_keys WHERE created_at < \(bind: expired)").run()
        }
    }

    /// Sweeps expired keys every hour until shutdown.
    package func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try? await self.deleteExpired()
                try? await Task.sleep(for: .seconds(3600))
            }
        }
    }
}
