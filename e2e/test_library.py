"""The Library page `/library` in a real browser: adding a book in French with an inline error, checking
out and returning, the unsaved-changes guard, live updates, phones and accessibility.

Every test starts a server of its own with the demo shelf (21 books; Clean Code, Sapiens and Running Lean
on loan, The Mythical Man-Month overdue), laid out back from the server's clock. `sign_in_as` signs the
browser in (an account made once per name).
"""

import pytest

from conftest import PHONE
from helpers import account_token, by_css, one, sign_in, sign_in_as, text_of, wait_for


@pytest.fixture
def library_server(quad_server_factory):
    return quad_server_factory(demo=True)


def book_id(server, title: str) -> int:
    response = server.request("/api/books?q=" + title.replace(" ", "%20"))
    assert response.status == 200, response.text
    return next(book["id"] for book in response.json() if book["title"] == title)


def api_book(server, book: int) -> dict:
    """The book as a signed-in member sees it (a visitor gets no one's name)."""
    return server.request(f"/api/books/{book}", admin=True).json()


def check_out_as(server, book: int, person: str) -> str:
    """`person` checks `book` out through the API; returns their token."""
    token = account_token(server, person)
    response = server.request(
        f"/api/books/{book}/checkout",
        method="POST",
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        data=b"{}",
    )
    assert response.status == 200, response.text
    return token


def test_adding_a_book_in_french_shows_the_missing_author_next_to_its_field(library_server, new_browser, axe):
    driver = new_browser(lang="fr")
    sign_in_as(driver, library_server, "Ada Lovelace", next_path="/library")
    driver.get(library_server.url + "/library/new")
    assert text_of(driver, "h1") == "Bibliothèque"
    assert "obligatoire" in text_of(driver, "label[for=book-author]")
    one(driver, "#book-title").send_keys("Vingt mille lieues sous les mers")
    one(driver, "#book-publisher").send_keys("Hetzel")
    one(driver, "#book-save").click()

    wait_for(driver, lambda d: by_css(d, "#book-author-error"), message="no inline error for the author")
    assert text_of(driver, "#book-author-error") == "Saisissez un auteur."
    assert one(driver, "#book-author").get_attribute("aria-invalid") == "true"
    assert "book-author-error" in one(driver, "#book-author").get_attribute("aria-describedby")
    # What was typed is kept, and no other field is blamed.
    assert one(driver, "#book-title").get_attribute("value") == "Vingt mille lieues sous les mers"
    assert one(driver, "#book-publisher").get_attribute("value") == "Hetzel"
    assert not by_css(driver, "#book-title-error")
    axe.assert_clean(driver, "editor with an error")

    one(driver, "#book-author").send_keys("Jules Verne")
    one(driver, "#book-save").click()
    wait_for(driver, lambda d: "/library/books/" in d.current_url, message="the book was not added")
    assert text_of(driver, "#book-heading") == "Vingt mille lieues sous les mers"
    assert text_of(driver, "#book-status") == "Disponible"
    assert "ajouté" in text_of(driver, "#library-notice")


def test_check_out_and_return(library_server, browser, axe):
    sign_in_as(browser, library_server, "Grace Hopper", next_path="/library")
    book = book_id(library_server, "Refactoring")
    browser.get(f"{library_server.url}/library/books/{book}")
    assert text_of(browser, "#book-status") == "Available"
    axe.assert_clean(browser, "detail")

    one(browser, "#book-checkout").click()
    wait_for(
        browser,
        lambda d: text_of(d, "#book-status").startswith("With Grace Hopper since"),
        message="the badge does not say who has it",
    )
    assert api_book(library_server, book)["lastCheckedOutBy"] == "Grace Hopper"
    # The list says it too, next to the title.
    item = f".book-item[data-book-id='{book}']"
    assert text_of(browser, f"{item} .book-author") == "Martin Fowler"
    assert text_of(browser, f"{item} .badge").startswith("With Grace Hopper since")

    one(browser, "#book-return").click()
    wait_for(browser, lambda d: text_of(d, "#book-status") == "Available", message="not returned")
    history = by_css(browser, "#loan-history li")
    assert len(history) == 1 and history[0].text.startswith("Grace Hopper:")
    assert api_book(library_server, book)["status"] == "available"


def test_cancel_with_unsaved_changes_asks_first(library_server, browser):
    sign_in_as(browser, library_server, "Ada Lovelace", next_path="/library")
    book = book_id(library_server, "Sapiens")
    browser.get(f"{library_server.url}/library/books/{book}/edit")
    title = one(browser, "#book-title")
    title.clear()
    title.send_keys("Sapiens (2nd edition)")

    # Leaving the page is guarded too.
    prevented = browser.execute_script(
        "const e = new Event('beforeunload', {cancelable: true}); window.dispatchEvent(e); return e.defaultPrevented;"
    )
    assert prevented

    one(browser, "#book-cancel").click()
    alert = browser.switch_to.alert
    assert alert.text == "Discard your changes?"
    alert.dismiss()
    assert browser.current_url.endswith(f"/library/books/{book}/edit")
    assert one(browser, "#book-title").get_attribute("value") == "Sapiens (2nd edition)"

    one(browser, "#book-cancel").click()
    browser.switch_to.alert.accept()
    wait_for(browser, lambda d: d.current_url.endswith(f"/library/books/{book}"), message="cancel did not leave")
    assert text_of(browser, "#book-heading") == "Sapiens"
    assert api_book(library_server, book)["title"] == "Sapiens"


