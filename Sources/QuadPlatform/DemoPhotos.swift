// DemoPhotos.swift
//
// Procedural, deterministic stand-in "photos" for demo data: rooms (meeting rooms and study spaces)
// and square product tiles with a big letter. Everything is drawn with anti-aliased signed-distance
// shapes on a floating-point canvas and encoded with `PNGEncoder`.
//
// The pictures are built to compress well with a fixed-Huffman DEFLATE: large areas vary in only
// one direction (vertical gradients, flat colours), there is no noise, and the lighting/vignette is
// an *integer* offset that is a sum of a column term and a row term, so flat or vertically graded
// regions stay exactly repeatable from row to row after the lighting is applied.
//
// The same seed always gives the same bytes: the only randomness is a local SplitMix64, and the
// drawing uses only + - * / and sqrt (no libm transcendental functions that could differ by platform).

import Foundation  // only for libm (rounding, sqrt) on Linux; nothing else from Foundation is used

package enum DemoPhotos {
    /// PNG bytes of a room picture (default 480×322, i.e. the 328:220 aspect ratio).
    package static func room(seed: Int, width: Int = 480, height: Int = 322) -> [UInt8] {
        precondition(width >= 16 && height >= 16, "room pictures need at least 16×16 pixels")
        var random = SplitMix64(seed: UInt64(bitPattern: Int64(seed)))
        var canvas = Canvas(width: width, height: height)
        let painter = RoomPainter(random: &random, width: Double(width), height: Double(height))
        painter.paint(on: &canvas, random: &random)
        return PNGEncoder.encode(width: width, height: height, rgb: canvas.bytes())
    }

    /// PNG bytes of a square "product" tile: a soft background in `hue` (0...1, wraps around)
    /// with a large blocky letter. Letters a–z are upper-cased; other characters draw a "?".
    package static func tile(letter: Character, hue: Double, size: Int) -> [UInt8] {
        precondition(size >= 8, "tiles need at least 8×8 pixels")
        let s = Double(size)
        var canvas = Canvas(width: size, height: size)
        let light = RGB.hsl(hue, 0.55, 0.90)
        let mid = RGB.hsl(hue, 0.50, 0.80)
        let strong = RGB.hsl(hue, 0.55, 0.45)

        canvas.fill(.rect(0, 0, s, s), color: .vertical(light, at: 0, mid, at: s))
        // A rounded badge with a soft drop shadow behind the letter.
        let badge = (x0: s * 0.14, y0: s * 0.12, x1: s * 0.86, y1: s * 0.84)
        canvas.fill(
            .roundedRect(badge.x0, badge.y0 + s * 0.03, badge.x1, badge.y1 + s * 0.03, radius: s * 0.12),
            color: .solid(strong * 0.5), soft: s * 0.06, opacity: 0.35)
        canvas.fill(
            .roundedRect(badge.x0, badge.y0, badge.x1, badge.y1, radius: s * 0.12),
            color: .vertical(strong * 1.12, at: badge.y0, strong * 0.9, at: badge.y1))

        // The 5×7 glyph, one cell per "on" bit, centred on the badge; a shadow copy goes first.
        let rows = glyphs[letter.uppercased().first ?? "?"] ?? glyphs["?"] ?? []
        let cell = s * 0.085
        let left = (s - 5 * cell) / 2
        let top = (badge.y0 + badge.y1 - 7 * cell) / 2
        canvas.fillCells(
            rows, x: left + cell * 0.12, y: top + cell * 0.16, cell: cell,
            color: strong * 0.55, opacity: 0.6)
        canvas.fillCells(rows, x: left, y: top, cell: cell, color: RGB(252, 252, 248), opacity: 1)
        return PNGEncoder.encode(width: size, height: size, rgb: canvas.bytes())
    }

    /// 5×7 bitmap font: one byte per row, top to bottom; bit 4 is the leftmost column.
    private static let glyphs: [Character: [UInt8]] = [
        "A": [0x0E, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11], "B": [0x1E, 0x11, 0x11, 0x1E, 0x11, 0x11, 0x1E],
        "C": [0x0E, 0x11, 0x10, 0x10, 0x10, 0x11, 0x0E], "D": [0x1E, 0x11, 0x11, 0x11, 0x11, 0x11, 0x1E],
        "E": [0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x1F], "F": [0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x10],
        "G": [0x0E, 0x11, 0x10, 0x17, 0x11, 0x11, 0x0F], "H": [0x11, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11],
        "I": [0x0E, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0E], "J": [0x07, 0x02, 0x02, 0x02, 0x02, 0x12, 0x0C],
        "K": [0x11, 0x12, 0x14, 0x18, 0x14, 0x12, 0x11], "L": [0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x1F],
        "M": [0x11, 0x1B, 0x15, 0x15, 0x11, 0x11, 0x11], "N": [0x11, 0x11, 0x19, 0x15, 0x13, 0x11, 0x11],
        "O": [0x0E, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E], "P": [0x1E, 0x11, 0x11, 0x1E, 0x10, 0x10, 0x10],
        "Q": [0x0E, 0x11, 0x11, 0x11, 0x15, 0x12, 0x0D], "R": [0x1E, 0x11, 0x11, 0x1E, 0x14, 0x12, 0x11],
        "S": [0x0F, 0x10, 0x10, 0x0E, 0x01, 0x01, 0x1E], "T": [0x1F, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04],
        "U": [0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E], "V": [0x11, 0x11, 0x11, 0x11, 0x11, 0x0A, 0x04],
        "W": [0x11, 0x11, 0x11, 0x15, 0x15, 0x15, 0x0A], "X": [0x11, 0x11, 0x0A, 0x04, 0x0A, 0x11, 0x11],
        "Y": [0x11, 0x11, 0x0A, 0x04, 0x04, 0x04, 0x04], "Z": [0x1F, 0x01, 0x02, 0x04, 0x08, 0x10, 0x1F],
        "?": [0x0E, 0x11, 0x01, 0x02, 0x04, 0x00, 0x04],
    ]
}

