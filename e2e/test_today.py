"""Today (issue 35): a person's day on `/`, in a real browser. An offer made while no page of theirs was open is on
their day when they next open it, first, with its countdown, and on every other page they open, with the badge on the
header and the tab bar; Accept books it in one tap and the badge goes to 0 on every open page without a reload. The
page fits phones, tablets and desktops in English and French, light and dark, and axe finds nothing serious.

Each test starts a server of its own with the demo data, its clock on a Tuesday at 09:50 on the campus (the date
follows QUAD_TEST_NOW).
"""

import pytest

from conftest import DESKTOP, PHONE, TABLET
from helpers import account_token, by_css, follow_clock, my_bookings, one, shown, sign_in_as, text_of, wait_for
from test_waiting import api, at, north_hall_with_solo


@pytest.fixture
def server(quad_server_factory):
    return north_hall_with_solo(quad_server_factory)


def held_for_lea(server) -> None:
    """Kim books Solo at 10:00, Lea waits for it, Kim cancels: the seat is held for Lea, with no page of hers open."""
    booked = api(server, "Kim", "/api/rooms/solo/bookings", "POST", {"start": at(server, "10:00"), "minutes": 60})
    assert booked.status == 201, booked.text
    waited = api(server, "Lea", "/api/rooms/solo/waiting", "POST", {"start": at(server, "10:00"), "minutes": 60})
    assert waited.status == 201, waited.text
    cancelled = api(server, "Kim", f"/api/rooms/solo/bookings/{booked.json()['booking']['id']}", "DELETE")
    assert cancelled.status == 204, cancelled.text


def badges(driver) -> list[str]:
    """What each badge on the page shows, in order ('' when it is hidden)."""
    return driver.execute_script(
        "return Array.from(document.querySelectorAll('[data-badge]'))"
        ".map(b => b.getClientRects().length ? b.querySelector('[aria-hidden]').textContent : '')"
    )


def lea_on(server, new_browser, path: str, width: int):
    """Another of Lea's devices, signed in and showing `path`, marked so that a reload would show."""
    driver = new_browser(width=width)
    follow_clock(driver, server)
    sign_in_as(driver, server, "Lea", next_path=path)
    driver.execute_script("window.__notReloaded = true")
    return driver


def test_an_offer_made_while_no_page_was_open_leads_the_day_and_is_taken_in_one_tap(server, new_browser, axe):
    account_token(server, "Lea")  # Lea exists before she waits
    held_for_lea(server)
    # Pages opened after the offer was made show it and the badge, drawn by the server: the library (live on its own
    # events) on a desktop, her account (nothing live of its own) on a tablet.
    library = lea_on(server, new_browser, "/library", DESKTOP)
    assert badges(library) == ["1", "1"]
    assert "Held for you: Solo" in text_of(library, "#shell-offer")
    axe.assert_clean(library, "the library with an offer held, desktop")
    account = lea_on(server, new_browser, "/account", TABLET)
    assert badges(account) == ["1", "1"]
    assert shown(account, "#shell-offer")

    lea = new_browser(width=PHONE)
    follow_clock(lea, server)
    sign_in_as(lea, server, "Lea")  # to `/`: her day
    assert text_of(lea, "#today-needs") == "1 thing needs you now"
    # The badge on the tab bar (Today's tab) and on the header (Notifications, a bell), said in words.
    assert shown(lea, ".services [data-badge]") and shown(lea, ".site-header .notifications [data-badge]")
    assert badges(lea) == ["1", "1"]
    assert one(lea, ".notifications a").accessible_name == "Notifications 1 thing needs you now"
    assert one(lea, ".services a[aria-current]").accessible_name == "Today 1 thing needs you now"
    assert not by_css(lea, "#shell-offer")  # her day lists it first itself
    sections = [s.get_attribute("data-key") for s in by_css(lea, "#today-live section")]
    assert sections[0] == "offers", sections
    offer = one(lea, "#today-offers .today-item")
    assert "Solo" in offer.text and "Yours to take until 10:0" in offer.text
    wait_for(lea, lambda d: shown(d, "#today-offers .today-countdown"), message="no countdown")
    assert text_of(lea, "#today-offers .today-countdown") in {"15 minutes left", "14 minutes left"}
    axe.assert_clean(lea, "Today with an offer, phone")

    one(lea, "#today-offers button.book").click()  # the one tap
    wait_for(lea, lambda d: shown(d, "#room-notice"), message="no word of the booking")
    assert text_of(lea, "#room-notice").startswith("Booked a seat in Solo: ")
    mine = api(server, "Lea", "/api/me/bookings").json()["bookings"]
    assert [(b["roomId"], b["start"]) for b in mine] == [("solo", at(server, "10:00"))]
    assert badges(lea) == ["", ""]
    for other in (library, account):
        wait_for(other, lambda d: badges(d) == ["", ""], timeout=3, message="a badge still counts the offer taken")
        assert not shown(other, "#shell-offer")
        assert other.execute_script("return window.__notReloaded === true"), "the page was reloaded"

    lea.get(server.url + "/")
    assert not by_css(lea, "#today-needs")
    assert "Nothing is held for you right now." in text_of(lea, "#today-offers")
    assert "Solo" in text_of(lea, "#today-bookings")


