"""The Rooms page `/rooms` in a real browser: booking, live spots, offline, no JavaScript, phones,
French, keyboard and accessibility.

Every test starts a server of its own with the demo rooms (tests book spots, so they do not share one).
Demo data: 8 rooms, ids are their lowercase names.

Bookings belong to the signed-in person: `become` signs the browser in (an account made once per name),
`api_book` and `api_cancel` book and cancel elsewhere, through the API with that person's session token.
"""

import json
import re

import pytest

from conftest import DESKTOP, PHONE, melbourne
from helpers import (
    account_token,
    advance_page_clock,
    by_css,
    confirm_cancel,
    follow_clock,
    one,
    set_offline,
    shown,
    sign_in_as,
    text_of,
    wait_for,
    wait_replaced,
)

# id: (spots, capacity)
DEMO = {
    "ljerka": (43, 50),
    "mostafa": (4, 12),
    "helmold": (86, 100),
    "painter": (16, 20),
    "septima": (84, 90),
    "alexis": (0, 8),
    "yana": (34, 40),
    "mina": (39, 45),
}
PHOTO_RATIO = 328 / 220


# --- Helpers ---------------------------------------------------------------------------------


@pytest.fixture
def rooms_server(quad_server_factory):
    """The demo on a weekday at 10:00 on the campus, when every building is open (the Library Wing and Engineering
    keep hours)."""
    return quad_server_factory(demo=True, now=melbourne("10:00", "weekday"))


def spots_text(driver, room: str) -> str:
    return text_of(driver, f"#room-{room} .spots-text")


def api_rooms(server) -> dict:
    response = server.request("/api/rooms")
    assert response.status == 200, response.text
    return {room["id"]: room for room in response.json()["rooms"]}


# --- Who books ---------------------------------------------------------------------------------


def become(driver, server, person: str, script=True):
    """Signs the browser in as `person` (through the sign-in form, an account made once). Ends on /rooms,
    with rooms.js running and its event stream open unless `script` is False."""
    sign_in_as(driver, server, person, next_path="/rooms")
    if script:
        open_rooms(driver, server)


def api_book(server, room: str, person: str):
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {account_token(server, person)}"}
    response = server.request(f"/api/rooms/{room}/bookings", method="POST", headers=headers, data=b"{}")
    assert response.status == 201, f"booking {room} for {person}: {response.status} {response.text}"
    return response.json()["booking"]


def api_cancel(server, room: str, booking: dict, person: str):
    headers = {"Authorization": f"Bearer {account_token(server, person)}"}
    response = server.request(f"/api/rooms/{room}/bookings/{booking['id']}", method="DELETE", headers=headers)
    assert response.status == 204, f"cancelling {booking}: {response.status} {response.text}"


def live_mode(driver) -> str:
    return driver.execute_script("return document.getElementById('rooms').dataset.live || ''")


def open_rooms(driver, server, path="/rooms", stream=True):
    """Loads the page and waits for rooms.js (it shows the Refresh button), and for its event stream.
    The browser's clock reads the server's."""
    follow_clock(driver, server)
    driver.get(server.url + path)
    wait_for(driver, lambda d: shown(d, "#rooms-refresh"), message="rooms.js did not start")
    if stream:
        wait_for(driver, lambda d: live_mode(d) == "stream", message="the event stream did not open")


def book_button(driver, room: str):
    """The room's Book button, scrolled to the middle of the screen (as a person would before pressing it): on a
    phone the finder comes first, and the tab bar covers the screen's foot."""
    button = one(driver, f"#room-{room} button.book")
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", button)
    return button


def book_disabled(driver, room: str) -> bool:
    return driver.execute_script("return document.querySelector(arguments[0]).disabled", f"#room-{room} button.book")


def booking_requests(driver, room: str) -> int:
    """How many requests the page sent to POST /api/rooms/{room}/bookings (Resource Timing)."""
    return driver.execute_script(
        "return performance.getEntriesByType('resource').filter(e => new URL(e.name).pathname === arguments[0]).length",
        f"/api/rooms/{room}/bookings",
    )


def count_booking_calls(driver) -> None:
    """From now on the page counts the booking requests it starts (window.__bookingCalls: URL path -> count)."""
    driver.execute_script("""
        window.__bookingCalls = {};
        const realFetch = window.fetch;
        window.fetch = (input, ...rest) => {
          const path = new URL(input instanceof Request ? input.url : String(input), location.href).pathname;
          if (path.startsWith("/api/rooms/") && path.endsWith("/bookings")) {
            window.__bookingCalls[path] = (window.__bookingCalls[path] || 0) + 1;
          }
          return realFetch.call(window, input, ...rest);
        };
    """)


def booking_calls(driver, room: str) -> int:
    """How many booking requests for `room` the page started since count_booking_calls."""
    return driver.execute_script("return window.__bookingCalls[arguments[0]] || 0", f"/api/rooms/{room}/bookings")


def book_buttons_state(driver) -> dict:
    """room id -> (disabled, aria-disabled) of its Book button."""
    return driver.execute_script(
        "const r = {}; for (const c of document.querySelectorAll('.room-card')) {"
        "  const b = c.querySelector('button.book');"
        "  r[c.dataset.roomId] = [b.disabled, b.getAttribute('aria-disabled')]; }"
        "return r;"
    )


