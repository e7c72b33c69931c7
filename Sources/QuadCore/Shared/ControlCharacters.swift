/// What stored text may not contain, the same on every platform and as the contract's patterns say it: control
/// characters (Unicode Cc) and the invisible format characters of the Basic Multilingual Plane (Cf: soft
/// hyphen, zero-width and bidirectional marks…). Foundation's `CharacterSet.controlCharacters` is not used:
/// on Linux it also counts private-use characters of the supplementary planes.
extension Unicode.Scalar {
    public var isControlOrFormat: Bool {
        switch properties.generalCategory {
        case .control: true
        case .format: value <= 0xFFFF
        default: false
        }
    }
}

extension StringProtocol {
    /// Whether any character is a control or format character (`Unicode.Scalar.isControlOrFormat`).
    public var hasControlCharacters: Bool { unicodeScalars.contains(where: \.isControlOrFormat) }
}
