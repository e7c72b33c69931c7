import Foundation
import Testing

@testable import QuadPlatform

/// A template that reads a name no model in reach has stops the page in testing mode; what Mustache would find
/// (an enclosing context's field, a nil field, a field of each element of a list) passes.
@Suite struct TemplateCheckTests {
    struct Frame {
        let title: String
        let csrf: String
        let page: Page
    }

    struct Page {
        let heading: String
        let note: String?
        let rooms: [Room]
        let empty: [Room]
        let form: FormValues
    }

    struct Room {
        let name: String
        let photo: Photo?
    }

    struct Photo {
        let url: String
    }

    static let frame = Frame(
        title: "Rooms", csrf: "token",
        page: Page(
            heading: "Book a room", note: nil,
            rooms: [Room(name: "Quiet", photo: Photo(url: "/q.jpg")), Room(name: "Loud", photo: nil)], empty: [],
            form: FormValues(values: ["name": "Ada"])))

    static func check(_ templates: [String: String], _ template: String = "page") throws {
        try TemplateCheck(sources: templates).check(template, model: frame)
    }

    @Test(arguments: [
        // A page's own field, and the frame's from inside the page and inside each room (Mustache climbs).
        "{{#page}}{{heading}} {{title}}{{#rooms}}{{name}} {{csrf}} {{heading}}{{/rooms}}{{/page}}",
        // A nil field is the model's: drawn as nothing, its section skipped, its inverted section drawn.
        "{{#page}}{{note}}{{#note}}{{nothing}}{{/note}}{{^note}}{{heading}}{{/note}}{{/page}}",
        // Each room's own photo, nil for one of them; dotted names from the first part found.
        "{{#page.rooms}}{{#photo}}{{url}}{{/photo}}{{photo.url}}{{/page.rooms}}",
        // An empty list's body is never drawn; a form answers any field name itself.
        "{{#page}}{{#empty}}{{whatever}}{{/empty}}{{#form}}{{name}}{{email}}{{/form}}{{/page}}",
        "{{! a comment names {{nothing}} }}{{{title}}}{{&title}}",
    ])
    func whatMustacheFindsPasses(template: String) throws {
        try Self.check(["page": template])
    }

    @Test(arguments: [
        ("{{#page}}{{headline}}{{/page}}", "headline"),
        ("{{#page}}{{#rooms}}{{label}}{{/rooms}}{{/page}}", "label"),
        // Only the first part of a dotted name climbs: rooms have no `title`.
        ("{{#page.rooms}}{{photo.title}}{{/page.rooms}}", "photo.title"),
        ("{{#page}}{{^missing}}{{/missing}}{{/page}}", "missing"),
    ])
    func aNameNoModelHasStopsThePage(template: String, name: String) throws {
        #expect {
            try Self.check(["page": template])
        } throws: { error in
            "\(error)"
                == "Template page reads {{\(name)}}, which no model in reach has (a field renamed or misspelled?)."
        }
    }

    @Test func aPartialIsCheckedInTheContextItIsDrawnIn() throws {
        try Self.check(["page": "{{#page.rooms}}{{> card}}{{/page.rooms}}", "card": "{{name}} {{title}}"])
        #expect(throws: TemplateCheck.Unknown.self) {
            try Self.check(["page": "{{#page.rooms}}{{> card}}{{/page.rooms}}", "card": "{{spots}}"])
        }
    }

    /// A page fills the layout's blocks (`{{<layout}}{{$content}}…`): its blocks are checked where the layout draws
    /// them, and the layout's own blocks where no page replaces them.
    @Test func aPageInItsLayoutIsCheckedWhole() throws {
        let layout = "<title>{{title}}</title><main>{{$content}}{{/content}}</main>{{$footer}}{{csrf}}{{/footer}}"
        try Self.check([
            "page": "{{<layout}}{{$content}}{{#page}}{{heading}}{{/page}}{{/content}}{{/layout}}", "layout": layout,
        ])
        #expect(throws: TemplateCheck.Unknown.self) {
            try Self.check([
                "page": "{{<layout}}{{$content}}{{#page}}{{headng}}{{/page}}{{/content}}{{/layout}}", "layout": layout,
            ])
        }
        #expect(throws: TemplateCheck.Unknown.self) {
            try Self.check(["page": "{{<layout}}{{/layout}}", "layout": layout + "{{$more}}{{nothing}}{{/more}}"])
        }
    }
}
