"""Waiting lines in a real browser and through the API: waiting for a full room's time and for a book on loan, the
offer reaching the first in line at once on their notifications page (their own event stream), accepting it in one
tap, the admins' lines, and the reminders in the person's calendar feed (parsed with Python's icalendar).

Each test starts a server of its own with the demo data, its clock on a Tuesday at 09:50 on the campus (the date
follows QUAD_TEST_NOW). North Hall opens weekdays 08:00 to 20:00.
"""

import datetime as dt
import json
import time

import pytest

from conftest import MELBOURNE, melbourne
from helpers import (
    PASSWORD,
    account_token,
    add_person,
    by_css,
    confirm_cancel,
    one,
    shown,
    sign_in,
    sign_in_as,
    text_of,
    wait_for,
)

NORTH_HALL = {"hours": "Mon-Fri 08:00-20:00", "horizonDays": 56, "maxMinutes": 240, "checkInMinutes": None}


@pytest.fixture
def server(quad_server_factory):
    return north_hall_with_solo(quad_server_factory)


def north_hall_with_solo(quad_server_factory):
    """A server with the demo data on a Tuesday at 09:50, North Hall open weekdays, and Solo: one seat there."""
    server = quad_server_factory(demo=True, now=melbourne("09:50", day="tuesday"))
    rules = server.request(
        "/api/buildings/North%20Hall",
        method="PUT",
        headers={"Content-Type": "application/json"},
        data=json.dumps(NORTH_HALL).encode(),
        admin=True,
    )
    assert rules.status == 200, rules.text
    solo = server.request(
        "/api/rooms",
        method="POST",
        headers={"Content-Type": "application/json"},
        data=json.dumps({"name": "Solo", "building": "North Hall", "capacity": 1, "spots": 1}).encode(),
        admin=True,
    )
    assert solo.status == 201, solo.text
    return server


def at(server, clock: str) -> str:
    """`clock` today on the campus, as the API writes instants."""
    today = server.now().astimezone(MELBOURNE).date()
    hour, minute = (int(part) for part in clock.split(":"))
    instant = dt.datetime(today.year, today.month, today.day, hour, minute, tzinfo=MELBOURNE).astimezone(dt.UTC)
    return instant.strftime("%Y-%m-%dT%H:%M:%SZ")


def api(server, person: str, path: str, method: str = "GET", body: dict | None = None):
    headers = {"Authorization": f"Bearer {account_token(server, person)}"}
    if body is not None:
        headers["Content-Type"] = "application/json"
    return server.request(path, method=method, headers=headers, data=json.dumps(body).encode() if body else None)


def notifications(server, person: str) -> dict:
    response = api(server, person, "/api/me/notifications")
    assert response.status == 200, response.text
    return response.json()


def test_one_cancels_and_the_other_sees_the_offer_within_a_second_and_takes_it_in_one_tap(server, new_browser, axe):
    booked = api(server, "Kim", "/api/rooms/solo/bookings", "POST", {"start": at(server, "10:00"), "minutes": 60})
    assert booked.status == 201, booked.text

    # Lea finds 10:00 full on the room's day, and waits in line for it from there.
    lea = new_browser(width=390)
    sign_in_as(lea, server, "Lea", next_path="/rooms/solo")
    one(lea, "#day-slots a[href*='start=10:00']").click()
    wait_for(lea, lambda d: shown(d, "#wait-confirm"), message="the waiting panel did not open")
    assert text_of(lea, "#wait-heading") == "Full from 10:00: wait in line"
    one(lea, "#wait-minutes option[value='60']").click()
    one(lea, "#wait-confirm").click()
    wait_for(lea, lambda d: shown(d, "#room-notice"), message="no word of the place in line")
    assert text_of(lea, "#room-notice") == "You are 1st in line."
    axe.assert_clean(lea, "a room's day after joining its line")

    lea.get(server.url + "/notifications")
    wait_for(
        lea, lambda d: d.execute_script("return document.getElementById('notifications').dataset.live") == "stream"
    )
    assert "1st in line" in text_of(lea, "#in-line")
    assert not shown(lea, "#offers")

    # Kim, in another window, cancels her booking.
    kim = new_browser()
    sign_in_as(kim, server, "Kim", next_path="/rooms/solo")
    confirm_cancel(kim, "#room-mine")
    wait_for(kim, lambda d: not d.find_elements("css selector", "#room-mine"), message="the booking was not cancelled")
    cancelled = time.monotonic()

    # Lea's open page shows the seat held for her within a second, without a reload.
    wait_for(lea, lambda d: shown(d, "#offers .offer-accept"), timeout=1, message="no offer within a second")
    waited = time.monotonic() - cancelled
    assert waited < 1, f"the offer took {waited:.2f} s"
    assert "Solo" in text_of(lea, "#offers")
    assert "Yours to take until 10:" in text_of(lea, "#offers")
    axe.assert_clean(lea, "the notifications page with an offer")

    # Nobody else can take it meanwhile.
    taken = api(server, "Max", "/api/rooms/solo/bookings", "POST", {"start": at(server, "10:00"), "minutes": 30})
    assert taken.status == 409 and taken.json()["type"] == "urn:quad:problem:held-for-line", taken.text

    one(lea, "#offers .offer-accept").click()  # the one tap
    wait_for(lea, lambda d: shown(d, "#room-notice"), message="no word of the booking")
    notice = text_of(lea, "#room-notice")
    assert notice.startswith("Booked a seat in Solo: ") and notice.endswith(", 10:00–11:00."), notice
    assert "10:00–11:00" in text_of(lea, "#room-mine")
    mine = api(server, "Lea", "/api/me/bookings").json()["bookings"]
    assert [(b["roomId"], b["start"], b["end"]) for b in mine] == [("solo", at(server, "10:00"), at(server, "11:00"))]
    assert notifications(server, "Lea")["offers"] == []