def list_ids(driver, list_id: str) -> list[str]:
    return driver.execute_script(
        "return Array.from(document.querySelectorAll('#' + arguments[0] + ' > .room-card'), c => c.dataset.roomId)",
        list_id,
    )


def expected_available_order(rooms: dict) -> list[str]:
    open_rooms_ = [r for r in rooms.values() if r["spots"] > 0]
    return [r["id"] for r in sorted(open_rooms_, key=lambda r: (-r["spots"], r["name"].lower(), r["id"]))]


# --- 1. Booking -------------------------------------------------------------------------------


# What booking or cancelling changes on a card (its booking id, the Book form or "Booked" and the Cancel
# question) as a list of elements: tag, attributes, own text. What rooms.js draws must be what the server draws.
CARD_SHAPE = """(id) => {
  const card = document.getElementById(id);
  const text = (e) => Array.from(e.childNodes).filter(n => n.nodeType === 3).map(n => n.nodeValue).join('')
    .replace(/\\s+/g, ' ').trim();
  const attributes = (e) => Array.from(e.attributes, a => a.name + '=' + a.value).sort();
  return [card.dataset.bookingId || null, ...Array.from(card.querySelectorAll('*'))
    .filter(e => e.closest('.room-body > form, .room-body > .cancel-one, .booked-state'))
    .map(e => [e.tagName, ...attributes(e), text(e)])];
}"""


def card_shape(driver, room: str) -> list:
    return driver.execute_script(f"return ({CARD_SHAPE})(arguments[0])", f"room-{room}")


def record_drawn_shape(driver, room: str, selector: str) -> None:
    """Keeps the card's shape (in window.__drawn) as soon as `selector` appears in it: as rooms.js drew it,
    before it redraws the lists from the server's page."""
    driver.execute_script(
        f"const shape = {CARD_SHAPE}; window.__drawn = null;"
        "new MutationObserver((_, observer) => {"
        "  if (document.querySelector(`#room-${arguments[0]} ${arguments[1]}`)) {"
        "    window.__drawn = shape(`room-${arguments[0]}`); observer.disconnect(); }"
        "}).observe(document.getElementById('rooms'), {subtree: true, childList: true});",
        room,
        selector,
    )


def test_book_and_cancel_in_the_browser(rooms_server, browser):
    become(browser, rooms_server, "Ada Lovelace")
    assert spots_text(browser, "ljerka") == "43 of 43 seats free"
    unbooked = card_shape(browser, "ljerka")

    marker = browser.execute_script("return window.__noReload = Math.random()")
    record_drawn_shape(browser, "ljerka", ".cancel-form")
    button = book_button(browser, "ljerka")
    assert button.accessible_name == "Book Ljerka"
    button.click()

    wait_for(browser, lambda d: spots_text(d, "ljerka") == "42 of 43 seats free", message="count did not drop to 42")
    wait_for(browser, lambda d: text_of(d, "#room-ljerka .booked-state") == "Booked", message="no 'Booked' state")
    wait_for(
        browser,
        lambda d: (
            shown(d, "#room-ljerka .cancel-one summary")
            and one(d, "#room-ljerka .cancel-one summary").accessible_name == "Cancel Ljerka"
        ),
        message="no Cancel",
    )
    assert not shown(browser, "#room-ljerka button.book"), "the Book button is still shown"
    assert "Booked a spot in Ljerka." in text_of(browser, "#room-ljerka .card-message")
    assert browser.execute_script("return window.__noReload") == marker, "the page reloaded to book"
    assert api_rooms(rooms_server)["ljerka"]["spots"] == 42
    booking_id = one(browser, "#room-ljerka").get_attribute("data-booking-id")
    assert booking_id, "the card does not say which booking it shows"
    wait_for(
        browser,
        lambda d: by_css(d, f'#my-bookings-list li[data-room-id="ljerka"][data-booking-id="{booking_id}"]'),
        message="not in the person's bookings",
    )
    drawn = browser.execute_script("return window.__drawn")
    assert drawn, "rooms.js did not draw the booked card"

    # A reload draws the booked card exactly as rooms.js did.
    open_rooms(browser, rooms_server)
    assert spots_text(browser, "ljerka") == "42 of 43 seats free"
    assert text_of(browser, "#room-ljerka .booked-state") == "Booked"
    assert card_shape(browser, "ljerka") == drawn, "rooms.js and the server draw a booked card differently"
    assert shown(browser, "#room-ljerka .cancel-one summary")
    assert one(browser, "#room-ljerka .cancel-one").get_attribute("open") is None, "Cancel did not ask first"

    marker = browser.execute_script("return window.__noReload = Math.random()")
    record_drawn_shape(browser, "ljerka", "button.book")
    one(browser, "#room-ljerka .cancel-one summary").click()
    wait_for(browser, lambda d: "Cancel this booking?" in text_of(d, "#room-ljerka .cancel-one"), message="no question")
    assert one(browser, "#room-ljerka .cancel-form button").accessible_name == "Yes, cancel it Ljerka"
    one(browser, "#room-ljerka .cancel-form button").click()
    wait_for(browser, lambda d: spots_text(d, "ljerka") == "43 of 43 seats free", message="count did not go back to 43")
    wait_for(
        browser,
        lambda d: shown(d, "#room-ljerka button.book") and book_button(d, "ljerka").accessible_name == "Book Ljerka",
        message="Book button not restored",
    )
    assert "Your booking in Ljerka is cancelled." in text_of(browser, "#room-ljerka .card-message")
    assert not by_css(browser, "#room-ljerka .booked-state, #room-ljerka .cancel-one")
    assert one(browser, "#room-ljerka").get_attribute("data-booking-id") is None
    assert api_rooms(rooms_server)["ljerka"]["spots"] == 43
    wait_for(browser, lambda d: not by_css(d, '#my-bookings-list li[data-room-id="ljerka"]'))
    assert browser.execute_script("return window.__noReload") == marker, "the page reloaded to cancel"
    assert browser.execute_script("return window.__drawn") == unbooked, "rooms.js drew the card unlike the server"


