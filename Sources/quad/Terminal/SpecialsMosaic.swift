import Foundation
import QuadCore
import QuadKit

/// The specials mosaic drawn with box-drawing characters, `width` columns wide: QuadCore's row layout
/// (`SpecialsLayout`), each tile a box as many columns wide as its units take of the width, prices
/// right-aligned on its first lines (the original struck through, with ANSI, only when the terminal
/// supports it and the original is numerically greater), then its name, wrapped.
enum SpecialsMosaic {
    struct Cell {
        var character: Character = " "
        var struck = false
    }

    /// Lines a tile `height` units tall takes when a unit is `columnsPerUnit` columns wide: a terminal cell
    /// is about twice as tall as wide, and the mosaic is drawn at half that height again to stay readable.
    static func lines(height: Int, columnsPerUnit: Double) -> Int {
        max(4, Int((Double(height) * columnsPerUnit / 4).rounded()))
    }

    static func render(
        _ list: SpecialsList, width: Int, style: TerminalStyle = .plain, language: Language = .english
    ) -> String {
        let specials = list.managerSpecials
        guard !specials.isEmpty else { return "No specials today.\n" }
        let width = max(width, 8)
        let canvas = max(list.canvasUnit, 1)
        let columnsPerUnit = Double(width) / Double(canvas)
        let currency = Currency(code: list.currency)
        var output = ""
        for row in SpecialsLayout.rows(specials, canvas: canvas) {
            let height = row.tiles.map { lines(height: specials[$0].height, columnsPerUnit: columnsPerUnit) }.max() ?? 4
            var grid = Array(repeating: Array(repeating: Cell(), count: width), count: height)
            var offset = row.inset
            for index in row.tiles {
                let special = specials[index]
                let units = min(max(special.width, 1), canvas)
                let start = Int((offset * columnsPerUnit).rounded())
                let end = min(width, Int(((offset + Double(units)) * columnsPerUnit).rounded()))
                offset += Double(units)
                let tileHeight = lines(height: special.height, columnsPerUnit: columnsPerUnit)
                draw(
                    special, into: &grid, columns: start..<end, lines: tileHeight, currency: currency,
                    language: language, strike: style.strikethrough)
            }
            for line in grid { output += text(line, strike: style.strikethrough) + "\n" }
        }
        return output
    }

    static func draw(
        _ special: Special, into grid: inout [[Cell]], columns: Range<Int>, lines: Int, currency: Currency,
        language: Language, strike: Bool
    ) {
        guard columns.count >= 2 else { return }
        let left = columns.lowerBound
        let right = columns.upperBound - 1
        for line in 0..<lines {
            let edge = line == 0 || line == lines - 1
            for column in columns {
                let character: Character
                if column == left {
                    character = line == 0 ? "┌" : line == lines - 1 ? "└" : "│"
                } else if column == right {
                    character = line == 0 ? "┐" : line == lines - 1 ? "┘" : "│"
                } else {
                    character = edge ? "─" : " "
                }
                grid[line][column].character = character
            }
        }
        let inner = columns.count - 2
        guard inner > 0, lines > 2 else { return }
        var content: [(text: String, right: Bool, struck: Bool)] = [
            (currency.format(special.price, language: language), true, false)
        ]
        if special.prices.isReduced {
            let original = currency.format(special.originalPrice, language: language)
            if strike {
                content.append((original, true, true))
            } else if original.count + 4 <= inner {
                content.append(("was " + original, true, false))
            }
        }
        let room = lines - 2 - content.count
        if room > 0 {
            for line in wrap(special.displayName, width: inner, lines: room) { content.append((line, false, false)) }
        }
        for (line, item) in content.prefix(lines - 2).enumerated() {
            let text = fit(item.text, inner)
            let start = left + 1 + (item.right ? inner - text.count : 0)
            for (position, character) in text.enumerated() {
                grid[line + 1][start + position] = Cell(character: character, struck: item.struck)
            }
        }
    }

    /// `text` cut to `width` characters, ending with "…" when cut.
    static func fit(_ text: String, _ width: Int) -> String {
        let text = TerminalText.visible(text)
        guard text.count > width else { return text }
        guard width > 1 else { return String(text.prefix(width)) }
        return String(text.prefix(width - 1)) + "…"
    }

    /// Words in lines of at most `width` characters, at most `lines` of them (the last ending in "…" when
    /// words are left over; a word longer than a line is cut).
    static func wrap(_ text: String, width: Int, lines: Int) -> [String] {
        var result: [String] = []
        var current = ""
        var words = text.split(separator: " ").map(String.init)[...]
        while let word = words.first {
            if current.isEmpty {
                current = word
                words.removeFirst()
            } else if current.count + 1 + word.count <= width {
                current += " " + word
                words.removeFirst()
            } else {
                result.append(current)
                current = ""
                if result.count == lines { break }
            }
        }
        if !current.isEmpty, result.count < lines { result.append(current) }
        result = result.map { fit($0, width) }
        if !words.isEmpty || result.count > lines {
            result = Array(result.prefix(lines))
            if var last = result.popLast() {
                last = last.count >= width ? String(last.prefix(width - 1)) + "…" : last + "…"
                result.append(fit(last, width))
            }
        }
        return result
    }

    /// A line of cells; struck runs between ANSI strikethrough on and off.
    static func text(_ cells: [Cell], strike: Bool) -> String {
        var line = ""
        var struck = false
        for cell in cells {
            if strike, cell.struck != struck {
                line += cell.struck ? "\u{1B}[9m" : "\u{1B}[29m"
                struck = cell.struck
            }
            line.append(cell.character)
        }
        if struck { line += "\u{1B}[29m" }
        while line.hasSuffix(" ") { line.removeLast() }
        return line
    }
}
