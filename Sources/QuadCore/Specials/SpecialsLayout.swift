/// How the mosaic places tiles: the rule of the original brief, as one pure function.
///
/// Tiles keep the server's order. Each row takes tiles while their widths fit in the canvas; a tile
/// that would overflow the current row starts the next one (it never moves ahead of another tile to
/// fill a gap). A row narrower than the canvas is centred: it starts `(canvas - width) / 2` units in.
/// A tile wider than the canvas (which validation refuses) is counted as the canvas's width, alone on its row.
public enum SpecialsLayout {
    public struct Row: Sendable, Equatable {
        /// Positions in the input, in order.
        public var tiles: [Int]
        /// The sum of the tiles' widths, in units.
        public var width: Int
        /// The gap left of the first tile, in units (a half unit when the free space is odd).
        public var inset: Double

        public init(tiles: [Int], width: Int, inset: Double) {
            self.tiles = tiles
            self.width = width
            self.inset = inset
        }
    }

    /// The rows for tiles of `widths` (in units) on a canvas `canvas` units wide.
    public static func rows(widths: [Int], canvas: Int) -> [Row] {
        precondition(canvas > 0, "the canvas has at least one unit")
        var rows: [Row] = []
        var current: [Int] = []
        var used = 0
        func close() {
            rows.append(Row(tiles: current, width: used, inset: Double(canvas - used) / 2))
        }
        for (index, raw) in widths.enumerated() {
            let width = min(max(raw, 1), canvas)
            if !current.isEmpty, used + width > canvas {
                close()
                current = []
                used = 0
            }
            current.append(index)
            used += width
        }
        if !current.isEmpty { close() }
        return rows
    }

    public static func rows(_ specials: [Special], canvas: Int) -> [Row] {
        rows(widths: specials.map(\.width), canvas: canvas)
    }
}

/// What a tile shows, chosen by its rendered width so larger screens show more.
///
/// On a 390 px phone with 16 units (24.4 px a unit) this gives the original app's rule: the image alone
/// up to 3 units, prices and name without the image up to 5 units, everything from 6 units.
/// The web page applies the same thresholds with CSS container queries on each tile.
public enum TileContent: String, Sendable, CaseIterable {
    /// Image, prices and name.
    case full
    /// Prices and name, no image.
    case text
    /// The image alone.
    case image

    /// Tiles at most this wide (CSS px) show the image alone.
    public static let imageOnlyMaxWidth = 76.0
    /// Tiles at most this wide (CSS px) show no image.
    public static let textOnlyMaxWidth = 124.0

    public init(renderedWidth: Double) {
        if renderedWidth <= Self.imageOnlyMaxWidth {
            self = .image
        } else if renderedWidth <= Self.textOnlyMaxWidth {
            self = .text
        } else {
            self = .full
        }
    }
}
