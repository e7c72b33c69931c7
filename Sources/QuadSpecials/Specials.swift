import Foundation
import Hummingbird
import NIOConcurrencyHelpers
import OpenAPIHummingbird
import QuadCore
import QuadPlatform
import SQLKit
import ServiceLifecycle

/// The Specials service: its store, what it keeps of the specials, and the events that keep every open page and
/// what every instance keeps fresh.
package final class Specials: Feature, PersonRemoval {
    let store: SpecialStore
    let kept: KeptSpecials
    let platform: Platform
    /// How often an open page polls when the event stream is down (jittered by the page).
    static let refreshSeconds = 300

    package init(platform: Platform, mail: PersonMail = .off) {
        self.platform = platform
        self.store = SpecialStore(database: platform.database, clock: platform.clock, mail: mail)
        self.kept = KeptSpecials(store: store, platform: platform)
    }

    typealias Change = SpecialEvent

    /// A special as the caller may see it: one outside its validity is the manager's secret until it starts.
    func visible(_ id: String) async throws -> SpecialRecord {
        guard let record = try await store.find(id),
            record.special(baseURL: "").isValid(at: platform.clock.now) || RequestInfo.current.person?.isAdmin == true
        else { throw Problem.notFound("There is no special \(id).") }
        return record
    }

    /// Call after a committed change: what every instance keeps of the specials is dropped as the event is published.
    func changed(_ id: String?, _ kind: Change.Kind) async {
        await platform.events.publish(Change(id: id, change: kind))
    }

    /// An uploaded image's path (`/images/<sha256>.<ext>`), or a letter tile drawn for the name when none is given.
    func image(_ path: String?, name: String) async throws -> String {
        if let path, !path.isEmpty { return try await uploadedImage(path) }
        return try await letterTile(for: name)
    }

    /// A new special as the manager typed it, ready for `SpecialStore.create`: with `productId`, what was left blank
    /// is the product's (422 on `product_id` when there is no such product) and so is its picture unless one is
    /// uploaded; otherwise the picture uploaded, or a letter tile for the name. Checked before a tile is drawn, so a
    /// refused special leaves nothing behind.
    func newSpecial(
        _ draft: SpecialDraft, productId: String?, image uploaded: String?
    ) async throws -> (draft: SpecialDraft, image: String) {
        var draft = draft
        var product: Product?
        if let productId {
            product = try await store.product(productId)
            guard let product else {
                throw ValidationFailure(field: "product_id", message: "There is no product \(productId).")
            }
            draft = product.filling(draft)
        }
        let settings = try await kept.settings()
        let checked = try SpecialValidation.special(draft, canvasUnit: settings.canvasUnit, timeZone: settings.zone)
        if uploaded?.isEmpty ?? true, let kept = product?.image { return (draft, kept) }
        return (draft, try await image(uploaded, name: checked.displayName))
    }

    /// `path` when it names an image in the store (422 on `image` otherwise).
    func uploadedImage(_ path: String) async throws -> String {
        let file = path.hasPrefix("/images/") ? String(path.dropFirst("/images/".count)) : ""
        let parts = file.split(separator: ".")
        guard parts.count == 2, parts[0].count == 64, parts[0].allSatisfy(\.isHexDigit),
            try await platform.images.find(sha256: String(parts[0])) != nil
        else {
            throw ValidationFailure(
                field: "image", message: "image \(path) is not an image uploaded to POST /api/images.")
        }
        return path
    }

    /// A letter tile for a special without an image: its initial (A–Z, accents dropped; "?" for anything
    /// else), one of the tiles shipped in `LetterTiles/`, stored as an image like an upload (once per letter, as
    /// images are kept by their hash).
    func letterTile(for name: String) async throws -> String {
        let initial = name.first(where: { $0.isLetter || $0.isNumber }).map { String($0) } ?? ""
        let letter = initial.folding(options: [.diacriticInsensitive, .caseInsensitive], locale: nil).uppercased()
        let file = letter.count == 1 && ("A"..."Z").contains(letter) ? letter : "other"
        return try await platform.images.store(try ImageStore.shipped("LetterTiles/\(file).png", in: .module)).path
    }
}

extension Specials {
    package static var migrations: [Migration] { SpecialStore.migrations }
    package static var letters: [LetterWriter] { [SpecialStore.specialLetter.writer] }

    /// A person removed: the products they watched forget them.
    package func release(
        _ usernameKey: String, in sql: any SQLDatabase
    ) async throws -> @Sendable () async -> Void {
        try await SpecialStore.forgetWatches(of: usernameKey, sql)
        return {}
    }
    package static let files = WebFiles(module: "QuadSpecials", bundle: .module)

    package var adminLinks: [AdminLink] { [AdminLink(title: "specials.manager.title", path: "/admin/specials")] }

    package var link: ServiceLink? {
        // The tab bar shows a price tag.
        ServiceLink(
            key: "specials", path: "/specials",
            icon: "M3 4v7l9.5 9.5 7.5-7.5L10.5 3.5H4zM7.5 7.5h.01")
    }

    package func register(on routes: Routes, web: WebShell) throws {
        SpecialsRoutes(specials: self, web: web).register(on: routes)
        try SpecialsOperations(specials: self).registerHandlers(
            on: routes.router, configuration: .quad, middlewares: .quad(kept: keptAnswers))
    }

    /// `GET /api/specials`, polled by every open mosaic and app.
    package var keptAnswers: [any AnyKeptAnswer] { [kept.list] }

    /// Announces validity boundaries.
    package var services: [any Service] { [SpecialsSchedule(specials: self)] }

    package func loadDemoData(announce: @escaping @Sendable (String) -> Void) async throws {
        try await SpecialsDemo.load(store, images: platform.images)
    }
}

/// Publishes a `special` event when a special's validity starts or ends, so open pages change at that
/// moment. It sleeps until the next boundary of the specials it knows, waking at least every second to
/// notice specials added meanwhile (from what is kept: no query while nothing changed). Every instance
/// runs one; the first to claim a boundary in the database publishes it (every instance's kept list expires by
/// itself at the boundary, and the event reaches them too).
struct SpecialsSchedule: Service {
    let specials: Specials
    var tick: Duration = .seconds(1)

    func run() async throws {
        let clock = specials.platform.clock
        await cancelWhenGracefulShutdown {
            var last = clock.now
            while !Task.isCancelled {
                let records = (try? await specials.kept.records()) ?? []
                let next = records.compactMap { $0.special(baseURL: "").nextBoundary(after: last) }.min()
                let wait = min(next.map { $0.timeIntervalSince(clock.now) } ?? 1, Double(tick.components.seconds))
                if wait > 0 { try? await clock.sleep(for: .milliseconds(Int(wait * 1000) + 1)) }
                let now = clock.now
                if let next, next <= now {
                    // If the database cannot be reached, publish anyway: a duplicate beats a missed change.
                    if (try? await specials.store.claimBoundary(next)) ?? true {
                        await specials.changed(nil, .schedule)
                    }
                }
                last = now
            }
        }
    }
}