def test_a_book_on_loan_is_held_for_the_first_in_line_when_it_comes_back(server, new_browser):
    books = server.request("/api/books?status=available").json()
    book = books[0]
    assert api(server, "Kim", f"/api/books/{book['id']}/checkout", "POST").status == 200

    lea = new_browser()
    sign_in_as(lea, server, "Lea", next_path=f"/library/books/{book['id']}")
    one(lea, "#book-hold").click()
    wait_for(lea, lambda d: shown(d, "#library-notice"), message="no word of the place in line")
    assert text_of(lea, "#library-notice") == "You are 1st in line for this book."
    held = api(server, "Max", f"/api/books/{book['id']}/holds", "POST")
    assert held.status == 201 and held.json()["position"] == 2, held.text

    # Lea browses the library meanwhile: any live page of hers hears of the offer (her own stream).
    lea.get(server.url + "/library")
    wait_for(lea, lambda d: d.execute_script("return document.getElementById('library').dataset.live") == "stream")
    assert not shown(lea, "#shell-offer")
    assert api(server, "Kim", f"/api/books/{book['id']}/return", "POST").status == 200
    wait_for(lea, lambda d: shown(d, "#shell-offer"), timeout=2, message="no word of the offer on the library page")
    assert book["title"] in text_of(lea, "#shell-offer")
    offers = notifications(server, "Lea")["offers"]
    assert [o["thing"] for o in offers] == [str(book["id"])]
    ends = dt.datetime.fromisoformat(offers[0]["offeredUntil"].replace("Z", "+00:00"))
    assert dt.timedelta(hours=47, minutes=59) < ends - server.now() <= dt.timedelta(hours=48, seconds=1)
    # Max, second in line, cannot take it while it is held for Lea.
    refused = api(server, "Max", f"/api/books/{book['id']}/checkout", "POST")
    assert refused.status == 409 and refused.json()["type"] == "urn:quad:problem:held-for-line", refused.text

    lea.get(server.url + "/notifications")
    one(lea, "#offers .offer-accept").click()
    wait_for(lea, lambda d: shown(d, "#library-notice"), message="no word of the checkout")
    assert server.request(f"/api/books/{book['id']}").json()["status"] == "on-loan"
    assert [loan["title"] for loan in notifications(server, "Lea")["loans"]] == [book["title"]]
    assert [w["position"] for w in notifications(server, "Max")["waiting"]] == [1]


def test_admins_see_the_lines_and_take_someone_out(server, new_browser, axe):
    assert (
        api(server, "Kim", "/api/rooms/solo/bookings", "POST", {"start": at(server, "11:00"), "minutes": 30}).status
        == 201
    )
    for person in ("Lea", "Max"):
        waited = api(server, person, "/api/rooms/solo/waiting", "POST", {"start": at(server, "11:00"), "minutes": 30})
        assert waited.status == 201, waited.text
    lines = server.request("/api/waiting-lines", admin=True).json()["lines"]
    # Solo's line, beside the demo's (Noor waits for Painter).
    assert [[p["username"] for p in line["people"]] for line in lines if line["thing"] == "solo"] == [["lea", "max"]]

    admin = new_browser()
    add_person(server, "ann", PASSWORD, role="admin")
    sign_in(admin, server, "ann", PASSWORD, next_path="/admin/waiting")
    assert "Lea" in text_of(admin, "#waiting-admin") and "Max" in text_of(admin, "#waiting-admin")
    axe.assert_clean(admin, "the admins' waiting lines")
    [lea] = [item for item in by_css(admin, "#waiting-admin li[data-place-id]") if "Lea" in item.text]
    lea.find_element("css selector", "button.danger").click()
    admin.switch_to.alert.accept()
    wait_for(admin, lambda d: "Removed from the line." in text_of(d, "#waiting-admin"))
    assert notifications(server, "Lea")["waiting"] == []
    assert [w["position"] for w in notifications(server, "Max")["waiting"]] == [1]
    # A member may not.
    assert api(server, "Max", "/api/waiting-lines").status == 403


