"""A room's day `/rooms/{room}` in a real browser: its quarter hours, booking from a chosen time in two taps, the
day kept live, checking in from the door sign's page, French, phones and accessibility.

Every test starts a server of its own with the demo rooms, its clock on a Tuesday at 09:50 on the campus (the
date follows QUAD_TEST_NOW). North Hall (Ljerka, Mostafa with 4 seats, Yana) opens weekdays 08:00 to 20:00 and
asks for a check-in within 10 minutes of a booking's start.
"""

import datetime as dt
import json

import pytest

from conftest import MELBOURNE, melbourne, test_now
from helpers import (
    account_token,
    bearer,
    follow_clock,
    my_bookings,
    one,
    set_building_rules,
    shown,
    sign_in_as,
    text_of,
    wait_for,
)

NORTH_HALL = {"hours": "Mon-Fri 08:00-20:00", "horizonDays": 56, "maxMinutes": 240, "checkInMinutes": 10}


@pytest.fixture
def day_server(quad_server_factory):
    server = quad_server_factory(demo=True, now=melbourne("09:50", day="tuesday"))
    set_building_rules(server, "North Hall", NORTH_HALL)
    return server


def at(server, time: str) -> str:
    """`time` today on the campus clock, as the API writes instants."""
    today = server.now().astimezone(MELBOURNE).date()
    hour, minute = (int(part) for part in time.split(":"))
    instant = dt.datetime(today.year, today.month, today.day, hour, minute, tzinfo=MELBOURNE).astimezone(dt.UTC)
    return instant.strftime("%Y-%m-%dT%H:%M:%SZ")


def api_book(server, room: str, person: str, start: str, minutes: int = 30) -> dict:
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {account_token(server, person)}"}
    body = json.dumps({"start": start, "minutes": minutes}).encode()
    response = server.request(f"/api/rooms/{room}/bookings", method="POST", headers=headers, data=body)
    assert response.status == 201, response.text
    return response.json()["booking"]


def slot_text(driver, time: str) -> str:
    return driver.execute_script(
        "for (const li of document.querySelectorAll('#day-slots li')) {"
        "  if (li.querySelector('.slot-time').textContent.trim() === arguments[0])"
        "    return li.querySelector('.slot-seats').textContent.trim(); }"
        "return null;",
        time,
    )


def open_day(driver, server, path="/rooms/mostafa"):
    follow_clock(driver, server)
    driver.get(server.url + path)
    wait_for(driver, lambda d: d.execute_script("return document.getElementById('room-day').dataset.live"))


def test_two_taps_book_thirty_minutes_from_a_chosen_time_on_a_phone(day_server, new_browser):
    driver = new_browser(width=390)
    sign_in_as(driver, day_server, "Kim", next_path="/rooms/mostafa")
    open_day(driver, day_server)
    assert "Open 08:00-20:00" in text_of(driver, ".day-hours")
    # Past quarter hours are over; 09:45, the one now falls in, can still be booked.
    # The day opens now: quarter hours already over are not listed.
    assert slot_text(driver, "09:30") is None
    assert slot_text(driver, "09:45") == "4 seats free"
    assert slot_text(driver, "10:00") == "4 seats free"

    one(driver, "#day-slots a[href*='start=10:00']").click()  # first tap: the time
    wait_for(driver, lambda d: shown(d, "#book-confirm"), message="the booking panel did not open")
    assert text_of(driver, "#book-heading") == "Book from 10:00"
    assert one(driver, "#book-minutes option[selected]").get_attribute("value") == "30"
    one(driver, "#book-confirm").click()  # second tap: Book

    wait_for(driver, lambda d: shown(d, "#room-notice"), message="no word of the booking")
    # It says what was booked: a seat, the day, and both ends.
    notice = text_of(driver, "#room-notice")
    assert notice.startswith("Booked a seat in Mostafa: ") and notice.endswith(", 10:00–10:30."), notice
    assert "10:00–10:30" in text_of(driver, "#room-mine")
    assert slot_text(driver, "10:00") == "3 seats free"
    booked = my_bookings(day_server, "Kim")
    assert [(b["roomId"], b["start"], b["end"]) for b in booked] == [
        ("mostafa", at(day_server, "10:00"), at(day_server, "10:30"))
    ]


