import Foundation
import Mustache
import Testing

@testable import QuadPlatform

/// Page scripts import each other by relative name; the server rewrites each import to the imported file's
/// content-hash URL, so a browser never runs a new page script against an old shared module.
@Suite struct WebAssetsTests {
    @Test func anImportPointsAtTheImportedFilesHashedURL() throws {
        let assets = try WebAssets(
            directories: try Self.folders([
                "live.js": "export const every = 30;\n",
                "rooms.js": "import { every } from \"./live.js\";\nconsole.log(\"import\", every);\n",
            ]))
        let live = try #require(assets.byName["live.js"])
        let rooms = String(buffer: try #require(assets.byName["rooms.js"]).bytes)
        #expect(live.path.hasPrefix("/assets/live.") && live.path.hasSuffix(".js"))
        #expect(rooms.hasPrefix("import { every } from \"\(live.path)\";"))
        #expect(rooms.contains("console.log(\"import\", every);"), "only import lines are rewritten")
    }

    @Test func changingASharedModuleChangesTheURLOfItsImporters() throws {
        let before = try WebAssets(
            directories: try Self.folders([
                "live.js": "export const every = 30;\n", "rooms.js": "import \"./live.js\";\n", "app.css": "a{}",
            ]))
        let after = try WebAssets(
            directories: try Self.folders([
                "live.js": "export const every = 60;\n", "rooms.js": "import \"./live.js\";\n", "app.css": "a{}",
            ]))
        #expect(before.byName["rooms.js"]?.path != after.byName["rooms.js"]?.path)
        #expect(before.byName["app.css"]?.path == after.byName["app.css"]?.path)
    }

    @Test(arguments: [
        (["a.js": "import \"./b.js\";\n", "b.js": "import \"./a.js\";\n"], "cycle"),
        (["a.js": "import { x } from \"lodash\";\n"], "write \"./file.js\""),
        (["a.js": "import \"./missing.js\";\n"], "not in static/"),
        (["a.js": "const m = await import(\"./b.js\");\n", "b.js": ""], "dynamically"),
        (["a.txt": "hello"], "is not name.css, name.js or name.png"),
    ])
    func whatTheServerCannotHashStopsItsStart(files: [String: String], says: String) throws {
        let folder = try Self.folder(files)
        #expect {
            _ = try WebAssets(directories: [folder])
        } throws: { error in
            "\(error)".contains(says)
        }
    }

    /// Each module's web files are its own, but a script imports another module's by name (`./live.js` is the
    /// platform's), and two modules cannot both have a file of the same name.
    @Test func modulesShareOneSetOfNames() throws {
        let platform = try Self.folder(["live.js": "export const every = 30;\n"])
        let rooms = try Self.folder(["rooms.js": "import { every } from \"./live.js\";\n"])
        let assets = try WebAssets(directories: [platform, rooms])
        let live = try #require(assets.byName["live.js"])
        #expect(String(buffer: try #require(assets.byName["rooms.js"]).bytes).contains(live.path))
        #expect {
            _ = try WebAssets(directories: [platform, rooms, try Self.folder(["live.js": "export const x = 1;\n"])])
        } throws: { error in
            "\(error)".contains("static/live.js is in two modules' web files")
        }
        // A module with no static/ at all (Accounts' pages use only the shared ones) is no error.
        #expect(try WebAssets(directories: [platform, platform.appendingPathComponent("none")]).byName.count == 1)
    }

    /// Two modules' templates of one name: the second would hide the first, so the server does not start.
    @Test func aTemplateNameUsedTwiceStopsTheStart() throws {
        func module(_ name: String, _ templates: [String: String]) throws -> (module: String, url: URL) {
            let web = try Self.folder([:])
            let folder = web.appendingPathComponent("templates")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            for (name, text) in templates {
                try Data(text.utf8).write(to: folder.appendingPathComponent(name + ".mustache"))
            }
            return (name, web)
        }
        let library = try WebFiles.load([
            try module("QuadPlatform", ["layout": "<main>{{> card}}</main>"]),
            try module("QuadRooms", ["card": "{{name}}"]),
        ]).library
        #expect(library.render(["name": "Quiet room"], withTemplate: "layout") == "<main>Quiet room</main>")
        #expect {
            _ = try WebFiles.load([
                try module("QuadRooms", ["card": "{{name}}"]), try module("QuadLibrary", ["card": "{{title}}"]),
            ])
        } throws: { error in
            "\(error)".contains("Template card is both QuadRooms's and QuadLibrary's")
        }
    }

    static func folders(_ files: [String: String]) throws -> [URL] { [try folder(files)] }

    /// A fresh folder holding `files`.
    static func folder(_ files: [String: String]) throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("quad-assets-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for (name, text) in files { try Data(text.utf8).write(to: folder.appendingPathComponent(name)) }
        return folder
    }
}
