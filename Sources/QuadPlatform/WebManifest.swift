import Foundation
import Hummingbird

/// The web app manifest (`/manifest.webmanifest`): what a browser needs to install Quad on a home screen
/// as an app of its own, with its icons (content-hash URLs, so a new drawing is fetched anew).
struct WebManifest: Encodable {
    /// The bar's and the page's colours, as `app.css` has them (`--surface` and `--bg`), for the window
    /// the system draws before the first page and for the status bar.
    enum Colours {
        static let light = (theme: "#ffffff", background: "#f4f5f7")
        static let dark = (theme: "#1e2025", background: "#121316")
    }

    struct Icon: Encodable {
        let src: String
        let sizes: String
        let type = "image/png"
        let purpose: String
    }

    /// The proposed per-scheme colours (`user_preferences.color_scheme.dark`), which browsers that do not
    /// know them ignore; the layout's `theme-color` tags say the same for every browser.
    struct Preferences: Encodable {
        struct Scheme: Encodable {
            let dark: SchemeColours
        }
        struct SchemeColours: Encodable {
            let theme_color: String
            let background_color: String
        }
        let color_scheme: Scheme
    }

    let id = "/"
    let name = "Quad"
    let short_name = "Quad"
    let start_url = "/"
    let scope = "/"
    let display = "standalone"
    let theme_color = Colours.light.theme
    let background_color = Colours.light.background
    let user_preferences = Preferences(
        color_scheme: .init(dark: .init(theme_color: Colours.dark.theme, background_color: Colours.dark.background)))
    let icons: [Icon]

    /// The manifest's bytes, its icons taken from the assets' paths (`icon-192`, `icon-512`, `icon-maskable`).
    static func bytes(assetPaths: [String: [String: String]]) throws -> ByteBuffer {
        func path(_ name: String) throws -> String {
            guard let path = assetPaths[name]?["png"] else {
                throw StartupError(description: "static/\(name).png, an icon the manifest names, is missing.")
            }
            return path
        }
        let manifest = WebManifest(icons: [
            Icon(src: try path("icon-192"), sizes: "192x192", purpose: "any"),
            Icon(src: try path("icon-512"), sizes: "512x512", purpose: "any"),
            Icon(src: try path("icon-maskable"), sizes: "512x512", purpose: "maskable"),
        ])
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return ByteBuffer(data: try encoder.encode(manifest))
    }
}