def test_cancel_from_my_bookings_in_place(rooms_server, browser):
    booking = api_book(rooms_server, "mina", "Maya")
    become(browser, rooms_server, "Maya")
    assert one(browser, "#room-mina").get_attribute("data-booking-id") == booking["id"]
    item = f'#my-bookings-list li[data-booking-id="{booking["id"]}"]'
    assert one(browser, f"{item} .cancel-one summary").accessible_name.startswith("Cancel Mina")

    marker = browser.execute_script("return window.__noReload = Math.random()")
    browser.execute_script("arguments[0].focus()", one(browser, f"{item} .cancel-one summary"))
    confirm_cancel(browser, item)
    wait_for(browser, lambda d: not by_css(d, item), message="the booking stayed in the list")
    wait_for(browser, lambda d: shown(d, "#room-mina button.book"), message="the card did not offer Book again")
    assert "Your booking in Mina is cancelled." in text_of(browser, "#room-mina .card-message")
    wait_for(browser, lambda d: spots_text(d, "mina") == "39 of 39 seats free")
    assert api_rooms(rooms_server)["mina"]["spots"] == 39
    # The list's Cancel went away with its booking: focus goes to the room's Book button, not the page.
    wait_for(
        browser,
        lambda d: d.execute_script("return document.activeElement.matches('#room-mina button.book')"),
        message="focus was lost",
    )
    wait_for(browser, lambda d: shown(d, "#my-bookings-empty"), message="no 'You have no bookings.'")
    assert browser.execute_script("return window.__noReload") == marker, "the page reloaded to cancel"


def test_signed_out_page_offers_sign_in(rooms_server, browser):
    open_rooms(browser, rooms_server)
    # Nobody signed in: each room offers to sign in instead of a Book button.
    assert not by_css(browser, "button.book, .cancel-form, #my-bookings")
    links = by_css(browser, ".room-card a.sign-in-to-book")
    assert len(links) == 8 and all("/signin" in link.get_attribute("href") for link in links)


def test_ended_session_and_failed_cancel_speak_the_pages_language(rooms_server, new_browser):
    driver = new_browser(lang="fr")
    api_book(rooms_server, "painter", "Élise")
    become(driver, rooms_server, "Élise")

    # A cancel the server refuses (here: the CSRF cookie no longer matches the page's token) gives the
    # server's reason inside a French sentence.
    driver.delete_cookie("quad_csrf")
    driver.add_cookie({"name": "quad_csrf", "value": "x" * 43, "path": "/"})
    confirm_cancel(driver, "#room-painter")
    wait_for(
        driver,
        lambda d: "card-message-error" in (one(d, "#room-painter .card-message").get_attribute("class")),
        message="no error after a refused cancel",
    )
    assert text_of(driver, "#room-painter .card-message").startswith("La réservation n’a pas pu être annulée : ")
    assert api_rooms(rooms_server)["painter"]["spots"] == 15
    assert by_css(driver, "#room-painter .cancel-one"), "the booking is still there: Cancel stays"

    # The session ends (signed out elsewhere): booking says to sign in, in French, not the server's English.
    driver.delete_cookie("quad_session")
    book_button(driver, "ljerka").click()
    wait_for(
        driver,
        lambda d: text_of(d, "#room-ljerka .card-message") == "Connectez-vous pour réserver",
        message=f"got {text_of(driver, '#room-ljerka .card-message')!r}",
    )
    assert "Sign in" not in text_of(driver, "#rooms")
    # The lists are redrawn as the server now draws them: sign-in links, no list of bookings.
    wait_for(
        driver,
        lambda d: by_css(d, "#room-ljerka a.sign-in-to-book") and not by_css(d, "#my-bookings"),
        message="the page still offers to book",
    )
    assert api_rooms(rooms_server)["ljerka"]["spots"] == 43


# --- 2. Live updates ---------------------------------------------------------------------------


def test_booking_made_elsewhere_shows_without_reload(rooms_server, browser):
    open_rooms(browser, rooms_server)
    marker = browser.execute_script("return window.__noReload = Math.random()")
    assert spots_text(browser, "mina") == "39 of 39 seats free"

    api_book(rooms_server, "mina", "Other")

    wait_for(
        browser,
        lambda d: spots_text(d, "mina") == "38 of 39 seats free",
        timeout=3,
        message="the booking made elsewhere did not show within 3 s",
    )
    wait_for(
        browser,
        lambda d: "Mina: 38 of 39 seats free" in text_of(d, "#rooms-live"),
        timeout=3,
        message="the live region did not announce it",
    )
    assert one(browser, "#rooms-live").get_attribute("aria-live") == "polite"
    assert browser.execute_script("return window.__noReload") == marker, "the page reloaded"
    assert text_of(browser, "#rooms-updated") == "Updated just now"