def test_unchanged_editor_cancels_without_asking(library_server, browser):
    sign_in_as(browser, library_server, "Ada Lovelace", next_path="/library")
    book = book_id(library_server, "Refactoring")
    browser.get(f"{library_server.url}/library/books/{book}/edit")
    one(browser, "#book-cancel").click()
    wait_for(browser, lambda d: d.current_url.endswith(f"/library/books/{book}"), message="cancel asked or stayed")


def test_someone_elses_checkout_shows_without_reload(library_server, browser):
    book = book_id(library_server, "Don't Make Me Think")
    browser.get(f"{library_server.url}/library/books/{book}")
    assert text_of(browser, "#book-status") == "Available"
    browser.execute_script("window.__notReloaded = true;")
    token = check_out_as(library_server, book, "Margaret Hamilton")
    # The visitor sees it go out, but not who has it: names are for people signed in.
    wait_for(
        browser,
        lambda d: text_of(d, "#book-status").startswith("On loan since"),
        message="the checkout did not show live",
    )
    assert "Margaret" not in browser.page_source
    # An edit shows too, in the book and in the list.
    response = library_server.request(
        f"/api/books/{book}",
        method="PUT",
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        data=b'{"title": "Don\'t Make Me Think, Revisited"}',
    )
    assert response.status == 200, response.text
    wait_for(
        browser,
        lambda d: text_of(d, "#book-heading") == "Don't Make Me Think, Revisited",
        message="the edit did not show live",
    )
    assert text_of(browser, f".book-item[data-book-id='{book}'] .book-title") == "Don't Make Me Think, Revisited"
    assert browser.execute_script("return window.__notReloaded === true;")


def test_without_events_the_list_follows_by_polling_and_ticks_stay(quad_server_factory, browser):
    """Behind a proxy that drops event streams the page polls its live part: another person's checkout shows, and
    the books ticked in select mode stay ticked through the redraw."""
    server = quad_server_factory(demo=True, env={"QUAD_REFRESH_SECONDS": "5"})
    browser.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": "delete window.EventSource;"})
    sign_in_as(browser, server, "Ada Lovelace", next_path="/library?select=1")
    book = book_id(server, "Refactoring")
    item = f".book-item[data-book-id='{book}']"
    assert text_of(browser, f"{item} .book-badge") == "Available"
    picks = by_css(browser, ".book-pick")
    picks[0].click()
    picks[1].click()
    ticked = [pick.get_attribute("value") for pick in picks[:2]]
    browser.execute_script("window.__notReloaded = true;")
    check_out_as(server, book, "Margaret Hamilton")
    wait_for(
        browser,
        lambda d: text_of(d, f"{item} .book-badge") != "Available",
        timeout=20,
        message="the checkout did not show by polling",
    )
    assert browser.execute_script("return document.getElementById('library').dataset.live") == "poll"
    assert [pick.get_attribute("value") for pick in by_css(browser, ".book-pick") if pick.is_selected()] == ticked
    assert browser.execute_script("return window.__notReloaded === true;")


def test_phone_shows_the_list_then_the_book_alone(library_server, new_browser, axe, set_color_scheme):
    driver = new_browser(width=PHONE)
    set_color_scheme(driver, "dark")
    driver.get(library_server.url + "/library")
    assert one(driver, "#library-list").is_displayed()
    assert not one(driver, "#library-detail").is_displayed()
    assert len(by_css(driver, ".book-item")) == 21
    # Overdue books say so.
    assert "Overdue" in [item.text for item in by_css(driver, ".book-item .badge")]
    axe.assert_clean(driver, "phone list")

    by_css(driver, ".book-link")[0].click()
    wait_for(driver, lambda d: "/library/books/" in d.current_url)
    assert not one(driver, "#library-list").is_displayed()
    assert one(driver, "#library-detail").is_displayed()
    assert one(driver, ".back-link").is_displayed()
    axe.assert_clean(driver, "phone detail, dark")
    # The way back is a real link, reached by keyboard.
    one(driver, ".back-link").send_keys("\n")
    wait_for(driver, lambda d: d.current_url.rstrip("/").endswith("/library"), message="no way back to the list")
    assert one(driver, "#library-list").is_displayed()


