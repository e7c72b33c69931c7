/// One field at fault in a request or a form, with a message a person can act on.
public struct FieldError: Sendable, Codable, Equatable {
    /// The field's name as the request or form spells it (`price`, `person`).
    public var field: String
    public var message: String
    /// In an imported file, the row it is on, as a spreadsheet numbers it (the header is row 1); nil elsewhere.
    public var row: Int?

    public init(field: String, message: String, row: Int? = nil) {
        self.field = field
        self.message = message
        self.row = row
    }
}

/// Input that breaks the domain's rules: each field at fault, in the order they were checked.
public struct ValidationFailure: Error, Sendable, Equatable {
    public var errors: [FieldError]

    public init(_ errors: [FieldError]) {
        self.errors = errors
    }

    public init(field: String, message: String) {
        self.errors = [FieldError(field: field, message: message)]
    }
}