def test_a_booking_elsewhere_shows_on_the_open_day_without_reload(day_server, browser):
    open_day(browser, day_server)
    marker = browser.execute_script("return window.__noReload = Math.random()")
    assert slot_text(browser, "11:00") == "4 seats free"
    api_book(day_server, "mostafa", "Other", at(day_server, "11:00"), minutes=60)
    wait_for(
        browser,
        lambda d: slot_text(d, "11:00") == "3 seats free" and slot_text(d, "11:45") == "3 seats free",
        timeout=3,
        message="the booking made elsewhere did not show within 3 s",
    )
    assert slot_text(browser, "12:00") == "4 seats free"
    wait_for(browser, lambda d: "The times were updated." in text_of(d, "#room-live"), timeout=3)
    assert browser.execute_script("return window.__noReload") == marker, "the page reloaded"


def test_the_door_sign_checks_in_the_booking_held_now(day_server, new_browser):
    booking = api_book(day_server, "mostafa", "Dora", at(day_server, "10:00"), minutes=60)
    assert booking["checkInBy"] == at(day_server, "10:10")
    driver = new_browser(width=390)
    sign_in_as(driver, day_server, "Dora", next_path="/rooms/mostafa/check-in")
    assert text_of(driver, "h1") == "Check in to Mostafa"
    one(driver, "#door-check-in").click()
    wait_for(driver, lambda d: shown(d, "#room-notice"), message="no word of the check-in")
    assert text_of(driver, "#room-notice") == "Checked in"
    assert [b["checkedIn"] for b in my_bookings(day_server, "Dora")] == [True]
    # Someone whose booking here is later is told from when; someone with none, when check-in opens at all.
    api_book(day_server, "mostafa", "Lou", at(day_server, "14:00"))
    sign_in_as(driver, day_server, "Lou", next_path="/rooms/mostafa/check-in")
    assert "14:00–14:30, can be checked in from 13:45." in text_of(driver, "#room-door")
    sign_in_as(driver, day_server, "Nobody", next_path="/rooms/mostafa/check-in")
    said = text_of(driver, "#room-door")
    assert "You have no booking in Mostafa to check in now: check-in opens a quarter of an hour before" in said


def test_the_day_in_french(day_server, new_browser):
    driver = new_browser(width=390, lang="fr")
    open_day(driver, day_server)
    assert "Ouvert 08:00-20:00" in text_of(driver, ".day-hours")
    assert slot_text(driver, "10:00") == "4 places libres"
    assert slot_text(driver, "09:30") is None  # over: not listed


@pytest.mark.parametrize(("width", "scheme"), [(390, "light"), (390, "dark"), (1280, "light")])
def test_no_serious_accessibility_violations(day_server, new_browser, set_color_scheme, axe, width, scheme):
    driver = new_browser(width=width)
    set_color_scheme(driver, scheme)
    sign_in_as(driver, day_server, "Axel", next_path="/rooms/mostafa")
    api_book(day_server, "mostafa", "Axel", at(day_server, "12:00"))
    open_day(driver, day_server, "/rooms/mostafa?start=10:00")
    wait_for(driver, lambda d: shown(d, "#book-confirm"))
    axe.assert_clean(driver, f"{width}px, {scheme}, a room's day with the booking panel and a booking")


# --- The person's calendar: classes and bookings in one feed ---------------------------------------


def next_clock_change(after: dt.datetime) -> dt.datetime:
    """The first change of Melbourne's UTC offset after `after` (to the hour)."""
    offset = after.astimezone(MELBOURNE).utcoffset()
    instant = after.replace(minute=0, second=0, microsecond=0)
    while instant.astimezone(MELBOURNE).utcoffset() == offset:
        instant += dt.timedelta(hours=1)
    return instant


