import Foundation
import Mustache

/// A module's web files: its pages' templates in `Web/templates`, and the scripts, styles and pictures they use in
/// `Web/static`, beside the module's code. The web shell puts every module's together: one set of template names
/// (any page may use another module's template as a partial, as the layout does) and one of asset names (a script
/// imports `./live.js` wherever it lives); a name used twice stops the server at start.
///
/// With `QUAD_WEB_DIR` (working on the pages) they are read from `<dir>/<module>/Web`, `<dir>` being the project's
/// `Sources`, so a reload shows an edit without a build.
package struct WebFiles: Sendable {
    package let module: String
    /// The built copy: the module's bundle's `Web`.
    let built: URL?

    package init(module: String, bundle: Bundle) {
        self.module = module
        self.built = bundle.url(forResource: "Web", withExtension: nil)
    }

    /// Where to read them: the working copy named by `QUAD_WEB_DIR`, else the build's.
    func folder(sources: String?) throws -> URL {
        if let sources {
            return URL(fileURLWithPath: sources).appendingPathComponent(module).appendingPathComponent("Web")
        }
        guard let built else { throw StartupError(description: "\(module)'s web files are missing from the build.") }
        return built
    }

    /// Every module's templates as one library, and their texts (for `TemplateCheck`), by file name.
    /// `only`: the names to load (mail's templates alone, for `MailTemplates`).
    static func load(
        _ folders: [(module: String, url: URL)], only: (String) -> Bool = { _ in true }
    ) throws -> (
        library: MustacheLibrary, sources: [String: String]
    ) {
        var library = MustacheLibrary()
        var sources: [String: String] = [:]
        var owners: [String: String] = [:]
        for (module, folder) in folders {
            let directory = folder.appendingPathComponent("templates")
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
            for file in names.sorted() where file.hasSuffix(".mustache") {
                let name = String(file.dropLast(".mustache".count))
                guard only(name) else { continue }
                if let other = owners[name] {
                    throw StartupError(description: "Template \(name) is both \(other)'s and \(module)'s.")
                }
                owners[name] = module
                let text = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
                sources[name] = text
                do {
                    try library.register(text, named: name)
                } catch {
                    throw StartupError(description: "\(module)/Web/templates/\(file) does not parse: \(error)")
                }
            }
        }
        return (library, sources)
    }
}