def test_polls_when_the_event_stream_is_unavailable(quad_server_factory, browser):
    server = quad_server_factory(demo=True, now=melbourne("10:00", "weekday"), env={"QUAD_REFRESH_SECONDS": "5"})
    browser.execute_cdp_cmd("Network.enable", {})
    browser.execute_cdp_cmd("Network.setBlockedURLs", {"urls": ["*/api/events*"]})
    open_rooms(browser, server, stream=False)
    wait_for(browser, lambda d: live_mode(d) == "poll", message="rooms.js did not fall back to polling")

    api_book(server, "yana", "Poller")

    wait_for(
        browser,
        lambda d: spots_text(d, "yana") == "33 of 34 seats free",
        timeout=12,
        message="polling (every 5 s ± 20 %) did not pick up the booking",
    )
    assert not shown(browser, "#rooms-error")

    # Nothing refreshes while offline: the page says how old its news is.
    set_offline(browser, True)
    wait_for(
        browser,
        lambda d: re.fullmatch(r"Updated \d+ seconds ago", text_of(d, "#rooms-updated")),
        timeout=15,
        message=f"freshness stayed {text_of(browser, '#rooms-updated')!r}",
    )
    set_offline(browser, False)
    wait_for(
        browser,
        lambda d: text_of(d, "#rooms-updated") == "Updated just now",
        timeout=10,
        message="coming back online did not refresh",
    )


def test_rooms_added_and_removed_live(rooms_server, browser):
    open_rooms(browser, rooms_server)
    marker = browser.execute_script("return window.__noReload = Math.random()")

    zora = {"id": "zora", "name": "Zora", "building": "Annex", "capacity": 10, "spots": 2}
    created = rooms_server.request(
        "/api/rooms",
        method="POST",
        admin=True,
        headers={"Content-Type": "application/json"},
        data=json.dumps(zora).encode(),
    )
    assert created.status == 201, created.text
    wait_for(browser, lambda d: "zora" in list_ids(d, "rooms-available"), timeout=5, message="new room not shown")
    assert list_ids(browser, "rooms-available") == expected_available_order(api_rooms(rooms_server))
    assert text_of(browser, "#room-zora .badge") == "Almost full"

    deleted = rooms_server.request("/api/rooms/alexis", method="DELETE", admin=True)
    assert deleted.status == 204, deleted.text
    wait_for(browser, lambda d: not by_css(d, "#room-alexis"), timeout=5, message="deleted room still shown")
    assert not shown(browser, "#rooms-full-section"), "the empty Full rooms section is still shown"
    assert browser.execute_script("return window.__noReload") == marker, "the page reloaded"


# Keeps every event stream the page opens (window.__streams) and lets the test hide and show the page.
RECORD_STREAMS = """
const RealEventSource = window.EventSource;
window.__streams = [];
window.EventSource = class extends RealEventSource {
  constructor(url, init) { super(url, init); window.__streams.push(this); }
};
window.__setHidden = (hidden) => {
  Object.defineProperty(document, "hidden", {configurable: true, get: () => hidden});
  document.dispatchEvent(new Event("visibilitychange"));
};
"""


def test_hidden_the_page_holds_no_stream_and_catches_up_when_shown(rooms_server, browser):
    """Nobody looking: no event stream is held open. Shown again, the page reopens its stream from the last event
    it heard and shows what changed meanwhile."""
    browser.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": RECORD_STREAMS})
    open_rooms(browser, rooms_server)
    api_book(rooms_server, "ljerka", "Somebody")
    wait_for(browser, lambda d: spots_text(d, "ljerka") == "42 of 43 seats free", timeout=5)
    open_streams = "return window.__streams.filter((s) => s.readyState !== EventSource.CLOSED).length"
    assert browser.execute_script(open_streams) == 1

    browser.execute_script("window.__setHidden(true)")
    assert browser.execute_script(open_streams) == 0
    assert live_mode(browser) == "poll"
    api_book(rooms_server, "ljerka", "Somebody else")

    browser.execute_script("window.__setHidden(false)")
    wait_for(browser, lambda d: spots_text(d, "ljerka") == "41 of 43 seats free", timeout=5, message="not caught up")
    wait_for(browser, lambda d: live_mode(d) == "stream", message="the stream did not reopen")
    urls = browser.execute_script("return window.__streams.map((s) => s.url)")
    assert len(urls) == 2 and "lastEventId=" not in urls[0]
    assert "lastEventId=" in urls[1], urls


