import Foundation
import Hummingbird
import QuadCore

/// `/admin/audit`: the audit trail, newest first, narrowed by who, what and when (a `GET` form, no JavaScript needed),
/// a page of entries at a time, and the same entries as a CSV file. Admins only.
struct AuditRoutes {
    let trail: AuditTrail
    let web: WebShell

    static let path = "/admin/audit"
    /// Entries a page shows.
    static let pageSize = 100
    /// Entries a CSV file holds at most (a file past that asks for narrower filters).
    static let fileLimit = 100_000

    func register(on routes: Routes) {
        routes.on(.get, Self.path, .admin) { request, _ in try await page(request) }
        routes.on(.get, Self.path + ".csv", .admin) { request, _ -> Response in
            let (filter, errors) = Self.filter(request.queryForm)
            guard errors.isEmpty else { throw ValidationFailure(errors) }
            let rows = try await trail.entries(filter, limit: Self.fileLimit).map { entry in
                [entry.at.formatted(.iso8601), entry.actor, entry.action, entry.target, entry.detail, entry.address]
            }
            let file = try RecordFiles.csv(header: ["at", "who", "action", "target", "detail", "address"], rows: rows)
            return RecordsRoutes.download(file, as: "audit.csv")
        }
    }

    /// The filters a query gives (`who`, `action`, `from`, `to`: dates in UTC, `to` included; `before`: an entry's
    /// id), and what is wrong with them.
    static func filter(_ query: [String: String]) -> (AuditFilter, [FieldError]) {
        var filter = AuditFilter()
        var errors: [FieldError] = []
        func text(_ name: String) -> String? {
            query[name].map { $0.trimmingCharacters(in: .whitespaces) }.flatMap { $0.isEmpty ? nil : $0 }
        }
        filter.actor = text("who")
        filter.action = text("action")
        for (name, isEnd) in [("from", false), ("to", true)] {
            guard let raw = text(name) else { continue }
            guard let day = try? Date(raw + "T00:00:00Z", strategy: .iso8601) else {
                errors.append(FieldError(field: name, message: "Give a date such as 2026-11-28."))
                continue
            }
            if isEnd { filter.until = day.addingTimeInterval(86400) } else { filter.from = day }
        }
        filter.before = text("before").flatMap { Int($0) }
        return (filter, errors)
    }

    func page(_ request: Request) async throws -> Response {
        let query = request.queryForm
        let (filter, errors) = Self.filter(query)
        let entries = errors.isEmpty ? try await trail.entries(filter, limit: Self.pageSize + 1) : []
        let actions = try await trail.actions()
        let shown = entries.prefix(Self.pageSize)
        // The same filters, for the file and the next page (a form's query, as the browser sends it).
        var kept = URLComponents()
        kept.queryItems = ["who", "action", "from", "to"].compactMap { name in
            query[name].flatMap { $0.isEmpty ? nil : URLQueryItem(name: name, value: $0) }
        }
        let filters = kept.percentEncodedQuery ?? ""
        let older =
            entries.count > Self.pageSize
            ? Self.path + "?"
                + [filters, "before=\(shown.last?.id ?? 0)"].filter { !$0.isEmpty }.joined(separator: "&")
            : nil
        let messages = Dictionary(errors.map { ($0.field, $0.message) }) { first, _ in first }
        return try web.page(
            request, template: "audit-admin", status: errors.isEmpty ? .ok : .unprocessableContent,
            title: { $0("audit.title") }
        ) { t in
            AuditAdminPage(
                who: query["who"] ?? "", from: query["from"] ?? "", to: query["to"] ?? "",
                actions: actions.map { .init(name: $0, selected: $0 == query["action"]) },
                form: FormValues(values: [:], errors: messages),
                entries: shown.map {
                    .init(
                        at: Self.time($0.at), actor: $0.actor, action: $0.action, target: $0.target, detail: $0.detail,
                        address: $0.address)
                },
                hasEntries: !shown.isEmpty,
                download: Self.path + ".csv" + (filters.isEmpty ? "" : "?" + filters), older: older,
                keeps: t("audit.keeps", count: trail.days))
        }
    }

    /// `2026-11-28 06:01 UTC`.
    static func time(_ date: Date) -> String {
        let text = date.formatted(.iso8601)
        return text.prefix(10) + " " + text.dropFirst(11).prefix(8) + " UTC"
    }
}

/// `/admin/audit`.
struct AuditAdminPage {
    let who: String
    let from: String
    let to: String
    let actions: [Action]
    let form: FormValues
    let entries: [Entry]
    let hasEntries: Bool
    let download: String
    let older: String?
    let keeps: String

    struct Action {
        let name: String
        let selected: Bool
    }

    struct Entry {
        let at: String
        let actor: String
        let action: String
        let target: String
        let detail: String
        let address: String
    }
}