// MARK: - Room scene

extension DemoPhotos {
    /// Lays out a room in one-point perspective and paints it. Room coordinates: u runs from the
    /// left wall (0) to the right wall (1), v from the ceiling (0) to the floor (1), z from the
    /// camera plane (0) to the back wall (1).
    private struct RoomPainter {
        package let width: Double
        package let height: Double
        let vanishX: Double
        let vanishY: Double
        let near: Double  // screen scale of the z = 0 plane; > 1 puts the camera inside the room
        let depth: Double  // how fast things shrink with z

        package init(random: inout SplitMix64, width: Double, height: Double) {
            self.width = width
            self.height = height
            vanishX = width * random.range(0.40, 0.60)
            vanishY = height * random.range(0.40, 0.47)
            near = random.range(1.08, 1.18)
            depth = near / random.range(0.50, 0.60) - 1  // the back wall ends up at 50–60 % scale
        }

        func scale(_ z: Double) -> Double { near / (1 + depth * z) }

        func point(_ u: Double, _ v: Double, _ z: Double) -> Point {
            let s = scale(z)
            return Point(x: vanishX + (u * width - vanishX) * s, y: vanishY + (v * height - vanishY) * s)
        }

        /// A rectangle lying in a horizontal plane (floor, table top, ceiling) at height v.
        package func flat(_ u0: Double, _ u1: Double, v: Double, _ z0: Double, _ z1: Double) -> Shape {
            .polygon([point(u0, v, z0), point(u1, v, z0), point(u1, v, z1), point(u0, v, z1)])
        }

        /// A rectangle facing the camera (constant z), e.g. something on the back wall.
        func upright(
            _ u0: Double, _ u1: Double, _ v0: Double, _ v1: Double, z: Double, radius: Double = 0
        ) -> Shape {
            let a = point(u0, v0, z)
            let b = point(u1, v1, z)
            return radius > 0 ? .roundedRect(a.x, a.y, b.x, b.y, radius: radius * scale(z)) : .rect(a.x, a.y, b.x, b.y)
        }

        /// A rectangle in a plane of constant u (parallel to the side walls).
        func sideways(u: Double, _ z0: Double, _ z1: Double, _ v0: Double, _ v1: Double) -> Shape {
            .polygon([point(u, v0, z0), point(u, v0, z1), point(u, v1, z1), point(u, v1, z0)])
        }

        package func paint(on canvas: inout Canvas, random: inout SplitMix64) {
            let wall = random.pick(Palette.walls)
            let backWall = random.chance(0.35) ? random.pick(Palette.accentWalls) : wall
            let floor = random.pick(Palette.floors)
            let ceiling = RGB(242, 241, 236)
            let windowOnLeft = random.chance(0.5)
            let isMeetingRoom = random.chance(0.55)

            // Side walls first, as a full-canvas fill; ceiling, floor and back wall cover the rest.
            // Side walls darken towards the back; the window side gets more light.
            let leftTone = windowOnLeft ? 1.02 : 0.90
            let rightTone = windowOnLeft ? 0.88 : 1.0
            let backLeft = point(0, 0, 1).x
            let backRight = point(1, 0, 1).x
            canvas.fill(
                .rect(0, 0, width, height),
                color: .custom { x, _ in
                    if x < self.vanishX {
                        let t = min(1, max(0, x / max(1, backLeft)))
                        return wall * (leftTone - 0.08 * t)
                    }
                    let t = min(1, max(0, (self.width - x) / max(1, self.width - backRight)))
                    return wall * (rightTone - 0.08 * t)
                })
            // Skirting boards along the side walls.
            let skirt = wall * 0.97 + RGB(6, 6, 6)
            canvas.fill(sideways(u: 0, 0, 1, 0.965, 1), color: .solid(skirt * 0.9))
            canvas.fill(sideways(u: 1, 0, 1, 0.965, 1), color: .solid(skirt * 0.85))

            let ceilingBack = point(0, 0, 1).y
            canvas.fill(flat(0, 1, v: 0, 0, 1), color: .vertical(ceiling, at: 0, ceiling * 0.9, at: ceilingBack))
            let floorBack = point(0, 1, 1).y
            canvas.fill(
                flat(0, 1, v: 1, 0, 1),
                color: .vertical(
                    floor.color * 0.82, at: floorBack,
                    floor.color * 1.04, at: height))
            if floor.planks > 0 {
                paintPlanks(on: &canvas, random: &random, count: floor.planks, color: floor.color)
            }
            canvas.fill(
                upright(0, 1, 0, 1, z: 1),
                color: .vertical(
                    backWall * 1.03, at: ceilingBack,
                    backWall * 0.95, at: floorBack))
            canvas.fill(upright(0, 1, 0.965, 1, z: 1), color: .solid(skirt * 0.95))

            paintCeilingLights(on: &canvas, random: &random)
            paintWindow(on: &canvas, random: &random, onLeft: windowOnLeft)
            if isMeetingRoom {
                paintScreenOrBoard(on: &canvas, random: &random, windowOnLeft: windowOnLeft)
            } else {
                paintBookshelf(on: &canvas, random: &random, windowOnLeft: windowOnLeft)
            }
            if random.chance(0.7) {
                paintPlant(on: &canvas, random: &random, u: windowOnLeft ? 0.93 : 0.07, z: 0.93)
            }
            if isMeetingRoom {
                paintMeetingTable(on: &canvas, random: &random)
            } else {
                paintStudyTables(on: &canvas, random: &random)
            }
            canvas.lighting = Lighting(
                width: canvas.width, height: canvas.height, random: &random,
                windowOnLeft: windowOnLeft)
        }