def test_error_banner_while_the_server_is_unreachable(rooms_server, browser):
    open_rooms(browser, rooms_server)
    rooms_server.stop()
    one(browser, "#rooms-refresh").click()
    wait_for(browser, lambda d: shown(d, "#rooms-error"), message="no error banner after a failed refresh")
    assert one(browser, "#rooms-error").get_attribute("role") == "alert"
    assert shown(browser, "#rooms-retry")
    assert all(shown(browser, f"#room-{room}") for room in DEMO), "the last data must stay shown"
    assert not shown(browser, "#rooms-offline"), "online: this is an error, not being offline"

    # The same server again (port, database, its clock running on); the fixture stops it at the end.
    rooms_server.restart()
    # Retry; the reopened event stream may have cleared the error first, so the click is the script's.
    browser.execute_script("document.getElementById('rooms-retry').click()")
    wait_for(browser, lambda d: not shown(d, "#rooms-error"), timeout=10, message="error banner stayed after Retry")
    assert text_of(browser, "#rooms-updated") == "Updated just now"


def test_last_list_shows_when_the_server_is_gone(rooms_server, browser):
    """The service worker keeps the last copy of the page's live part: a page opened from its cache shows that, not
    older."""
    open_rooms(browser, rooms_server)
    browser.set_script_timeout(15)
    assert browser.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "navigator.serviceWorker.ready.then(() => navigator.serviceWorker.controller ? done(true) :"
        "  navigator.serviceWorker.addEventListener('controllerchange', () => done(true)));"
    )
    open_rooms(browser, rooms_server)  # through the service worker: the page's copy has Ljerka at 43
    api_book(rooms_server, "ljerka", "Somebody")
    wait_for(browser, lambda d: spots_text(d, "ljerka") == "42 of 43 seats free", timeout=5)
    one(browser, "#rooms-refresh").click()  # GET /rooms?fragment=live: the worker keeps this copy, at 42
    wait_for(
        browser,
        lambda d: d.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "caches.match(location.origin + '/rooms?fragment=live').then(r => r ? r.text() : '')"
            '  .then(t => done(/id="room-ljerka"[^>]* data-spots="42"/.test(t)), () => done(false));'
        ),
        timeout=5,
        message="the service worker kept no copy of the rooms' live part",
    )

    rooms_server.stop()
    browser.get(rooms_server.url + "/rooms")
    wait_for(browser, lambda d: by_css(d, "#room-ljerka"), message="the page did not open from the cache")
    wait_for(
        browser,
        lambda d: spots_text(d, "ljerka") == "42 of 43 seats free",
        timeout=5,
        message=f"showed {spots_text(browser, 'ljerka')!r}, not the last list",
    )
    wait_for(browser, lambda d: shown(d, "#rooms-error"), message="no error banner: the server is not there")
    # An old copy is not news: the page counts the time since its last news, from the cached page.
    wait_for(
        browser,
        lambda d: re.fullmatch(r"Updated \d+ seconds ago", text_of(d, "#rooms-updated")),
        timeout=12,
        message=f"freshness stayed {text_of(browser, '#rooms-updated')!r}",
    )


# --- 3. One booking per intent ------------------------------------------------------------------


def test_double_click_books_once(rooms_server, browser):
    from selenium.webdriver.common.action_chains import ActionChains

    become(browser, rooms_server, "Dora")
    ActionChains(browser).double_click(book_button(browser, "ljerka")).perform()

    wait_for(browser, lambda d: text_of(d, "#room-ljerka .booked-state") == "Booked", message="not booked")
    assert booking_requests(browser, "ljerka") == 1
    assert api_rooms(rooms_server)["ljerka"]["spots"] == 42
    assert "card-message-error" not in (one(browser, "#room-ljerka .card-message").get_attribute("class") or "")


def test_repeated_enter_books_once(rooms_server, browser):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    become(browser, rooms_server, "Enzo")
    count_booking_calls(browser)
    browser.execute_script("arguments[0].focus()", book_button(browser, "mina"))
    ActionChains(browser).send_keys(Keys.ENTER, Keys.ENTER, Keys.ENTER, Keys.ENTER).perform()

    wait_for(browser, lambda d: text_of(d, "#room-mina .booked-state") == "Booked", message="not booked")
    # Every Enter has been handled (the key presses were delivered before the page answered): a second
    # booking would have been asked for by now, even if it had not come back yet.
    assert booking_calls(browser, "mina") == 1
    # Resource Timing records a request once its answer is read, which may come after the page shows it.
    wait_for(browser, lambda d: booking_requests(d, "mina") >= 1, message="the booking request was not recorded")
    assert booking_requests(browser, "mina") == 1
    assert api_rooms(rooms_server)["mina"]["spots"] == 38
    assert spots_text(browser, "mina") == "38 of 39 seats free"


# --- 4. Offline ---------------------------------------------------------------------------------


def test_offline_disables_booking_and_online_restores_it(rooms_server, browser):
    become(browser, rooms_server, "Olga")
    assert not shown(browser, "#rooms-offline")

    set_offline(browser, True)
    wait_for(browser, lambda d: shown(d, "#rooms-offline"), message="no offline banner")
    assert text_of(browser, "#rooms-offline") == "Offline — booking unavailable"
    wait_for(
        browser,
        lambda d: all(disabled and aria == "true" for disabled, aria in book_buttons_state(d).values()),
        message=f"Book buttons not all disabled offline: {book_buttons_state(browser)}",
    )
    assert all(shown(browser, f"#room-{room}") for room in DEMO), "the rooms must stay shown"
    assert not shown(browser, "#rooms-error"), "offline is not an error"
    assert live_mode(browser) == "offline"

    set_offline(browser, False)
    wait_for(browser, lambda d: not shown(d, "#rooms-offline"), message="offline banner still shown")
    expected = {room: (room == "alexis", None) for room in DEMO}
    wait_for(
        browser,
        lambda d: {k: tuple(v) for k, v in book_buttons_state(d).items()} == expected,
        message=f"Book buttons after coming back: {book_buttons_state(browser)}",
    )
    wait_for(browser, lambda d: live_mode(d) == "stream", message="the event stream did not reopen")
    assert not shown(browser, "#rooms-error")


