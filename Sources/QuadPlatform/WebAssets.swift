import Crypto
import Foundation
import Hummingbird

/// The files of every module's `static/` (but the service worker) as assets at content-hash URLs,
/// `/assets/<name>.<hash>.<ext>`, cached for ever by browsers and the service worker.
///
/// Page scripts are ES modules that import each other by relative name (`import { t } from "./i18n.js"`).
/// Each such specifier is rewritten to the imported file's hashed URL before the importer is hashed, so a
/// change to `live.js` changes the URL of every page script that uses it: no stale module is ever loaded, and
/// the content-security policy stays `script-src 'self'` (an import map would need a hash in it).
struct WebAssets {
    struct Asset {
        let path: String
        let bytes: ByteBuffer
        let type: String
    }

    /// By file name (`rooms.js`).
    let byName: [String: Asset]

    /// The types of what `static/` may hold: the stylesheets, the page scripts and the app's icons.
    private static let types = [
        "css": "text/css; charset=utf-8", "js": "text/javascript; charset=utf-8", "png": "image/png",
    ]
    /// A static import or re-export at the start of a line: `import { t } from "./i18n.js"`, `import "./x.js"`,
    /// `export { morph } from "./live.js"`.
    nonisolated(unsafe) private static let specifier =
        /^(?<lead>import\s*|(?:import|export)\b[^"';]*\bfrom\s*)["'](?<name>[^"']*)["']/.anchorsMatchLineEndings()

    /// Every module's `static/` (a module may have none), as one set of names.
    init(directories: [URL]) throws {
        var files: [String: Data] = [:]
        for directory in directories {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
            for name in names.sorted() where name != "sw.js" {
                let parts = name.split(separator: ".")
                guard parts.count == 2, Self.types[String(parts[1])] != nil else {
                    throw StartupError(description: "static/\(name) is not name.css, name.js or name.png.")
                }
                guard files[name] == nil else {
                    throw StartupError(description: "static/\(name) is in two modules' web files.")
                }
                files[name] = try Data(contentsOf: directory.appendingPathComponent(name))
            }
        }
        var done: [String: Asset] = [:]
        for name in files.keys.sorted() {
            try Self.load(name, files: files, done: &done, importers: [])
        }
        byName = done
    }

    /// Loads `name` after what it imports; `importers` is the chain that led here, to name a cycle.
    private static func load(
        _ name: String, files: [String: Data], done: inout [String: Asset], importers: [String]
    )
        throws
    {
        if done[name] != nil { return }
        guard !importers.contains(name) else {
            throw StartupError(
                description: "static/: the modules import each other in a cycle: "
                    + (importers + [name]).joined(separator: " → ") + ".")
        }
        guard let data = files[name] else {
            throw StartupError(description: "static/\(importers.last ?? "?") imports \(name), which is not in static/.")
        }
        let ext = String(name.split(separator: ".")[1])
        var bytes = data
        if ext == "js" {
            let text = String(decoding: data, as: UTF8.self)
            guard !text.contains("import(") else {
                throw StartupError(
                    description: "static/\(name) imports dynamically; only static imports get hashed URLs.")
            }
            var rewritten = ""
            var rest = text[...]
            while let match = rest.firstMatch(of: specifier) {
                let imported = String(match.output.name)
                guard imported.hasPrefix("./"), !imported.dropFirst(2).contains("/") else {
                    throw StartupError(description: "static/\(name) imports \"\(imported)\"; write \"./file.js\".")
                }
                try load(String(imported.dropFirst(2)), files: files, done: &done, importers: importers + [name])
                rewritten += rest[..<match.range.lowerBound] + match.output.lead
                rewritten += "\"\(done[String(imported.dropFirst(2))]!.path)\""
                rest = rest[match.range.upperBound...]
            }
            bytes = Data((rewritten + rest).utf8)
        }
        let stem = name.split(separator: ".")[0]
        done[name] = Asset(
            path: "/assets/\(stem).\(SHA256.hash(data: bytes).prefix(6).hex).\(ext)", bytes: ByteBuffer(data: bytes),
            type: types[ext]!)
    }
}
