import QuadCore

/// A kind of record an admin moves in and out of Quad as a CSV file (`quad import rooms rooms.csv`,
/// `/admin/records`): rooms, people, books. Its feature reads and writes it with the validators and store functions
/// its API uses, so a row is held to the same rules as the operation that adds one.
package protocol RecordSet: Sendable {
    /// Its name in paths and commands: `rooms`.
    var kind: String { get }
    /// Its columns, in the order an export writes them. An import takes them in any order, may leave out those not
    /// `required`, and names any other column as an error.
    var columns: [String] { get }
    var required: [String] { get }
    /// Every record, as values in `columns`' order, in an order of its own that does not change (two exports of the
    /// same records are the same bytes).
    func rows() async throws -> [[String]]
    /// Checks every row, then applies all of them in one transaction, or none: a `ValidationFailure` whose errors
    /// name each row and field at fault, after those `errors` holds already (rows the file itself got wrong). A row
    /// equal to what Quad holds changes nothing.
    func apply(_ rows: [RecordRow], errors: RowErrors) async throws -> ImportSummary
}

/// Records exported as an iCalendar file, never imported: everyone's room bookings (`quad export bookings`).
package protocol CalendarExport: Sendable {
    /// Its name in paths and commands: `bookings`.
    var kind: String { get }
    func calendar() async throws -> String
}

/// One row of an imported file.
package struct RecordRow: Sendable {
    /// As a spreadsheet numbers it: the header is row 1.
    package let number: Int
    let values: [String: String]

    package init(number: Int, values: [String: String]) {
        self.number = number
        self.values = values
    }

    /// The column's value; nil when the file has no such column (an empty cell is "").
    package subscript(_ column: String) -> String? { values[column] }
}

/// The errors of an import, gathered over every row before anything is applied.
package struct RowErrors {
    package private(set) var errors: [FieldError]

    package init(_ errors: [FieldError] = []) { self.errors = errors }

    /// `rule`'s value, or nil with its errors kept against `row` and `column`; with no column, against the fields
    /// the validator names, as the file spells them (the API's `displayName` is the column `display_name`).
    package mutating func check<T>(_ row: RecordRow, _ column: String, _ rule: () throws -> T) -> T? {
        do { return try rule() } catch let failure as ValidationFailure {
            for error in failure.errors {
                add(row, field: column.isEmpty ? Self.column(error.field) : column, error.message)
            }
        } catch let problem as Problem {
            add(row, field: column, problem.detail ?? problem.title)
        } catch {
            add(row, field: column, "This value could not be read.")
        }
        return nil
    }

    /// `studentId` → `student_id`.
    static func column(_ field: String) -> String {
        field.reduce(into: "") { name, character in
            name += character.isUppercase ? "_" + character.lowercased() : String(character)
        }
    }

    package mutating func add(_ row: RecordRow, field: String, _ message: String) {
        errors.append(FieldError(field: field, message: message, row: row.number))
    }

    /// At most this many errors are said (a file wrong throughout is usually one mistake, made on every row).
    static let shown = 1000

    /// Throws them as one 422, row by row, when there are any: the first `shown`, and how many more.
    package func throwIfAny() throws {
        guard !errors.isEmpty else { return }
        let sorted = errors.enumerated().sorted { ($0.1.row ?? 0, $0.0) < ($1.1.row ?? 0, $1.0) }.map(\.1)
        let more = sorted.count - Self.shown
        throw ValidationFailure(
            Array(sorted.prefix(Self.shown))
                + (more > 0 ? [FieldError(field: "file", message: "And \(more) more errors after these.")] : []))
    }

    /// Runs `step`, which applies `row` inside the import's transaction: a refusal there (a room's seats below those
    /// booked, a taken student id) names the row and ends the import, and the transaction with it.
    package static func at<T>(_ row: RecordRow, field: String = "", _ step: () async throws -> T) async throws -> T {
        do { return try await step() } catch let failure as ValidationFailure {
            throw ValidationFailure(
                failure.errors.map { FieldError(field: column($0.field), message: $0.message, row: row.number) })
        } catch let problem as Problem where problem.status.code < 500 {
            throw ValidationFailure([
                FieldError(field: field, message: problem.detail ?? problem.title, row: row.number)
            ])
        }
    }
}