        /// Floorboards laid across the room: their long seams are horizontal on screen (perspective
        /// only changes the spacing), which keeps rows repeatable; short joints are staggered per board.
        private func paintPlanks(on canvas: inout Canvas, random: inout SplitMix64, count: Int, color: RGB) {
            let seam = Paint.solid(color * 0.72)
            for i in 0..<count {
                let za = Double(i) / Double(count)
                let zb = Double(i + 1) / Double(count)
                let a = point(0, 1, zb)
                let b = point(1, 1, zb)
                canvas.fill(.rect(a.x, a.y - 0.5, b.x, a.y + 0.5), color: seam, opacity: 0.7)
                var u = random.range(0, 0.3)
                while u < 1 {
                    canvas.fill(.segment(point(u, 1, za), point(u, 1, zb), width: 1), color: seam, opacity: 0.6)
                    u += random.range(0.35, 0.6)
                }
            }
        }

        private func paintCeilingLights(on canvas: inout Canvas, random: inout SplitMix64) {
            let rows = random.pick([2, 3])
            let panel = RGB(252, 251, 244)
            for row in 0..<rows {
                let z = 0.15 + Double(row) * (0.75 / Double(rows))
                for u in [0.28, 0.62] {
                    let shape = flat(u, u + 0.1, v: 0, z, z + 0.1)
                    canvas.fill(shape, color: .solid(panel), soft: 10 * scale(z), opacity: 0.25)
                    canvas.fill(shape, color: .solid(panel))
                }
            }
        }

        private func paintWindow(on canvas: inout Canvas, random: inout SplitMix64, onLeft: Bool) {
            let sky = random.pick(Palette.skies)
            let frameColor = random.pick([RGB(240, 240, 236), RGB(60, 62, 66), RGB(150, 110, 80)])
            let u = onLeft ? 0.0 : 1.0
            let z0 = random.range(0.15, 0.3)
            let z1 = random.range(0.62, 0.8)
            let v0 = 0.2
            let v1 = random.range(0.58, 0.66)
            let frame = sideways(u: u, z0 - 0.02, z1 + 0.02, v0 - 0.03, v1 + 0.03)
            let glass = sideways(u: u, z0, z1, v0, v1)
            let bottom = point(u, v1, z1).y
            // Light spilling onto the wall around the window.
            canvas.fill(frame, color: .solid(RGB(255, 250, 235)), soft: 24, opacity: 0.3)
            canvas.fill(frame, color: .solid(frameColor))
            canvas.fill(glass, color: .vertical(sky.top, at: point(u, v0, z0).y, sky.bottom, at: bottom))
            // Clouds: soft, flattened ellipses, clipped to the glass.
            for _ in 0..<random.pick([0, 2, 3]) {
                let z = random.range(z0, z1)
                let p = point(u, random.range(v0 + 0.02, v0 + 0.15), z)
                let r = random.range(10, 26) * scale(z)
                canvas.fill(
                    Shape.ellipse(p.x, p.y, r * 0.55, r * 0.3).clipped(to: glass),
                    color: .solid(RGB(255, 255, 255)), soft: 8, opacity: 0.55)
            }
            // The view: a row of trees or buildings at the bottom of the glass.
            let trees = random.chance(0.5)
            var z = z0
            while z < z1 {
                let step = random.range(0.04, 0.09)
                let a = point(u, v1, z)
                let b = point(u, v1, min(z1, z + step))
                let rise = random.range(0.08, 0.2) * height * scale(z)
                if trees {
                    let shape = Shape.ellipse((a.x + b.x) / 2, bottom, abs(b.x - a.x) * 0.8, rise)
                    canvas.fill(
                        shape.clipped(to: glass),
                        color: .vertical(sky.trees * 1.15, at: bottom - rise, sky.trees, at: bottom))
                } else {
                    let shape = Shape.rect(min(a.x, b.x), bottom - rise, max(a.x, b.x), bottom + 4)
                    canvas.fill(shape.clipped(to: glass), color: .solid(sky.buildings * random.range(0.9, 1.1)))
                }
                z += step
            }
            // Mullions: vertical bars at constant z (vertical on screen) and one transom.
            let panes = random.pick([2, 3, 4])
            for i in 1..<panes {
                let zm = z0 + (z1 - z0) * Double(i) / Double(panes)
                canvas.fill(sideways(u: u, zm - 0.006, zm + 0.006, v0, v1), color: .solid(frameColor))
            }
            let vm = v0 + (v1 - v0) * 0.3
            canvas.fill(sideways(u: u, z0, z1, vm - 0.006, vm + 0.006), color: .solid(frameColor))
            // A sill under the window.
            canvas.fill(sideways(u: u, z0 - 0.03, z1 + 0.03, v1 + 0.03, v1 + 0.045), color: .solid(frameColor * 0.92))
        }