@pytest.mark.parametrize(("width", "scheme", "lang"), [(390, "dark", "fr"), (1280, "light", "en")])
def test_the_notifications_page_is_accessible(server, new_browser, set_color_scheme, axe, width, scheme, lang):
    book = server.request("/api/books?status=available").json()[0]
    assert api(server, "Noa", f"/api/books/{book['id']}/checkout", "POST").status == 200
    assert (
        api(server, "Kim", "/api/rooms/solo/bookings", "POST", {"start": at(server, "12:00"), "minutes": 30}).status
        == 201
    )
    assert (
        api(server, "Noa", "/api/rooms/solo/waiting", "POST", {"start": at(server, "12:00"), "minutes": 30}).status
        == 201
    )
    driver = new_browser(width=width, lang=lang)
    set_color_scheme(driver, scheme)
    sign_in_as(driver, server, "Noa", next_path="/notifications")
    expected = "1er dans la file" if lang == "fr" else "1st in line"
    assert expected in text_of(driver, "#in-line")
    assert book["title"] in text_of(driver, "#loans")
    axe.assert_clean(driver, f"{width}px, {scheme}, {lang}: notifications")
    # What to do next about a loan: return it, from here.
    one(driver, "#loans form[action$='/return'] button").click()
    wait_for(driver, lambda d: shown(d, "#library-notice"), message="no word of the return")
    assert server.request(f"/api/books/{book['id']}").json()["status"] == "available"


def test_the_calendar_feed_holds_the_offer_and_the_loan_reminders(server):
    icalendar = pytest.importorskip("icalendar")
    books = server.request("/api/books?status=available").json()
    mine, wanted = books[0], books[1]
    assert api(server, "Lea", f"/api/books/{mine['id']}/checkout", "POST").status == 200
    assert api(server, "Kim", f"/api/books/{wanted['id']}/checkout", "POST").status == 200
    assert api(server, "Lea", f"/api/books/{wanted['id']}/holds", "POST").status == 201
    assert api(server, "Kim", f"/api/books/{wanted['id']}/return", "POST").status == 200
    [offer] = notifications(server, "Lea")["offers"]

    def feed():
        link = api(server, "Lea", "/api/me/calendar").json()
        response = server.request(link["url"][link["url"].index("/api/") :])
        assert response.status == 200 and response.content_type.startswith("text/calendar"), response.text
        calendar = icalendar.Calendar.from_ical(response.text)
        return {str(e["UID"]).split("@")[0]: e for e in calendar.walk("VEVENT")}

    events = feed()
    held = events[f"offer-{offer['id']}"]
    assert held["DTSTART"].dt == dt.datetime.fromisoformat(offer["offeredUntil"].replace("Z", "+00:00"))
    assert wanted["title"] in str(held["SUMMARY"])
    [alarm] = held.walk("VALARM")
    assert alarm["TRIGGER"].dt == -dt.timedelta(hours=1)
    due = dt.datetime.fromisoformat(
        api(server, "Lea", f"/api/books/{mine['id']}").json()["dueAt"].replace(" ", "T") + "+00:00"
    )
    soon, today, overdue = (events[f"loan-{mine['id']}-{kind}"] for kind in ("soon", "today", "overdue"))
    assert soon["DTSTART"].dt == due - dt.timedelta(days=2)
    assert overdue["DTSTART"].dt == due
    due_day = due.astimezone(MELBOURNE).date()
    assert today["DTSTART"].dt == dt.datetime.combine(due_day, dt.time(0), tzinfo=MELBOURNE).astimezone(dt.UTC)
    assert all(event.walk("VALARM") for event in (soon, today, overdue))

    # Turned off, a kind of reminder leaves the feed.
    off = {"offers": True, "dueSoon": False, "dueToday": True, "overdue": True}
    assert api(server, "Lea", "/api/me/reminders", "PUT", off).json() == off
    events = feed()
    assert f"loan-{mine['id']}-soon" not in events and f"loan-{mine['id']}-overdue" in events