def test_sort_is_remembered_and_select_mode_deletes_several(library_server, browser, axe):
    # An admin: some of the demo's books are on loan, which only their borrower or an admin may delete.
    sign_in(browser, library_server, "admin", next_path="/library")
    browser.get(library_server.url + "/library?sort=oldest")
    first = by_css(browser, ".book-title")[0].text
    assert first == "Running Lean"
    browser.get(library_server.url + "/library")
    assert by_css(browser, ".book-title")[0].text == "Running Lean"

    one(browser, "#library-select").click()
    wait_for(browser, lambda d: by_css(d, ".book-pick"))
    axe.assert_clean(browser, "select mode")
    picks = by_css(browser, ".book-pick")
    picks[0].click()
    picks[1].click()
    one(browser, "#library-delete-selected").click()
    browser.switch_to.alert.accept()
    wait_for(browser, lambda d: "done=deleted" in d.current_url, message="nothing deleted")
    assert len(library_server.request("/api/books").json()) == 19
    assert "Deleted 2 books." in text_of(browser, "#library-notice")


def test_wide_screen_shows_the_list_beside_the_book_and_shares_its_link(library_server, browser, axe):
    book = book_id(library_server, "Refactoring")
    browser.get(f"{library_server.url}/library/books/{book}")
    listing, detail = one(browser, "#library-list"), one(browser, "#library-detail")
    assert listing.is_displayed() and detail.is_displayed()
    assert detail.rect["x"] >= listing.rect["x"] + listing.rect["width"]
    assert abs(detail.rect["y"] - listing.rect["y"]) < 50
    assert not one(browser, ".back-link").is_displayed()
    link = f"{library_server.url}/library/books/{book}"

    # The system share sheet, where the browser has one.
    share = one(browser, "#book-share")
    assert share.is_displayed() and share.text == "Share"
    browser.execute_script("navigator.share = async (data) => { window.__shared = data; };")
    share.click()
    wait_for(browser, lambda d: d.execute_script("return window.__shared || null;"), message="nothing shared")
    assert browser.execute_script("return window.__shared;") == {"title": "Refactoring", "url": link}

    # Else the link is copied, and the page says so.
    browser.execute_script(
        "delete navigator.share;"
        "Object.defineProperty(navigator, 'clipboard', {configurable: true,"
        " value: {writeText: async (text) => { window.__copied = text; }}});"
    )
    share.click()
    wait_for(browser, lambda d: text_of(d, "#library-live") == "Link copied.", message="no word of the copy")
    assert browser.execute_script("return window.__copied;") == link
    axe.assert_clean(browser, "wide detail")


def test_delete_asks_first_and_select_all_deletes_every_book(library_server, browser, axe):
    sign_in(browser, library_server, "admin", next_path="/library")
    book = book_id(library_server, "Sapiens")
    browser.get(f"{library_server.url}/library/books/{book}")
    one(browser, "#book-delete").click()
    alert = browser.switch_to.alert
    assert "Sapiens" in alert.text
    alert.dismiss()
    assert library_server.request(f"/api/books/{book}").status == 200
    one(browser, "#book-delete").click()
    browser.switch_to.alert.accept()
    wait_for(browser, lambda d: "done=deleted" in d.current_url, message="not deleted")
    assert library_server.request(f"/api/books/{book}").status == 404

    one(browser, "#library-select").click()
    wait_for(browser, lambda d: by_css(d, "#library-select-all"))
    one(browser, "#library-select-all").click()
    wait_for(browser, lambda d: by_css(d, ".book-pick:checked"))
    picks = by_css(browser, ".book-pick")
    assert len(picks) == 20 and all(pick.is_selected() for pick in picks)
    # Each checkbox is named by its book, and its target is 44 px.
    target = by_css(browser, ".book-pick-target")[0]
    assert target.rect["width"] >= 44 and target.rect["height"] >= 44
    axe.assert_clean(browser, "everything selected")
    one(browser, "#library-delete-selected").click()
    browser.switch_to.alert.accept()
    wait_for(browser, lambda d: "done=deleted" in d.current_url, message="nothing deleted")
    assert library_server.request("/api/books").json() == []
    assert text_of(browser, "#library-notice") == "Deleted 20 books."
    assert one(browser, "#library-empty").is_displayed()


def test_a_member_cannot_delete_a_book_someone_else_has(library_server, browser):
    """A book on loan is its borrower's or an admin's to delete: Ada's try says who has it, and it stays."""
    book = next(b["id"] for b in api_book_list(library_server) if b.get("borrower"))
    sign_in_as(browser, library_server, "Ada Lovelace", next_path=f"/library/books/{book}")
    one(browser, "#book-delete").click()
    browser.switch_to.alert.accept()
    wait_for(
        browser,
        lambda d: "only they or an admin may delete it" in d.page_source,
        message="the refusal was not shown",
    )
    assert library_server.request(f"/api/books/{book}").status == 200


def api_book_list(server) -> list[dict]:
    """Every book as a signed-in member sees it (with whose it is)."""
    return server.request("/api/books", admin=True).json()