        private func paintScreenOrBoard(on canvas: inout Canvas, random: inout SplitMix64, windowOnLeft: Bool) {
            if random.chance(0.5) {
                // A wall display showing a bar chart, centred on the back wall.
                let u0 = random.range(0.3, 0.4)
                let u1 = u0 + 0.3
                canvas.fill(
                    upright(u0 - 0.01, u1 + 0.01, 0.28, 0.56, z: 1, radius: 0.006),
                    color: .solid(RGB(28, 30, 34)))
                let slide = upright(u0, u1, 0.295, 0.545, z: 1)
                canvas.fill(
                    slide,
                    color: .vertical(
                        RGB(246, 247, 250), at: point(0, 0.295, 1).y,
                        RGB(226, 230, 238), at: point(0, 0.545, 1).y))
                canvas.fill(upright(u0 + 0.02, u0 + 0.16, 0.32, 0.335, z: 1), color: .solid(RGB(60, 70, 90)))
                let barColors = [RGB(66, 133, 204), RGB(230, 140, 60), RGB(90, 170, 110), RGB(200, 80, 90)]
                for i in 0..<5 {
                    let bu = u0 + 0.03 + Double(i) * 0.05
                    let top = random.range(0.36, 0.48)
                    canvas.fill(upright(bu, bu + 0.03, top, 0.52, z: 1), color: .solid(barColors[i % barColors.count]))
                }
            } else {
                // A whiteboard on the wall opposite the window, with a few marker strokes.
                let u = windowOnLeft ? 1.0 : 0.0
                let z0 = random.range(0.3, 0.4)
                let z1 = z0 + random.range(0.3, 0.4)
                canvas.fill(sideways(u: u, z0 - 0.01, z1 + 0.01, 0.27, 0.6), color: .solid(RGB(170, 172, 176)))
                canvas.fill(
                    sideways(u: u, z0, z1, 0.285, 0.585),
                    color: .vertical(
                        RGB(250, 250, 250), at: point(u, 0.285, z0).y,
                        RGB(232, 233, 236), at: point(u, 0.585, z0).y))
                canvas.fill(sideways(u: u, z0 + 0.05, z1 - 0.05, 0.585, 0.6), color: .solid(RGB(150, 152, 156)))
                let inks = [RGB(40, 70, 160), RGB(190, 50, 50), RGB(40, 40, 44), RGB(40, 130, 80)]
                for line in 0..<random.pick([3, 4, 5]) {
                    let ink = random.pick(inks)
                    let v = 0.32 + Double(line) * 0.05
                    var za = z0 + 0.04
                    let zEnd = z1 - random.range(0.05, 0.2)
                    // A wavy "handwriting" stroke made of short segments.
                    while za < zEnd {
                        let zb = za + 0.02
                        let a = point(u, v + random.range(-0.006, 0.006), za)
                        let b = point(u, v + random.range(-0.006, 0.006), zb)
                        canvas.fill(.segment(a, b, width: 2 * scale(za)), color: .solid(ink))
                        za = zb
                    }
                }
            }
            // A wall clock.
            let c = point(windowOnLeft ? 0.8 : 0.2, 0.16, 1)
            let r = 0.035 * height
            canvas.fill(.ellipse(c.x, c.y, r, r), color: .solid(RGB(50, 50, 54)))
            canvas.fill(.ellipse(c.x, c.y, r * 0.86, r * 0.86), color: .solid(RGB(248, 248, 244)))
            canvas.fill(.segment(c, Point(x: c.x, y: c.y - r * 0.62), width: 1.6), color: .solid(RGB(30, 30, 30)))
            canvas.fill(
                .segment(c, Point(x: c.x + r * 0.45, y: c.y + r * 0.2), width: 1.6),
                color: .solid(RGB(30, 30, 30)))
        }

        private func paintBookshelf(on canvas: inout Canvas, random: inout SplitMix64, windowOnLeft: Bool) {
            let wood = random.pick([RGB(150, 110, 75), RGB(235, 232, 225), RGB(90, 70, 55)])
            let u0 = windowOnLeft ? random.range(0.55, 0.62) : random.range(0.08, 0.15)
            let u1 = u0 + random.range(0.25, 0.32)
            let v0 = 0.3
            canvas.fill(upright(u0, u1, v0, 1, z: 0.985), color: .solid(wood))
            canvas.fill(upright(u0 + 0.012, u1 - 0.012, v0 + 0.02, 0.98, z: 0.985), color: .solid(wood * 0.55))
            let shelves = 4
            let shelfHeight = (0.98 - v0 - 0.02) / Double(shelves)
            for shelf in 0..<shelves {
                let base = v0 + 0.02 + Double(shelf + 1) * shelfHeight
                canvas.fill(upright(u0 + 0.012, u1 - 0.012, base - 0.014, base, z: 0.985), color: .solid(wood))
                // Books: upright rectangles of random width, height and colour.
                var u = u0 + 0.016
                while u < u1 - 0.03 {
                    let w = random.range(0.008, 0.016)
                    let h = shelfHeight * random.range(0.55, 0.85)
                    if random.chance(0.85) {
                        let color = random.pick(Palette.books) * random.range(0.85, 1.1)
                        canvas.fill(upright(u, u + w, base - 0.014 - h, base - 0.014, z: 0.985), color: .solid(color))
                    }
                    u += w + 0.001
                }
            }
        }

        private func paintPlant(on canvas: inout Canvas, random: inout SplitMix64, u: Double, z: Double) {
            let pot = random.pick([RGB(200, 110, 80), RGB(235, 235, 230), RGB(60, 60, 64)])
            let top = point(u, 0.86, z)
            let bottom = point(u, 1, z)
            let half = 0.035 * width * scale(z)
            canvas.fill(
                .ellipse(bottom.x, bottom.y, half * 1.3, half * 0.35), color: .solid(RGB(0, 0, 0)),
                soft: 6, opacity: 0.25)
            canvas.fill(
                .polygon([
                    Point(x: top.x - half, y: top.y), Point(x: top.x + half, y: top.y),
                    Point(x: bottom.x + half * 0.75, y: bottom.y),
                    Point(x: bottom.x - half * 0.75, y: bottom.y),
                ]),
                color: .vertical(pot * 1.05, at: top.y, pot * 0.85, at: bottom.y))
            // Leaves: long ellipses fanning out of the pot, each along a random direction vector.
            let green = random.pick([RGB(70, 130, 70), RGB(50, 110, 80), RGB(95, 140, 60)])
            let length = half * random.range(2.2, 3.2)
            for _ in 0..<random.pick([9, 11, 13]) {
                let dx = random.range(-1, 1)
                let dy = -random.range(0.6, 1.6)
                let n = (dx * dx + dy * dy).squareRoot()
                let l = length * random.range(0.6, 1)
                let center = Point(x: top.x + dx / n * l * 0.6, y: top.y + dy / n * l * 0.6)
                let shape = Shape.ellipse(center.x, center.y, l * 0.55, l * 0.14, axis: Point(x: dx / n, y: dy / n))
                canvas.fill(shape, color: .solid(green * random.range(0.75, 1.2)))
            }
        }

