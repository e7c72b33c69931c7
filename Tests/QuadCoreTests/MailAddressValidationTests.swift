import QuadCore
import Testing

/// The one check of a mail address, for the forms, the API and the command line: what a relay takes, stored one way.
@Suite struct MailAddressValidationTests {
    @Test func anAddressIsTrimmedAndItsDomainLowercased() throws {
        #expect(
            try AccountValidation.mailAddress("  Ada.Lovelace+quad@Example.ORG ") == "Ada.Lovelace+quad@example.org")
        #expect(
            try AccountValidation.mailAddress("o'brien@mail.xn--bcher-kva.example")
                == "o'brien@mail.xn--bcher-kva.example")
        #expect(try AccountValidation.mailAddress("") == nil)
        #expect(try AccountValidation.mailAddress(nil) == nil)
    }

    @Test(arguments: [
        "ada", "ada@", "@example.org", "ada@example", "ada@@example.org", "a@b@example.org", "ada lovelace@example.org",
        ".ada@example.org", "ada.@example.org", "a..da@example.org", "ada@-example.org", "ada@example-.org",
        "ada@exa_mple.org", "ada@example..org", "adà@example.org", "ada@bücher.example", "<ada@example.org>",
        "ada@example.org\nBcc: eve@example.org", "\"ada\"@example.org", "ada,eve@example.org",
        String(repeating: "a", count: 65) + "@example.org",
        "ada@" + String(repeating: "a", count: 64) + ".org",
        "ada@" + String(repeating: "abcdefghij.", count: 23) + "org",
    ])
    func whatNoRelayTakesIsRefusedWithWhy(text: String) {
        #expect {
            try AccountValidation.mailAddress(text)
        } throws: { error in
            (error as? ValidationFailure)?.errors.first?.message == "Give an email address such as ada@example.org."
        }
    }
}
