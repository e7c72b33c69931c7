import CSV
import Foundation
import QuadCore

/// Every feature's record sets (`Feature.recordSets`), read from and written to CSV files with yaslab's CSV.swift:
/// the operations `GET`/`PUT /api/records/{kind}`, the command `quad import`/`quad export`, and `/admin/records`.
package struct RecordFiles: Sendable {
    let sets: [String: any RecordSet]
    let calendars: [String: any CalendarExport]

    package init(_ sets: [any RecordSet], calendars: [any CalendarExport] = []) {
        self.sets = Dictionary(sets.map { ($0.kind, $0) }) { first, _ in first }
        self.calendars = Dictionary(calendars.map { ($0.kind, $0) }) { first, _ in first }
    }

    /// The kinds, in the order of the admin's page.
    package var kinds: [String] { ["rooms", "people", "books"].filter { sets[$0] != nil } }
    /// The kinds exported as calendars.
    package var calendarKinds: [String] { calendars.keys.sorted() }

    /// An exported file: its text and media type.
    package enum File {
        case csv(String)
        case calendar(String)
    }

    /// More rows than this is not a file an admin means to send in one go (and would hold a transaction long).
    package static let maximumRows = 20_000

    func set(_ kind: String) throws -> any RecordSet {
        guard let set = sets[kind] else {
            if calendars[kind] != nil {
                throw Problem.notFound("The \(kind) are exported as a calendar, never imported.")
            }
            throw Problem.notFound("Quad has no records called \(kind): \(kinds.joined(separator: ", ")).")
        }
        return set
    }

    /// The kind's records as a CSV file (a header, then a row per record, with CRLF line ends: RFC 4180), or as an
    /// iCalendar file for a kind exported so.
    package func export(_ kind: String) async throws -> File {
        if let calendar = calendars[kind] { return .calendar(try await calendar.calendar()) }
        let set = try set(kind)
        return .csv(try Self.csv(header: set.columns, rows: try await set.rows()))
    }

    /// A CSV file (RFC 4180, CRLF line ends), each cell a spreadsheet would run as a formula made safe
    /// (`SpreadsheetSafe`): the one writer of Quad's CSV files (these, the audit trail's).
    package static func csv(header: [String], rows: [[String]]) throws -> String {
        let writer = try CSVWriter(stream: .toMemory(), newline: .crlf)
        try writer.write(row: header)
        for row in rows {
            try writer.write(row: row.map(SpreadsheetSafe.escape))
        }
        writer.stream.close()
        guard let data = writer.stream.property(forKey: .dataWrittenToMemoryStreamKey) as? Data else { return "" }
        return String(decoding: data, as: UTF8.self) + "\r\n"
    }

    /// Reads `text` as the kind's CSV file and applies it (`RecordSet.apply`): all rows or none.
    package func importFile(_ kind: String, _ text: String) async throws -> ImportSummary {
        let set = try set(kind)
        let (rows, errors) = try Self.rows(text, for: set)
        let summary = try await set.apply(rows, errors: RowErrors(errors))
        RequestInfo.current.audit.add(
            "\(kind): \(summary.added) added, \(summary.changed) changed, \(summary.unchanged) unchanged")
        return summary
    }

    /// The file's rows, keyed by its header: 422 for a file that is not CSV, a header with a column the kind does
    /// not have or a required column missing; a row with more or fewer fields than the header is left out, its error
    /// returned for the record set to add to its own.
    static func rows(_ text: String, for set: any RecordSet) throws -> (rows: [RecordRow], errors: [FieldError]) {
        // A spreadsheet's UTF-8 export often starts with a byte order mark.
        let text = text.hasPrefix("\u{FEFF}") ? String(text.dropFirst()) : text
        guard !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            throw ValidationFailure(
                field: "file", message: "The file is empty: send a header row, then a row per record.")
        }
        let reader: CSVReader
        do {
            reader = try CSVReader(string: text, hasHeaderRow: true)
        } catch {
            throw ValidationFailure(field: "file", message: "This is not a CSV file Quad can read.")
        }
        // (A name is said back in messages: no longer than any column's could be.)
        let header = (reader.headerRow ?? []).map {
            String($0.trimmingCharacters(in: .whitespaces).lowercased().prefix(40))
        }
        var errors: [FieldError] = []
        for (index, name) in header.enumerated() where header.firstIndex(of: name) != index {
            errors.append(FieldError(field: name, message: "The column \(name) is there twice.", row: 1))
        }
        for name in Set(header) where !set.columns.contains(name) {
            errors.append(
                FieldError(
                    field: name,
                    message: "There is no column \(name) in \(set.kind): \(set.columns.joined(separator: ", ")).",
                    row: 1))
        }
        for name in set.required where !header.contains(name) {
            errors.append(FieldError(field: name, message: "The column \(name) is missing.", row: 1))
        }
        guard errors.isEmpty else { throw ValidationFailure(errors) }
        var rows: [RecordRow] = []
        var skipped = 0
        while let fields = reader.next() {
            let number = rows.count + skipped + 2
            guard rows.count < maximumRows else {
                throw ValidationFailure(
                    [FieldError(field: "file", message: "Send at most \(maximumRows) rows at once.", row: number)])
            }
            // A blank line (a spreadsheet's last one) is no record.
            if fields.allSatisfy({ $0.isEmpty }) {
                skipped += 1
                continue
            }
            guard fields.count == header.count else {
                errors.append(
                    FieldError(
                        field: "", message: "This row has \(fields.count) fields; the header has \(header.count).",
                        row: number))
                skipped += 1
                continue
            }
            rows.append(
                RecordRow(
                    number: number,
                    values: Dictionary(zip(header, fields.map(SpreadsheetSafe.unescape))) { first, _ in first }))
        }
        if let error = reader.error {
            throw ValidationFailure(
                [
                    FieldError(
                        field: "file", message: "The file cannot be read past here (\(error)).",
                        row: rows.count + skipped + 2)
                ])
        }
        return (rows, errors)
    }
}

/// A cell a spreadsheet would run as a formula (`=`, `+`, `-`, `@`, a tab or a carriage return first, after any
/// apostrophes) is written after one more apostrophe, which spreadsheets show as text (OWASP's advice against CSV
/// injection), and read back without it: an export imports exactly as it was.
enum SpreadsheetSafe {
    static let triggers: Set<Character> = ["=", "+", "-", "@", "\t", "\r"]

    static func escape(_ value: String) -> String { marked(value) ? "'" + value : value }

    static func unescape(_ value: String) -> String {
        value.first == "'" && marked(value) ? String(value.dropFirst()) : value
    }

    private static func marked(_ value: Substring) -> Bool {
        value.first { $0 != "'" }.map(triggers.contains) ?? false
    }

    private static func marked(_ value: String) -> Bool { marked(value[...]) }
}