        private func paintMeetingTable(on canvas: inout Canvas, random: inout SplitMix64) {
            let tableColor = random.pick(Palette.tables)
            let chairColor = random.pick(Palette.chairs)
            let u0 = random.range(0.33, 0.37)
            let u1 = 1 - u0
            let z0 = random.range(0.22, 0.3)
            let z1 = random.range(0.68, 0.75)
            let chairsPerSide = random.pick([2, 3])
            let chairZs = (0..<chairsPerSide).map { z0 + (z1 - z0) * (Double($0) + 0.5) / Double(chairsPerSide) }

            // Far to near: head chair, side chairs behind the table's middle, the table, the rest.
            paintChair(on: &canvas, u: 0.5, z: z1 + 0.08, facing: .camera, color: chairColor)
            paintTable(on: &canvas, u0: u0, u1: u1, z0: z0, z1: z1, color: tableColor)
            for z in chairZs.reversed() {
                paintChair(on: &canvas, u: u0 - 0.06, z: z, facing: .right, color: chairColor)
                paintChair(on: &canvas, u: u1 + 0.06, z: z, facing: .left, color: chairColor)
            }
            paintTableTopItems(on: &canvas, random: &random, u0: u0, u1: u1, z0: z0, z1: z1)
        }

        private func paintStudyTables(on canvas: inout Canvas, random: inout SplitMix64) {
            let tableColor = random.pick(Palette.tables)
            let chairColor = random.pick(Palette.chairs)
            // Desks (left edge u, front edge z), each 0.22 wide, with two chairs behind it.
            let layouts: [[(u: Double, z: Double)]] = [
                [(0.12, 0.5), (0.66, 0.5)],
                [(0.1, 0.62), (0.39, 0.62), (0.68, 0.62)],
                [(0.14, 0.32), (0.64, 0.32), (0.39, 0.66)],
            ]
            for table in random.pick(layouts).sorted(by: { $0.z > $1.z }) {
                let (u0, u1) = (table.u, table.u + 0.22)
                let (z0, z1) = (table.z, table.z + 0.14)
                paintChair(on: &canvas, u: table.u + 0.06, z: z1 + 0.06, facing: .camera, color: chairColor)
                paintChair(on: &canvas, u: table.u + 0.16, z: z1 + 0.06, facing: .camera, color: chairColor)
                paintTable(on: &canvas, u0: u0, u1: u1, z0: z0, z1: z1, color: tableColor)
                paintTableTopItems(on: &canvas, random: &random, u0: u0, u1: u1, z0: z0, z1: z1)
                // A desk lamp: a thin stem and a shade.
                if random.chance(0.6) {
                    let base = point(u1 - 0.03, 0.74, z1 - 0.03)
                    let head = point(u1 - 0.05, 0.62, z1 - 0.03)
                    let s = scale(z1)
                    canvas.fill(.segment(base, head, width: 2.2 * s), color: .solid(RGB(50, 50, 55)))
                    canvas.fill(.ellipse(head.x, head.y, 9 * s, 5 * s), color: .solid(RGB(230, 200, 90)))
                }
            }
        }

        private func paintTable(on canvas: inout Canvas, u0: Double, u1: Double, z0: Double, z1: Double, color: RGB) {
            let top = 0.74
            let thickness = 0.025
            // Soft shadow on the floor first.
            canvas.fill(
                flat(u0 + 0.02, u1 - 0.02, v: 1, z0 + 0.02, z1), color: .solid(RGB(0, 0, 0)),
                soft: 16 * scale(z0), opacity: 0.28)
            let legColor = color * 0.55
            let legs = [(u0 + 0.02, z1 - 0.02), (u1 - 0.03, z1 - 0.02), (u0 + 0.02, z0 + 0.02), (u1 - 0.03, z0 + 0.02)]
            for (u, z) in legs {
                canvas.fill(
                    upright(u, u + 0.01, top, 1, z: z),
                    color: .vertical(
                        legColor, at: point(u, top, z).y,
                        legColor * 0.7, at: point(u, 1, z).y))
            }
            let yBack = point(0, top, z1).y
            let yFront = point(0, top, z0).y
            canvas.fill(
                flat(u0, u1, v: top, z0, z1),
                color: .vertical(color * 1.06, at: yBack, color * 0.96, at: yFront))
            canvas.fill(
                .polygon([
                    point(u0, top, z0), point(u1, top, z0), point(u1, top + thickness, z0),
                    point(u0, top + thickness, z0),
                ]), color: .solid(color * 0.78))
        }

        private func paintTableTopItems(
            on canvas: inout Canvas, random: inout SplitMix64,
            u0: Double, u1: Double, z0: Double, z1: Double
        ) {
            let top = 0.74
            for _ in 0..<random.pick([2, 3, 4]) {
                let u = random.range(u0 + 0.03, u1 - 0.1)
                let z = random.range(z0 + 0.03, z1 - 0.08)
                switch random.next() % 3 {
                case 0:  // papers
                    canvas.fill(flat(u, u + 0.05, v: top - 0.001, z, z + 0.05), color: .solid(RGB(248, 248, 245)))
                case 1:  // an open laptop: base plus a screen facing the camera
                    canvas.fill(flat(u, u + 0.07, v: top - 0.001, z, z + 0.05), color: .solid(RGB(180, 182, 188)))
                    canvas.fill(
                        upright(u, u + 0.07, top - 0.09, top, z: z + 0.05),
                        color: .solid(RGB(60, 64, 72)))
                default:  // a mug
                    let b = point(u, top, z)
                    let s = scale(z)
                    let mug = random.pick([RGB(240, 240, 236), RGB(200, 70, 60), RGB(60, 100, 170)])
                    canvas.fill(.rect(b.x, b.y - 14 * s, b.x + 10 * s, b.y), color: .solid(mug))
                    canvas.fill(.ellipse(b.x + 5 * s, b.y - 14 * s, 5 * s, 2 * s), color: .solid(mug * 0.6))
                }
            }
        }

        private enum Facing { case camera, away, left, right }