# --- 5. Full rooms ------------------------------------------------------------------------------


def test_full_rooms_are_listed_apart_and_rooms_move_live(rooms_server, browser):
    become(browser, rooms_server, "Fiona")
    assert list_ids(browser, "rooms-full") == ["alexis"]
    assert shown(browser, "#rooms-full-section")
    assert text_of(browser, "#rooms-full-heading") == "Full rooms"
    assert book_disabled(browser, "alexis")
    assert text_of(browser, "#room-alexis .badge") == "Full"
    assert "badge-full" in one(browser, "#room-alexis .badge").get_attribute("class").split()
    assert spots_text(browser, "alexis") == "No seats to book"
    assert list_ids(browser, "rooms-available") == expected_available_order(api_rooms(rooms_server))

    # Mostafa's last four spots go elsewhere: it moves to the full rooms without a reload.
    marker = browser.execute_script("return window.__noReload = Math.random()")
    bookings = [api_book(rooms_server, "mostafa", f"Guest {n}") for n in range(4)]
    wait_for(browser, lambda d: "mostafa" in list_ids(d, "rooms-full"), timeout=5, message="Mostafa did not move")
    assert "mostafa" not in list_ids(browser, "rooms-available")
    assert book_disabled(browser, "mostafa")
    assert text_of(browser, "#room-mostafa .badge") == "Full"
    assert one(browser, "#room-mostafa").get_attribute("data-state") == "full"

    # A spot given back: it returns to the available list where the server puts it.
    api_cancel(rooms_server, "mostafa", bookings[0], "Guest 0")
    wait_for(
        browser, lambda d: "mostafa" in list_ids(d, "rooms-available"), timeout=5, message="Mostafa did not come back"
    )
    assert list_ids(browser, "rooms-available") == expected_available_order(api_rooms(rooms_server))
    assert text_of(browser, "#room-mostafa .badge") == "Almost full"
    assert spots_text(browser, "mostafa") == "1 of 4 seats free"
    assert not book_disabled(browser, "mostafa")
    assert browser.execute_script("return window.__noReload") == marker

    # An admin's change (not a booking) redraws the lists from the server's page. (Ljerka: nobody booked it ahead,
    # so it may offer no seats; the demo's Yana has a group tomorrow.)
    response = rooms_server.request(
        "/api/rooms/ljerka",
        method="PATCH",
        admin=True,
        headers={"Content-Type": "application/json"},
        data=b'{"spots": 0}',
    )
    assert response.status == 200, response.text
    wait_for(browser, lambda d: "ljerka" in list_ids(d, "rooms-full"), timeout=5, message="Ljerka did not move")
    assert list_ids(browser, "rooms-full") == ["alexis", "ljerka"]
    assert browser.execute_script("return window.__noReload") == marker


# --- 6. Phones ----------------------------------------------------------------------------------

PHONE_LAYOUT_JS = """
const vh = innerHeight;
const cards = Array.from(document.querySelectorAll('.room-card')).map(c => {
  const r = c.getBoundingClientRect();
  return {id: c.dataset.roomId, visible: Math.max(0, Math.min(r.bottom, vh) - Math.max(r.top, 0)) / r.height};
});
const buttons = Array.from(document.querySelectorAll('.room-card button.book')).map(b => {
  const r = b.getBoundingClientRect(); return {id: b.closest('.room-card').dataset.roomId, w: r.width, h: r.height};
});
const photos = Array.from(document.querySelectorAll('.room-photo')).map(p => {
  const r = p.getBoundingClientRect(); const img = p.querySelector('img');
  const i = img ? img.getBoundingClientRect() : null;
  return {w: r.width, h: r.height, fit: img ? getComputedStyle(img).objectFit : null,
          iw: i && i.width, ih: i && i.height};
});
return {inner: innerWidth, scroll: document.documentElement.scrollWidth, vh, cards, buttons, photos};
"""


def test_phone_layout(rooms_server, new_browser):
    driver = new_browser(width=PHONE, height=844)
    become(driver, rooms_server, "Pia")
    # The finder comes first; scrolled to the rooms, a screen shows several of them.
    driver.execute_script("document.getElementById('rooms-available').scrollIntoView()")
    layout = driver.execute_script(PHONE_LAYOUT_JS)

    assert layout["inner"] == PHONE and layout["vh"] == 844
    assert layout["scroll"] <= layout["inner"], f"page scrolls sideways: {layout['scroll']}px wide"
    mostly = [c["id"] for c in layout["cards"] if c["visible"] >= 0.75]
    assert len(mostly) >= 3, f"only {mostly} are (mostly) visible in one screen: {layout['cards']}"
    small = [b for b in layout["buttons"] if b["w"] < 44 or b["h"] < 44]
    assert not small, f"Book buttons smaller than 44x44: {small}"
    assert len(layout["photos"]) == 8
    for photo in layout["photos"]:
        ratio = photo["w"] / photo["h"]
        assert abs(ratio / PHOTO_RATIO - 1) <= 0.02, f"photo frame {photo['w']}x{photo['h']} is not 328:220"
        if photo["fit"] is not None:
            assert photo["fit"] == "cover", "a photo would be stretched (object-fit is not cover)"
            assert abs(photo["iw"] - photo["w"]) <= 1 and abs(photo["ih"] - photo["h"]) <= 1, photo