def test_an_offer_reaches_an_open_day_live(server, new_browser):
    account_token(server, "Lea")
    booked = api(server, "Kim", "/api/rooms/solo/bookings", "POST", {"start": at(server, "10:00"), "minutes": 60})
    waited = api(server, "Lea", "/api/rooms/solo/waiting", "POST", {"start": at(server, "10:00"), "minutes": 60})
    assert waited.status == 201, waited.text
    lea = new_browser()
    sign_in_as(lea, server, "Lea")
    wait_for(lea, lambda d: d.execute_script("return document.getElementById('today').dataset.live") == "stream")
    assert "1st in line" in text_of(lea, "#today-waiting")
    assert api(server, "Kim", f"/api/rooms/solo/bookings/{booked.json()['booking']['id']}", "DELETE").status == 204
    wait_for(lea, lambda d: shown(d, "#today-offers button.book"), timeout=2, message="the offer did not arrive live")
    assert text_of(lea, "#today-needs") == "1 thing needs you now"


@pytest.mark.parametrize(
    ("width", "scheme", "lang"),
    [(PHONE, "dark", "fr"), (TABLET, "light", "en"), (DESKTOP, "dark", "en"), (320, "light", "fr")],
)
def test_the_day_fits_and_is_accessible(server, new_browser, set_color_scheme, axe, width, scheme, lang):
    account_token(server, "Lea")
    held_for_lea(server)
    driver = new_browser(width=width, lang=lang)
    set_color_scheme(driver, scheme)
    follow_clock(driver, server)
    sign_in_as(driver, server, "Lea")
    wait_for(driver, lambda d: shown(d, "#today-offers button.book"), message="no offer on the day")
    inner, scroll = driver.execute_script("return [window.innerWidth, document.documentElement.scrollWidth]")
    assert scroll <= inner, f"the day scrolls sideways at {width}px: {scroll}px wide"
    small = driver.execute_script(
        "return Array.from(document.querySelectorAll('#today-live button, #today-live a'))"
        ".map(e => e.getBoundingClientRect()).filter(r => r.width < 44 || r.height < 44).length"
    )
    assert small == 0, f"{small} targets under 44 px at {width}px"
    axe.assert_clean(driver, f"Today, {width}px, {scheme}, {lang}")


@pytest.mark.parametrize("lang", ["en", "fr"])
def test_a_room_removed_is_said_live_on_the_day_until_dismissed(server, new_browser, axe, lang):
    """Kim has Solo at 10:00 and her day open on her phone; an admin removes Solo: her day says so within a few
    seconds, in her language, and her badge counts it, without a reload, until she dismisses it."""
    booked = api(server, "Kim", "/api/rooms/solo/bookings", "POST", {"start": at(server, "10:00"), "minutes": 30})
    assert booked.status == 201, booked.text
    kim = new_browser(width=PHONE, lang=lang)
    follow_clock(kim, server)
    sign_in_as(kim, server, "Kim")
    wait_for(kim, lambda d: d.execute_script("return document.getElementById('today').dataset.live") == "stream")
    kim.execute_script("window.__notReloaded = true")
    assert not by_css(kim, "#today-notices")

    removed = server.request("/api/rooms/solo", method="DELETE", admin=True)
    assert removed.status == 204, removed.text
    said = {"en": "Solo was removed: your booking on ", "fr": "La salle Solo a été supprimée : votre réservation du "}
    wait_for(kim, lambda d: said[lang] in text_of(d, "#today-live"), timeout=5, message="the removal was not said")
    notice = text_of(kim, "#today-notices .today-item")
    assert notice.startswith(said[lang]) and ", 10:00–10:30 " in notice, notice
    wait_for(kim, lambda d: badges(d) == ["1", "1"], message=f"the badge did not count it: {badges(kim)}")
    assert kim.execute_script("return window.__notReloaded") is True
    # Her booking went with the room.
    assert my_bookings(server, "Kim") == []
    axe.assert_clean(kim, f"Today with a notice, phone, {lang}")

    one(kim, "#today-notices button[type=submit]").click()  # Dismiss
    wait_for(kim, lambda d: "/notifications" in d.current_url and not by_css(d, "#notices"), message="not dismissed")
    assert badges(kim) == ["", ""]