        private func paintChair(on canvas: inout Canvas, u: Double, z: Double, facing: Facing, color: RGB) {
            let seat = 0.84
            let back = 0.63
            let (du, dz) = (0.035, 0.045)
            let frame = RGB(45, 45, 48)
            canvas.fill(
                flat(u - du, u + du, v: 1, z - dz, z + dz), color: .solid(RGB(0, 0, 0)),
                soft: 8 * scale(z), opacity: 0.25)
            for (lu, lz) in [(u - du, z + dz), (u + du, z + dz), (u - du, z - dz), (u + du, z - dz)] {
                canvas.fill(upright(lu, lu + 0.006, seat, 1, z: lz), color: .solid(frame))
            }
            let backrest: Shape
            switch facing {
            case .camera, .away:
                let zb = facing == .camera ? z + dz : z - dz
                backrest = upright(u - du, u + du, back, seat, z: zb, radius: 0.01)
            case .left, .right:
                backrest = sideways(u: facing == .right ? u - du : u + du, z - dz, z + dz, back, seat)
            }
            let shadeTop = point(u, back, z).y
            let shadeBottom = point(u, seat, z).y
            let backPaint = Paint.vertical(color * 1.08, at: shadeTop, color * 0.85, at: shadeBottom)
            if facing != .away {
                canvas.fill(backrest, color: backPaint)
            }
            canvas.fill(flat(u - du, u + du, v: seat, z - dz, z + dz), color: .solid(color * 0.95))
            canvas.fill(
                .polygon([
                    point(u - du, seat, z - dz), point(u + du, seat, z - dz),
                    point(u + du, seat + 0.02, z - dz), point(u - du, seat + 0.02, z - dz),
                ]),
                color: .solid(color * 0.7))
            if facing == .away {
                canvas.fill(backrest, color: backPaint)
            }
        }
    }

    private enum Palette {
        static let walls = [
            RGB(236, 232, 222), RGB(214, 226, 232), RGB(208, 220, 200), RGB(232, 218, 196),
            RGB(222, 222, 224), RGB(230, 208, 192), RGB(240, 230, 200), RGB(205, 212, 228),
        ]
        static let accentWalls = [
            RGB(70, 96, 120), RGB(120, 140, 110), RGB(180, 110, 90), RGB(90, 90, 100),
            RGB(200, 170, 110),
        ]
        static let floors: [(color: RGB, planks: Int)] = [
            (RGB(196, 160, 118), 22), (RGB(128, 90, 62), 18), (RGB(120, 122, 128), 0), (RGB(84, 96, 120), 0),
            (RGB(100, 116, 100), 0), (RGB(170, 168, 160), 0), (RGB(214, 190, 150), 26),
        ]
        static let skies: [(top: RGB, bottom: RGB, trees: RGB, buildings: RGB)] = [
            (RGB(80, 140, 215), RGB(190, 220, 242), RGB(60, 110, 60), RGB(170, 176, 186)),
            (RGB(170, 182, 196), RGB(222, 226, 232), RGB(80, 105, 80), RGB(140, 146, 156)),
            (RGB(110, 130, 200), RGB(250, 200, 150), RGB(50, 70, 60), RGB(110, 100, 120)),
            (RGB(120, 180, 230), RGB(220, 236, 246), RGB(90, 140, 70), RGB(200, 196, 190)),
        ]
        package static let tables = [RGB(236, 235, 230), RGB(190, 150, 105), RGB(80, 66, 58), RGB(175, 178, 182)]
        static let chairs = [
            RGB(44, 48, 56), RGB(180, 62, 52), RGB(60, 110, 160), RGB(228, 168, 62),
            RGB(70, 130, 112), RGB(196, 198, 200), RGB(120, 82, 140),
        ]
        package static let books = [
            RGB(170, 50, 45), RGB(40, 80, 140), RGB(220, 180, 70), RGB(60, 120, 80),
            RGB(230, 228, 220), RGB(50, 50, 55), RGB(200, 110, 60), RGB(110, 70, 120),
        ]
    }
}

// MARK: - Lighting

extension DemoPhotos {
    /// Photographic falloff as integer offsets: column term + row term. Because both are integers,
    /// adding them after rounding keeps flat rows identical to each other (long LZ77 matches), which
    /// a per-pixel radial vignette would destroy. Corners get both terms, so it still reads as a vignette.
    fileprivate struct Lighting {
        package var columns: [Int]
        package var rows: [Int]

        package init(width: Int, height: Int) {
            columns = [Int](repeating: 0, count: width)
            rows = [Int](repeating: 0, count: height)
        }

        package init(width: Int, height: Int, random: inout SplitMix64, windowOnLeft: Bool) {
            let strength = random.range(14, 24)
            let glow = random.range(4, 10)
            columns = (0..<width).map { x in
                let t = (Double(x) + 0.5) / Double(width) * 2 - 1  // -1 ... 1
                let toWindow = windowOnLeft ? (1 - t) / 2 : (1 + t) / 2
                return Int((-strength * t * t + glow * toWindow).rounded())
            }
            rows = (0..<height).map { y in
                let t = (Double(y) + 0.5) / Double(height) * 2 - 1
                return Int((-strength * 0.7 * t * t).rounded())
            }
        }
    }
}

// MARK: - Drawing primitives

extension DemoPhotos {
    fileprivate struct RGB {
        package var r: Double
        package var g: Double
        package var b: Double

        package init(_ r: Double, _ g: Double, _ b: Double) {
            self.r = r
            self.g = g
            self.b = b
        }

        package static func * (c: RGB, k: Double) -> RGB { RGB(c.r * k, c.g * k, c.b * k) }
        package static func + (a: RGB, b: RGB) -> RGB { RGB(a.r + b.r, a.g + b.g, a.b + b.b) }

        /// HSL → RGB (0...255); hue in turns.
        static func hsl(_ hue: Double, _ saturation: Double, _ lightness: Double) -> RGB {
            let h = (hue - hue.rounded(.down)) * 6
            let chroma = (1 - abs(2 * lightness - 1)) * saturation
            let x = chroma * (1 - abs(h.truncatingRemainder(dividingBy: 2) - 1))
            let m = lightness - chroma / 2
            let (r, g, b): (Double, Double, Double)
            switch h {
            case ..<1: (r, g, b) = (chroma, x, 0)
            case ..<2: (r, g, b) = (x, chroma, 0)
            case ..<3: (r, g, b) = (0, chroma, x)
            case ..<4: (r, g, b) = (0, x, chroma)
            case ..<5: (r, g, b) = (x, 0, chroma)
            default: (r, g, b) = (chroma, 0, x)
            }
            return RGB((r + m) * 255, (g + m) * 255, (b + m) * 255)
        }
    }