def test_desktop_shows_a_card_grid(rooms_server, browser):
    open_rooms(browser, rooms_server)
    columns = browser.execute_script(
        "return getComputedStyle(document.getElementById('rooms-available')).gridTemplateColumns.split(' ').length"
    )
    assert columns >= 3, f"{columns} column(s) at {DESKTOP}px"
    frame = browser.execute_script(
        "const r = document.querySelector('.room-photo').getBoundingClientRect();return [r.width, r.height]"
    )
    assert abs(frame[0] / frame[1] / PHOTO_RATIO - 1) <= 0.02


# --- 7. Without JavaScript -----------------------------------------------------------------------


def test_page_works_without_javascript(rooms_server, browser):
    browser.execute_cdp_cmd("Emulation.setScriptExecutionDisabled", {"value": True})
    browser.get(rooms_server.url + "/rooms")
    assert len(by_css(browser, ".room-card")) == 8
    assert spots_text(browser, "ljerka") == "43 of 43 seats free"
    assert not shown(browser, "#rooms-refresh"), "the Refresh button needs JavaScript: hidden without"
    assert browser.execute_script("return document.getElementById('rooms').dataset.live") is None, "rooms.js ran"

    become(browser, rooms_server, "Noor", script=False)

    button = book_button(browser, "ljerka")
    button.click()
    wait_replaced(browser, button)
    # The page after the redirect (waited for as a whole: it may still be loading).
    wait_for(
        browser,
        lambda d: (
            text_of(d, "#rooms-notice").startswith("Booked a seat in Ljerka: ")
            and spots_text(d, "ljerka") == "42 of 43 seats free"
        ),
        message=f"after booking: {text_of(browser, '#rooms-notice')!r}, {spots_text(browser, 'ljerka')!r}",
    )
    assert api_rooms(rooms_server)["ljerka"]["spots"] == 42

    # The card shows the booking, with a Cancel of its own.
    assert text_of(browser, "#room-ljerka .booked-state") == "Booked"
    assert one(browser, "#room-ljerka .cancel-one summary").accessible_name == "Cancel Ljerka"
    assert not by_css(browser, "#room-ljerka button.book")

    # The notice's Cancel works the same way: it asks once, without a script too.
    assert one(browser, "#rooms-notice .cancel-one summary").accessible_name == "Cancel Ljerka"
    cancel = confirm_cancel(browser, "#rooms-notice")
    wait_replaced(browser, cancel)
    wait_for(
        browser,
        lambda d: (
            "Your booking in Ljerka is cancelled." in text_of(d, "#rooms-notice")
            and spots_text(d, "ljerka") == "43 of 43 seats free"
        ),
        message="not cancelled",
    )

    # And so does the card's, after booking again.
    book_button(browser, "mina").click()
    wait_for(browser, lambda d: by_css(d, "#room-mina .cancel-one"), message="Mina not booked")
    cancel = confirm_cancel(browser, "#room-mina")
    wait_replaced(browser, cancel)
    wait_for(
        browser,
        lambda d: (
            "Your booking in Mina is cancelled." in text_of(d, "#rooms-notice") and shown(d, "#room-mina button.book")
        ),
        message="not cancelled from the card",
    )
    assert api_rooms(rooms_server)["mina"]["spots"] == 39


# --- 8. French ----------------------------------------------------------------------------------


def test_french_plurals(rooms_server, new_browser):
    driver = new_browser(lang="fr")
    become(driver, rooms_server, "Françoise")
    assert driver.execute_script("return document.documentElement.lang") == "fr"
    assert spots_text(driver, "ljerka") == "43 places libres sur 43"
    assert spots_text(driver, "alexis") == "Aucune place à réserver"
    assert text_of(driver, "#room-alexis .badge") == "Complet"
    assert book_button(driver, "ljerka").accessible_name == "Réserver Ljerka"

    # Counted by rooms.js as spots go: 4 → 1 → 0 (French "one" covers 0 and 1; "0" has its own words).
    for n in range(3):
        api_book(rooms_server, "mostafa", f"Invité {n}")
    wait_for(
        driver,
        lambda d: spots_text(d, "mostafa") == "1 place libre sur 4",
        timeout=5,
        message=f"got {spots_text(driver, 'mostafa')!r}",
    )
    assert text_of(driver, "#room-mostafa .badge") == "Presque complet"
    api_book(rooms_server, "mostafa", "Invité 3")
    wait_for(
        driver,
        lambda d: spots_text(d, "mostafa") == "Aucune place libre sur 4",
        timeout=5,
        message=f"got {spots_text(driver, 'mostafa')!r}",
    )
    wait_for(driver, lambda d: "Mostafa : Aucune place libre sur 4" in text_of(d, "#rooms-live"), timeout=3)

    # The server says the same.
    open_rooms(driver, rooms_server)
    assert spots_text(driver, "mostafa") == "Aucune place libre sur 4"
    api_book(rooms_server, "painter", "Quelqu’un")  # 16 → 15
    wait_for(driver, lambda d: spots_text(d, "painter") == "15 places libres sur 16", timeout=5)


