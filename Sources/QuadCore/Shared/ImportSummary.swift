/// What an import of a CSV file did (`PUT /api/records/{kind}`), for the server and the kit alike.
public struct ImportSummary: Sendable, Equatable, Codable {
    public var added = 0
    public var changed = 0
    /// Rows equal to what Quad held.
    public var unchanged = 0

    public init(added: Int = 0, changed: Int = 0, unchanged: Int = 0) {
        self.added = added
        self.changed = changed
        self.unchanged = unchanged
    }
}