def test_a_weekly_series_in_the_calendar_expands_across_a_clock_change(quad_server_factory):
    icalendar = pytest.importorskip("icalendar")
    from dateutil.rrule import rruleset, rrulestr  # icalendar depends on python-dateutil

    # Three weeks before a change of Melbourne's clocks, so a six-week series from next week crosses it.
    change = next_clock_change(test_now() + dt.timedelta(days=21))
    server = quad_server_factory(demo=True, now=melbourne("09:00", after=change - dt.timedelta(days=21)))
    first = server.now().astimezone(MELBOURNE).date() + dt.timedelta(days=7)
    dates = [first + dt.timedelta(weeks=n) for n in range(6)]
    kier = {"Content-Type": "application/json", **bearer(server, "kier")}

    def ten(date: dt.date) -> str:
        return (
            dt.datetime.combine(date, dt.time(10), tzinfo=MELBOURNE).astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        )

    series = {
        "start": ten(first),
        "minutes": 60,
        "repeat": {"every": "week", "until": dates[-1].isoformat(), "skip": [dates[1].isoformat()]},
    }
    booked = server.request("/api/rooms/mina/bookings", "POST", kier, json.dumps(series).encode())
    assert booked.status == 201, booked.text
    assert [o["result"] for o in booked.json()["series"]["outcomes"]] == ["booked"] * 5

    def calendar_dates():
        link = server.request("/api/me/calendar", headers=kier).json()
        feed = server.request(link["url"][link["url"].index("/api/") :])
        assert feed.status == 200 and feed.content_type.startswith("text/calendar")
        calendar = icalendar.Calendar.from_ical(feed.text)
        [event] = [e for e in calendar.walk("VEVENT") if str(e["SUMMARY"]) == "Mina"]
        assert str(event["LOCATION"]) == "Mina, Library Wing"
        assert event["DURATION"].dt == dt.timedelta(hours=1)
        [alarm] = event.walk("VALARM")
        assert alarm["TRIGGER"].dt == -dt.timedelta(minutes=15)
        occurrences = rruleset()
        occurrences.rrule(rrulestr(event["RRULE"].to_ical().decode(), dtstart=event["DTSTART"].dt))
        exdates = event.get("EXDATE")
        for exdate in exdates if isinstance(exdates, list) else [exdates] if exdates else []:
            for day in exdate.dts:
                occurrences.exdate(day.dt)
        return [o for o in occurrences]

    expanded = calendar_dates()
    assert [o.date() for o in expanded] == [d for d in dates if d != dates[1]]
    # 10:00 on the wall clock every week, on both sides of the change: the UTC hour moves.
    assert all((o.hour, o.minute) == (10, 0) for o in expanded)
    assert len({o.utcoffset() for o in expanded}) == 2, f"the series does not cross {change}"

    # Cancelling one date takes it out of the calendar.
    mine = server.request("/api/me/bookings", headers=kier).json()["bookings"]
    fourth = next(b for b in mine if b["start"] == ten(dates[3]))
    assert server.request(f"/api/rooms/mina/bookings/{fourth['id']}", "DELETE", kier).status == 204
    assert len(calendar_dates()) == 4


def test_the_buildings_rules_page_is_accessible(day_server, new_browser, axe):
    from helpers import sign_in

    driver = new_browser(width=390)
    sign_in(driver, day_server, "admin", next_path="/admin/rooms")
    assert text_of(driver, "h1") == "Rooms and buildings"
    # North Hall's week, a row a day: weekdays 08:00 to 20:00, the weekend closed.
    assert [one(driver, f"#b2-d{day}-open").get_attribute("value") for day in range(7)] == ["08:00"] * 5 + ["", ""]
    assert one(driver, "#b2-d4-close").get_attribute("value") == "20:00"
    axe.assert_clean(driver, "390px, the buildings' rules")


def test_an_admin_gives_a_room_a_new_photo_from_its_page(day_server, new_browser, tmp_path):
    from helpers import png, sign_in

    driver = new_browser(width=390)
    sign_in(driver, day_server, "admin", next_path="/admin/rooms")
    one(driver, "a[href='/admin/rooms/mostafa']").click()
    wait_for(driver, lambda d: shown(d, "#r-photo-upload"), message="the photo field did not show")
    before = one(driver, ".room-admin-photo").get_attribute("src")
    photo = tmp_path / "mostafa.png"
    photo.write_bytes(png(seed=7, width=328, height=220))
    one(driver, "#r-photo").send_keys(str(photo))
    wait_for(driver, lambda d: shown(d, "#room-admin-saved"), message="the photo was not saved")
    after = one(driver, ".room-admin-photo").get_attribute("src")
    assert after != before
    room = day_server.request("/api/rooms/mostafa").json()
    assert room["thumbnail"].endswith(after.split("/images/")[-1])


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_timeline_across_rooms_is_accessible(day_server, new_browser, set_color_scheme, axe, scheme):
    driver = new_browser(width=1280)
    set_color_scheme(driver, scheme)
    follow_clock(driver, day_server)
    driver.get(day_server.url + "/rooms-timeline")
    assert text_of(driver, "h1") == "All rooms' times"
    # Tab reaches a free quarter hour, and Enter opens that room's booking panel there.
    link = one(driver, "tr[data-room-id='mostafa'] a[href*='start=10:00']")
    link.send_keys("\n")
    wait_for(driver, lambda d: shown(d, "#book-heading"), message="the booking panel did not open")
    assert text_of(driver, "#book-heading") == "Book from 10:00"  # signed out: it offers to sign in
    driver.back()
    axe.assert_clean(driver, f"1280px, {scheme}, the timeline across rooms")