# --- 9. Keyboard --------------------------------------------------------------------------------


def test_keyboard_tab_and_enter_books(rooms_server, browser):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    become(browser, rooms_server, "Kim")
    browser.execute_script("document.activeElement && document.activeElement.blur()")
    reached = None
    for _ in range(40):
        ActionChains(browser).send_keys(Keys.TAB).perform()
        reached = browser.execute_script(
            "const e = document.activeElement;"
            "return e && e.matches('button.book') ? e.closest('.room-card').dataset.roomId : null"
        )
        if reached:
            break
    assert reached, "Tab never reached a Book button"
    assert browser.execute_script("return getComputedStyle(document.activeElement).outlineStyle") != "none", (
        "the focused Book button shows no outline"
    )
    before = api_rooms(rooms_server)[reached]["spots"]

    ActionChains(browser).send_keys(Keys.ENTER).perform()
    wait_for(browser, lambda d: text_of(d, f"#room-{reached} .booked-state") == "Booked", message="Enter did not book")
    assert api_rooms(rooms_server)[reached]["spots"] == before - 1
    # Focus moved to the Cancel that replaced Book: Enter asks, Tab reaches the answer, Enter cancels.
    wait_for(
        browser,
        lambda d: d.execute_script("return document.activeElement.matches('.room-card .cancel-one summary')"),
        message="focus did not move to Cancel",
    )
    ActionChains(browser).send_keys(Keys.ENTER).perform()
    ActionChains(browser).send_keys(Keys.TAB).perform()
    assert browser.execute_script("return document.activeElement.matches('.room-card .cancel-form button')")
    # A fresh Cancel ignores presses for a moment (see test_repeated_enter_books_once): the page's clock moves
    # on past that moment, as a person pressing Enter a second later.
    advance_page_clock(browser, 1)
    ActionChains(browser).send_keys(Keys.ENTER).perform()
    wait_for(
        browser,
        lambda d: d.execute_script("return document.activeElement.matches('button.book')"),
        message="focus did not return to Book after cancelling",
    )
    wait_for(browser, lambda d: api_rooms(rooms_server)[reached]["spots"] == before)


# --- 10. Accessibility --------------------------------------------------------------------------


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("width", [PHONE, DESKTOP], ids=["phone", "desktop"])
def test_no_serious_accessibility_violations(rooms_server, new_browser, set_color_scheme, axe, width, scheme):
    driver = new_browser(width=width)
    set_color_scheme(driver, scheme)
    open_rooms(driver, rooms_server)
    axe.assert_clean(driver, f"{width}px, {scheme}")

    # Booked (status, Cancel, message) and offline (banner, disabled buttons) are part of the page too.
    become(driver, rooms_server, "Axel")
    axe.assert_clean(driver, f"{width}px, {scheme}, ready to book")
    book_button(driver, "ljerka").click()
    wait_for(driver, lambda d: shown(d, "#room-ljerka .cancel-one summary"))
    one(driver, "#room-ljerka .cancel-one summary").click()  # the question is part of the page too
    set_offline(driver, True)
    wait_for(driver, lambda d: shown(d, "#rooms-offline"))
    axe.assert_clean(driver, f"{width}px, {scheme}, booked and offline")


def test_phone_at_200_percent_text(rooms_server, new_browser, axe):
    driver = new_browser(width=PHONE, font_size=32)
    api_book(rooms_server, "mostafa", "Zoé")  # a booked card and the list of bookings are measured too
    become(driver, rooms_server, "Zoé")
    assert by_css(driver, "#room-mostafa .cancel-one") and by_css(driver, "#my-bookings-list li")
    inner, scroll = driver.execute_script("return [innerWidth, document.documentElement.scrollWidth]")
    assert inner == PHONE
    assert scroll <= inner, f"page scrolls sideways at 200 % text: {scroll}px wide"
    small = driver.execute_script(
        "return Array.from(document.querySelectorAll('#rooms button, #rooms input:not([type=hidden])'))"
        ".filter(e => e.getClientRects().length)"
        ".map(e => [e.id || e.className, e.getBoundingClientRect()])"
        ".filter(([, r]) => r.width < 44 || r.height < 44).map(([n, r]) => `${n} ${r.width}x${r.height}`)"
    )
    assert not small, f"targets under 44x44 px: {small}"
    overflowing = driver.execute_script(
        "return Array.from(document.querySelectorAll('.room-card *'))"
        ".filter(e => e.getClientRects().length && e.clientWidth > 0 && e.scrollWidth > e.clientWidth + 1)"
        ".filter(e => getComputedStyle(e).overflow === 'visible' && !e.classList.contains('visually-hidden'))"
        ".map(e => e.className || e.tagName)"
    )
    assert not overflowing, f"content overflows its box at 200 % text: {overflowing}"
    axe.assert_clean(driver, "390px, 200 % text")
