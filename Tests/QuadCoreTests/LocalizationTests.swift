import Testing

@testable import QuadCore

@Suite struct LocalizationTests {
    @Test func pluralCategoriesFollowCLDR() {
        #expect(PluralCategory(count: 0, language: .english) == .other)
        #expect(PluralCategory(count: 1, language: .english) == .one)
        #expect(PluralCategory(count: 2, language: .english) == .other)
        // In French, 0 and 1 are singular.
        #expect(PluralCategory(count: 0, language: .french) == .one)
        #expect(PluralCategory(count: 1, language: .french) == .one)
        #expect(PluralCategory(count: 2, language: .french) == .other)
    }

    @Test func countedPhrasesUseTheRightForm() {
        let english = Localizer(language: .english)
        let french = Localizer(language: .french)
        #expect(english("time.secondsAgo", count: 1) == "Updated 1 second ago")
        #expect(english("time.secondsAgo", count: 0) == "Updated 0 seconds ago")
        #expect(french("time.secondsAgo", count: 0) == "Mis à jour il y a 0 seconde")
        #expect(french("time.secondsAgo", count: 1) == "Mis à jour il y a 1 seconde")
        #expect(french("time.secondsAgo", count: 12) == "Mis à jour il y a 12 secondes")
        // An exact phrase for zero wins over the category.
        #expect(english("home.services", count: 0) == "No services yet")
        #expect(english("home.services", count: 4) == "4 services")
    }

    @Test func placeholdersAreFilledAndMissingKeysShow() {
        let french = Localizer(language: .french)
        #expect(french("error.reference", ["id": "abc"]) == "Référence : abc")
        #expect(french("no.such.key") == "no.such.key")
    }

    @Test func bothLanguagesSayEverything() {
        #expect(Localizer(language: .english).keys == Localizer(language: .french).keys)
        #expect(!Localizer(language: .english).keys.isEmpty)
    }

    /// Templates reach a phrase by its path (`t.rooms.booked`): a key that is also the start of others
    /// (`rooms.booked.room`) would be read as their group, and the page would show that group instead of the phrase.
    @Test func noKeyIsTheGroupOfOthers() {
        let keys = Localizer(language: .english).keys
        let groups = keys.filter { key in keys.contains { $0.hasPrefix(key + ".") } }
        #expect(groups.isEmpty, "keys that are also groups: \(groups.sorted())")
    }

    @Test func acceptLanguageIsNegotiatedByQuality() {
        #expect(Language.negotiate(acceptLanguage: "fr-FR,fr;q=0.9,en;q=0.8") == .french)
        #expect(Language.negotiate(acceptLanguage: "en;q=0.4, fr;q=0.7") == .french)
        #expect(Language.negotiate(acceptLanguage: "de-DE, en;q=0.5") == .english)
        #expect(Language.negotiate(acceptLanguage: "fr;q=0") == .english)
        #expect(Language.negotiate(acceptLanguage: nil) == .english)
        #expect(Language(code: "FR_ca") == .french)
    }
}