    fileprivate struct Point {
        package var x: Double
        package var y: Double
    }

    /// How a shape is coloured at a given pixel.
    fileprivate enum Paint {
        case solid(RGB)
        case gradient(top: RGB, y0: Double, bottom: RGB, y1: Double)
        case custom((Double, Double) -> RGB)

        /// Linear vertical gradient from `top` at screen row `y0` to `bottom` at row `y1`.
        static func vertical(_ top: RGB, at y0: Double, _ bottom: RGB, at y1: Double) -> Paint {
            .gradient(top: top, y0: y0, bottom: bottom, y1: y1)
        }

        func color(_ x: Double, _ y: Double) -> RGB {
            switch self {
            case .solid(let c):
                return c
            case .gradient(let top, let y0, let bottom, let y1):
                let t = y1 > y0 ? min(1, max(0, (y - y0) / (y1 - y0))) : 0
                return top * (1 - t) + bottom * t
            case .custom(let f):
                return f(x, y)
            }
        }
    }

    /// A shape as a bounding box plus a signed distance in pixels (negative inside). The distance
    /// drives anti-aliasing (and soft edges for shadows and glows) with one code path for all shapes.
    fileprivate struct Shape {
        var minX: Double
        var minY: Double
        var maxX: Double
        var maxY: Double
        var distance: (Double, Double) -> Double

        static func rect(_ x0: Double, _ y0: Double, _ x1: Double, _ y1: Double) -> Shape {
            roundedRect(x0, y0, x1, y1, radius: 0)
        }

        static func roundedRect(_ x0: Double, _ y0: Double, _ x1: Double, _ y1: Double, radius: Double) -> Shape {
            let (ax, bx) = (min(x0, x1), max(x0, x1))
            let (ay, by) = (min(y0, y1), max(y0, y1))
            let cx = (ax + bx) / 2
            let cy = (ay + by) / 2
            let r = min(radius, (bx - ax) / 2, (by - ay) / 2)
            let hx = (bx - ax) / 2 - r
            let hy = (by - ay) / 2 - r
            return Shape(minX: ax, minY: ay, maxX: bx, maxY: by) { x, y in
                let qx = abs(x - cx) - hx
                let qy = abs(y - cy) - hy
                let outside = (max(qx, 0) * max(qx, 0) + max(qy, 0) * max(qy, 0)).squareRoot()
                return outside + min(max(qx, qy), 0) - r
            }
        }

        /// Ellipse with semi-axes `rx` along `axis` (a unit vector) and `ry` across it.
        static func ellipse(
            _ cx: Double, _ cy: Double, _ rx: Double, _ ry: Double,
            axis: Point = Point(x: 1, y: 0)
        ) -> Shape {
            let reach = max(rx, ry)
            return Shape(minX: cx - reach, minY: cy - reach, maxX: cx + reach, maxY: cy + reach) { x, y in
                let px = (x - cx) * axis.x + (y - cy) * axis.y
                let py = (y - cy) * axis.x - (x - cx) * axis.y
                // First-order distance: f / |grad f| for f = (px/rx)² + (py/ry)² - 1.
                let f = px * px / (rx * rx) + py * py / (ry * ry) - 1
                let gx = 2 * px / (rx * rx)
                let gy = 2 * py / (ry * ry)
                return f / max((gx * gx + gy * gy).squareRoot(), 1e-9)
            }
        }

        /// Convex polygon, either winding. Distance = the largest signed distance to an edge line,
        /// exact inside and close enough just outside for anti-aliasing.
        static func polygon(_ points: [Point]) -> Shape {
            var area = 0.0
            for i in points.indices {
                let a = points[i]
                let b = points[(i + 1) % points.count]
                area += a.x * b.y - b.x * a.y
            }
            let sign = area >= 0 ? 1.0 : -1.0
            // Each edge as (nx, ny, c): distance = nx * x + ny * y - c with an outward unit normal.
            let edges: [(Double, Double, Double)] = points.indices.map { i in
                let a = points[i]
                let b = points[(i + 1) % points.count]
                let length = max(((b.x - a.x) * (b.x - a.x) + (b.y - a.y) * (b.y - a.y)).squareRoot(), 1e-9)
                let nx = sign * (b.y - a.y) / length
                let ny = -sign * (b.x - a.x) / length
                return (nx, ny, nx * a.x + ny * a.y)
            }
            let xs = points.map(\.x)
            let ys = points.map(\.y)
            return Shape(minX: xs.min() ?? 0, minY: ys.min() ?? 0, maxX: xs.max() ?? 0, maxY: ys.max() ?? 0) { x, y in
                var d = -Double.infinity
                for (nx, ny, c) in edges {
                    d = max(d, nx * x + ny * y - c)
                }
                return d
            }
        }

        /// A straight stroke with round caps.
        static func segment(_ a: Point, _ b: Point, width: Double) -> Shape {
            let half = width / 2
            let dx = b.x - a.x
            let dy = b.y - a.y
            let lengthSquared = max(dx * dx + dy * dy, 1e-9)
            return Shape(
                minX: min(a.x, b.x) - half, minY: min(a.y, b.y) - half,
                maxX: max(a.x, b.x) + half, maxY: max(a.y, b.y) + half
            ) { x, y in
                let t = min(1, max(0, ((x - a.x) * dx + (y - a.y) * dy) / lengthSquared))
                let ex = x - a.x - t * dx
                let ey = y - a.y - t * dy
                return (ex * ex + ey * ey).squareRoot() - half
            }
        }

        /// Intersection: inside both shapes.
        func clipped(to other: Shape) -> Shape {
            let (mine, theirs) = (distance, other.distance)
            return Shape(
                minX: max(minX, other.minX), minY: max(minY, other.minY),
                maxX: min(maxX, other.maxX), maxY: min(maxY, other.maxY)
            ) { x, y in
                max(mine(x, y), theirs(x, y))
            }
        }
    }

