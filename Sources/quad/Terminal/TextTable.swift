import Foundation
import QuadCore
import QuadKit

/// How terminal output may be decorated: colour only on a terminal, never when `NO_COLOR` is set.
struct TerminalStyle: Sendable, Equatable {
    var colour: Bool
    /// Whether ANSI strikethrough (SGR 9) shows: a styled terminal other than the Linux console.
    var strikethrough: Bool

    init(colour: Bool, strikethrough: Bool? = nil) {
        self.colour = colour
        self.strikethrough = strikethrough ?? colour
    }

    static let plain = TerminalStyle(colour: false)

    /// Colour when `isTTY` and `NO_COLOR` is absent or empty (https://no-color.org), and TERM is not `dumb`.
    static func detect(isTTY: Bool, environment: [String: String]) -> TerminalStyle {
        let noColor = environment["NO_COLOR"].map { !$0.isEmpty } ?? false
        let colour = isTTY && !noColor && environment["TERM"] != "dumb"
        let term = environment["TERM"] ?? ""
        return TerminalStyle(colour: colour, strikethrough: colour && term != "linux" && !term.hasPrefix("vt"))
    }

    enum Colour: String, Sendable {
        case green = "32"
        case yellow = "33"
        case red = "31"
        case dim = "2"
        case bold = "1"
    }

    /// `text` made visible (`TerminalText.visible`), in `colour` when colour shows: the only escapes that reach
    /// the terminal are the ones written here.
    func paint(_ text: String, _ colour: Colour?) -> String {
        let text = TerminalText.visible(text)
        guard self.colour, let colour, !text.isEmpty else { return text }
        return "\u{1B}[\(colour.rawValue)m\(text)\u{1B}[0m"
    }
}

/// A table of aligned columns in plain text: a header, then rows; numbers right-aligned.
struct TextTable: Sendable {
    enum Alignment: Sendable { case left, right }

    struct Column: Sendable {
        var title: String
        var alignment: Alignment
        init(_ title: String, _ alignment: Alignment = .left) {
            self.title = title
            self.alignment = alignment
        }
    }

    /// A cell: its text and an optional colour (applied after padding, so alignment is kept).
    struct Cell: Sendable, ExpressibleByStringLiteral {
        var text: String
        var colour: TerminalStyle.Colour?
        init(_ text: String, _ colour: TerminalStyle.Colour? = nil) {
            self.text = TerminalText.visible(text)
            self.colour = colour
        }
        init(stringLiteral value: String) { self.init(value) }
    }

    var columns: [Column]
    var rows: [[Cell]] = []

    init(columns: [Column]) {
        self.columns = columns
    }

    mutating func add(_ row: [Cell]) { rows.append(row) }

    /// Display width: characters, with East Asian wide ones (and emoji) counting two.
    static func width(_ text: String) -> Int {
        text.unicodeScalars.reduce(0) { total, scalar in
            let value = scalar.value
            if scalar.properties.generalCategory == .nonspacingMark || value == 0x200D
                || (0xFE00...0xFE0F).contains(value)
            {
                return total
            }
            let wide =
                (0x1100...0x115F).contains(value) || (0x2E80...0xA4CF).contains(value)
                || (0xAC00...0xD7A3).contains(value) || (0xF900...0xFAFF).contains(value)
                || (0xFF00...0xFF60).contains(value) || (0x1F300...0x1FAFF).contains(value)
            return total + (wide ? 2 : 1)
        }
    }

    func render(style: TerminalStyle = .plain) -> String {
        var widths = columns.map { Self.width($0.title) }
        for row in rows {
            for (index, cell) in row.enumerated() where index < widths.count {
                widths[index] = max(widths[index], Self.width(cell.text))
            }
        }
        func line(_ cells: [Cell]) -> String {
            var parts: [String] = []
            for (index, column) in columns.enumerated() {
                let cell = index < cells.count ? cells[index] : Cell("")
                let padding = String(repeating: " ", count: widths[index] - Self.width(cell.text))
                let painted = style.paint(cell.text, cell.colour)
                let isLast = index == columns.count - 1
                switch column.alignment {
                case .left: parts.append(isLast ? painted : painted + padding)
                case .right: parts.append(padding + painted)
                }
            }
            // No trailing blanks where the last cells are empty (a mark only some rows carry).
            var text = parts.joined(separator: "  ")
            while text.hasSuffix(" ") { text.removeLast() }
            return text
        }
        let header = line(columns.map { Cell($0.title, .bold) })
        return ([header] + rows.map(line)).joined(separator: "\n") + "\n"
    }
}

/// Text for the `quad` command line and any terminal client.
enum TerminalText {
    /// The one encoder for text from elsewhere (a server, a file) on a terminal: every character that a
    /// terminal would act on rather than show (ESC and the other controls, line breaks, bidirectional overrides,
    /// invisible marks) is shown as a symbol (`␛`, `␊`) or as its code (`<U+202E>`), so a room named
    /// `\e]0;pwned\a` prints as text and cannot move the cursor, recolour or retitle the terminal. `lines`
    /// keeps line feeds, for messages that are several lines.
    static func visible(_ text: String, lines: Bool = false) -> String {
        guard text.unicodeScalars.contains(where: HumanText.isRefused) else { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if !HumanText.isRefused(scalar) || (lines && scalar == "\n") {
                out.append(scalar)
            } else if scalar.value < 0x20 {
                out.append(Unicode.Scalar(0x2400 + scalar.value)!)
            } else if scalar.value == 0x7F {
                out.append("\u{2421}")
            } else {
                out.append(contentsOf: "<U+\(String(scalar.value, radix: 16, uppercase: true))>".unicodeScalars)
            }
        }
        return String(out)
    }

    /// "just now", "42 s ago", "5 min ago", "3 h ago", "2 days ago".
    static func age(_ seconds: TimeInterval) -> String {
        let seconds = max(0, Int(seconds))
        switch seconds {
        case ..<5: return "just now"
        case ..<60: return "\(seconds) s ago"
        case ..<3600: return "\(seconds / 60) min ago"
        case ..<86400: return "\(seconds / 3600) h ago"
        default:
            let days = seconds / 86400
            return days == 1 ? "1 day ago" : "\(days) days ago"
        }
    }

    /// The rooms as a table: name, building, seats free of the seats offered, how many people it holds, status (and
    /// whether you hold a seat).
    static func roomsTable(_ rooms: [Room], booked: Set<String> = [], style: TerminalStyle = .plain) -> String {
        guard !rooms.isEmpty else { return "No rooms match.\n" }
        var table = TextTable(columns: [
            .init("ID"), .init("ROOM"), .init("BUILDING"), .init("FREE", .right), .init("OF", .right),
            .init("HOLDS", .right), .init("STATUS"),
        ])
        for room in rooms {
            let status: TextTable.Cell =
                switch room.availability {
                case .bookable: .init("available", .green)
                case .runningLow: .init("running low", .yellow)
                case .full: .init("full", .red)
                }
            var statusCell = status
            if booked.contains(room.id) { statusCell.text += " · booked by you" }
            table.add([
                .init(room.id, .dim), .init(room.name), .init(room.building), .init(String(room.spots)),
                .init(String(room.seats ?? room.capacity)), .init(String(room.capacity)), statusCell,
            ])
        }
        return table.render(style: style)
    }
}
