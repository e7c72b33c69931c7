import Foundation
import Testing

@testable import QuadPlatform

/// Page scripts import each other by relative name; the server rewrites each import to the imported file's
/// content-hash URL, so a browser never runs a new page script against an old shared module.
@Suite struct WebAssetsTests {
    @Test func anImportPointsAtTheImportedFilesHashedURL() throws {
        let assets = try WebAssets(
            directory: try Self.folder([
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
            directory: try Self.folder([
                "live.js": "export const every = 30;\n", "rooms.js": "import \"./live.js\";\n", "app.css": "a{}",
            ]))
        let after = try WebAssets(
            directory: try Self.folder([
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
            _ = try WebAssets(directory: folder)
        } throws: { error in
            "\(error)".contains(says)
        }
    }

    /// A fresh folder holding `files`.
    static func folder(_ files: [String: String]) throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("quad-assets-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for (name, text) in files { try Data(text.utf8).write(to: folder.appendingPathComponent(name)) }
        return folder
    }
}