    /// Floating-point RGB canvas (0...255 per channel).
    fileprivate struct Canvas {
        package let width: Int
        package let height: Int
        private var pixels: [Double]
        var lighting: Lighting

        package init(width: Int, height: Int) {
            self.width = width
            self.height = height
            pixels = [Double](repeating: 0, count: width * height * 3)
            lighting = Lighting(width: width, height: height)
        }

        /// Blends `color` over the shape. Coverage ramps from 1 to 0 across `soft` pixels around the
        /// edge: 1 px gives ordinary anti-aliasing, larger values give shadows and glows.
        mutating func fill(_ shape: Shape, color: Paint, soft: Double = 1, opacity: Double = 1) {
            let x0 = max(0, Int((shape.minX - soft).rounded(.down)))
            let y0 = max(0, Int((shape.minY - soft).rounded(.down)))
            let x1 = min(width - 1, Int((shape.maxX + soft).rounded(.up)))
            let y1 = min(height - 1, Int((shape.maxY + soft).rounded(.up)))
            guard x0 <= x1 && y0 <= y1 else { return }
            let width = width
            pixels.withUnsafeMutableBufferPointer { px in
                for y in y0...y1 {
                    let cy = Double(y) + 0.5
                    for x in x0...x1 {
                        let cx = Double(x) + 0.5
                        let ramp = 0.5 - shape.distance(cx, cy) / soft
                        if ramp <= 0 { continue }
                        let coverage = (ramp < 1 ? ramp : 1) * opacity
                        let c = color.color(cx, cy)
                        let i = (y * width + x) * 3
                        px[i] += (c.r - px[i]) * coverage
                        px[i + 1] += (c.g - px[i + 1]) * coverage
                        px[i + 2] += (c.b - px[i + 2]) * coverage
                    }
                }
            }
        }

        /// Draws a bitmap glyph (rows of 5 bits) as square cells. Coverage is the exact area of each
        /// pixel under the cells, so neighbouring cells join without seams and edges are anti-aliased.
        mutating func fillCells(
            _ rows: [UInt8], x: Double, y: Double, cell: Double, color: RGB, opacity: Double
        ) {
            let x0 = max(0, Int(x.rounded(.down)))
            let y0 = max(0, Int(y.rounded(.down)))
            let x1 = min(width - 1, Int((x + 5 * cell).rounded(.up)))
            let y1 = min(height - 1, Int((y + Double(rows.count) * cell).rounded(.up)))
            guard x0 <= x1 && y0 <= y1 else { return }
            /// Length of the unit pixel interval [p, p + 1] inside [start, start + cell].
            func overlap(_ p: Int, _ start: Double) -> Double {
                max(0, min(Double(p) + 1, start + cell) - max(Double(p), start))
            }
            // Area = sum over glyph rows of (vertical overlap) × (horizontal overlap with that row's
            // cells); the horizontal part depends only on the pixel column, so compute it once.
            let span = x1 - x0 + 1
            var across = [Double](repeating: 0, count: rows.count * span)
            for (row, bits) in rows.enumerated() {
                for column in 0..<5 where bits & (0x10 >> UInt8(column)) != 0 {
                    for px in x0...x1 {
                        across[row * span + px - x0] += overlap(px, x + Double(column) * cell)
                    }
                }
            }
            let width = width
            pixels.withUnsafeMutableBufferPointer { pixels in
                for py in y0...y1 {
                    let down = rows.indices.map { overlap(py, y + Double($0) * cell) }
                    for px in x0...x1 {
                        var area = 0.0
                        for row in rows.indices where down[row] > 0 {
                            area += down[row] * across[row * span + px - x0]
                        }
                        let a = (area < 1 ? area : 1) * opacity
                        if a <= 0 { continue }
                        let i = (py * width + px) * 3
                        pixels[i] += (color.r - pixels[i]) * a
                        pixels[i + 1] += (color.g - pixels[i + 1]) * a
                        pixels[i + 2] += (color.b - pixels[i + 2]) * a
                    }
                }
            }
        }

        /// Rounds to 8 bits, then adds the integer lighting offsets (see `Lighting`).
        package func bytes() -> [UInt8] {
            var out = [UInt8](repeating: 0, count: width * height * 3)
            let (width, height) = (width, height)
            let (columns, rows) = (lighting.columns, lighting.rows)
            pixels.withUnsafeBufferPointer { src in
                out.withUnsafeMutableBufferPointer { dst in
                    for y in 0..<height {
                        for x in 0..<width {
                            let light = Double(columns[x] + rows[y])
                            let i = (y * width + x) * 3
                            for k in i..<(i + 3) {
                                let value = src[k].rounded() + light
                                dst[k] = value <= 0 ? 0 : (value >= 255 ? 255 : UInt8(value))
                            }
                        }
                    }
                }
            }
            return out
        }
    }

    /// SplitMix64 (Steele, Lea & Flood): tiny, fast, and fully determined by the seed.
    fileprivate struct SplitMix64 {
        private var state: UInt64

        package init(seed: UInt64) {
            state = seed
        }

        package mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }

        /// Uniform in [a, b).
        package mutating func range(_ a: Double, _ b: Double) -> Double {
            a + (b - a) * Double(next() >> 11) * 0x1p-53
        }

        mutating func chance(_ probability: Double) -> Bool {
            range(0, 1) < probability
        }

        package mutating func pick<T>(_ items: [T]) -> T {
            items[Int(next() % UInt64(items.count))]
        }
    }
}
