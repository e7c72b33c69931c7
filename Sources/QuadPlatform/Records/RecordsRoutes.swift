import Foundation
import Hummingbird
import QuadCore

/// `/admin/records`: each kind of record as a CSV file to download, and a form to send one back (a file upload, no
/// JavaScript needed). A refused file is shown with each row and field at fault, and nothing applied.
struct RecordsRoutes {
    let records: RecordFiles
    let web: WebShell

    static let path = "/admin/records"

    func register(on routes: Routes) {
        routes.on(.get, Self.path, .admin) { request, _ in try page(request, outcome: nil) }
        routes.on(.get, Self.path + "/:file", .admin) { request, context -> Response in
            let file = context.parameters.get("file") ?? ""
            let kind = String(file.prefix { $0 != "." })
            switch (try await records.export(kind), file.dropFirst(kind.count)) {
            case (.csv(let text), ".csv"): return Self.download(text, as: file)
            case (.calendar(let text), ".ics"):
                return Self.download(text, as: file, type: "text/calendar; charset=utf-8")
            default: throw Problem.notFound("Nothing is at \(request.uri.path).")
            }
        }
        // (One parameter name for both: the router keeps one per place in a path.)
        routes.on(.post, Self.path + "/:file", .admin, upload: true) { request, context -> Response in
            try await send(request, kind: context.parameters.get("file") ?? "")
        }
    }

    /// A file to save (never kept by a cache: it may list people). `name` is a kind Quad has, never a client's words.
    static func download(_ text: String, as name: String, type: String = "text/csv; charset=utf-8") -> Response {
        Response(
            status: .ok,
            headers: [
                .contentType: type, .cacheControl: "no-store",
                .contentDisposition: "attachment; filename=\"\(name)\"",
            ], body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    /// The form's fields: the file's text (MultipartKit reads a file part as text too).
    private struct Upload: Decodable {
        var file: String?
    }

    func send(_ request: Request, kind: String) async throws -> Response {
        var request = request
        _ = try records.set(kind)
        let upload = try await request.multipartForm(Upload.self, limit: BodyLimit.upload)
        do {
            let summary = try await records.importFile(kind, upload.file ?? "")
            return try page(request, outcome: (kind, .applied(summary)))
        } catch let failure as ValidationFailure {
            return try page(request, outcome: (kind, .refused(failure.errors)), status: .unprocessableContent)
        }
    }

    enum Outcome {
        case applied(ImportSummary)
        case refused([FieldError])
    }

    func page(
        _ request: Request, outcome: (kind: String, Outcome)?, status: HTTPResponse.Status = .ok
    ) throws -> Response {
        try web.page(request, template: "records-admin", status: status, title: { $0("records.title") }) { t in
            RecordsAdminPage(
                kinds: records.kinds.map { section($0, outcome: outcome?.kind == $0 ? outcome?.1 : nil, t: t) },
                calendars: records.calendarKinds.map {
                    .init(kind: $0, title: t("records.\($0)"), download: "\(Self.path)/\($0).ics")
                })
        }
    }
}

extension RecordsRoutes {
    /// A kind's section, with what became of the file just sent for it, if one was.
    func section(_ kind: String, outcome: Outcome?, t: Localizer) -> RecordsAdminPage.Kind {
        var applied: String?
        var errors: [FieldError] = []
        switch outcome {
        case .applied(let summary):
            applied = t(
                "records.applied",
                [
                    "added": t("records.added", count: summary.added),
                    "changed": t("records.changed", count: summary.changed),
                    "unchanged": t("records.unchanged", count: summary.unchanged),
                ])
        case .refused(let all): errors = all
        case nil: break
        }
        let shown = errors.prefix(RecordsAdminPage.shownErrors).map {
            RecordsAdminPage.Error(
                row: $0.row.map(String.init) ?? "", field: $0.field.isEmpty ? "—" : $0.field, message: $0.message)
        }
        let more = errors.count - shown.count
        return .init(
            kind: kind, title: t("records.\(kind)"), download: "\(Self.path)/\(kind).csv",
            action: "\(Self.path)/\(kind)",
            applied: applied, errors: shown, hasErrors: !shown.isEmpty,
            errorsTitle: t("records.refused", count: errors.count),
            moreErrors: more > 0 ? t("records.moreErrors", count: more) : nil)
    }
}

/// `/admin/records`: a section per kind of record.
struct RecordsAdminPage {
    /// A file with many errors shows the first ones: the page stays light, and they are usually the same mistake.
    static let shownErrors = 200

    let kinds: [Kind]
    /// What is only exported, as a calendar (everyone's bookings).
    let calendars: [Calendar]

    struct Calendar {
        let kind: String
        let title: String
        let download: String
    }

    struct Kind {
        let kind: String
        let title: String
        let download: String
        let action: String
        let applied: String?
        let errors: [Error]
        let hasErrors: Bool
        let errorsTitle: String
        let moreErrors: String?
    }

    struct Error {
        let row: String
        let field: String
        let message: String
    }
}
