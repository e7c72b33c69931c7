import Foundation
import Mustache
import QuadCore

/// Mail's HTML: every module's `mail-*` templates, each drawn in the platform's `mail-layout`, escaped as every page
/// is. Made with the mailer at start, before any feature, so a feature that mails from inside a transaction (an offer
/// made as a seat frees) has it at construction; the templates stay beside the code of the feature that sends them.
package struct MailTemplates: Sendable {
    private let library: MustacheLibrary
    private let check: TemplateCheck?

    /// `webs`: the modules' web files (the platform's own are added); `sources`: read them from the working copy
    /// (`QUAD_WEB_DIR`); `checkTemplates`: check each message's template against its model (testing mode).
    package init(webs: [WebFiles], sources: String?, checkTemplates: Bool) throws {
        let folders = try ([WebShell.files] + webs).map { ($0.module, try $0.folder(sources: sources)) }
        let templates = try WebFiles.load(folders) { $0.hasPrefix("mail-") }
        library = templates.library
        check = checkTemplates ? TemplateCheck(sources: templates.sources) : nil
    }

    /// `template` around `model`, in `language`: templates write `{{t.key}}` and `{{#page}}…{{/page}}`.
    package func html<Model>(_ template: String, language: Language, model: Model) throws -> String {
        let frame = Frame(lang: language.rawValue, t: Strings.table(for: language), page: model)
        try check?.check(template, model: frame)
        return library.render(MustacheTree.make(frame), withTemplate: template) ?? ""
    }

    struct Frame<Model> {
        let lang: String
        let t: [String: Any]
        let page: Model
    }
}
