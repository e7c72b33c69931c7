"""The timetable's week at a glance, as Kier meets it on a desk and on a phone, and the shuttles' times as people read
them ("13:05 · in 4 min", "06:00 · in 3 h").

The demo (see test_timetable.py): Kier's classes Mon 10:00-12:00, Tue 12:30-13:30, Wed 15:00-16:30, Thu 17:00-18:00,
this week teaching week 8, the mid-semester break two weeks back; shuttles from 06:00 (every 20 minutes) and 06:15
(every 30).
"""

from __future__ import annotations

import datetime as dt
import re

from conftest import MELBOURNE, PHONE, melbourne
from helpers import admin_form, by_css, one, sign_in, wait_for


def add_a_clash(server) -> None:
    """A tutorial on Mondays 11:00-12:30, over Kier's 10:00-12:00 lecture, and Kier in it."""
    admin_form(
        server,
        "/admin/timetable/classes",
        {
            "course": "FIT1032",
            "name": "Tutorial 02",
            "lecturer": "David",
            "room": "S2",
            "campus": "Clayton",
            "weekday": "1",
            "start": "11:00",
            "end": "12:30",
            "weeks": "1-12",
        },
    )
    admin_form(server, "/admin/timetable/enrolments", {"student": "305491", "class": "fit1032-tutorial-02"})


def rect(driver, element) -> dict:
    return driver.execute_script("const r = arguments[0].getBoundingClientRect(); return r.toJSON();", element)


def no_sideways_scroll(driver) -> None:
    page = "const e = document.documentElement; return [e.clientWidth, e.scrollWidth]"
    width, scroll = driver.execute_script(page)
    assert scroll <= width, f"the page scrolls sideways: {scroll} > {width}"


def test_the_week_on_a_desk_with_a_clash_today_and_the_break(quad_server_factory, browser, axe):
    server = quad_server_factory(demo=True, now=melbourne("12:00", "wednesday"))
    add_a_clash(server)
    sign_in(browser, server, "kier", next_path="/timetable")
    # One tap from the day to the week.
    one(browser, "#week-view-link").click()
    wait_for(browser, lambda d: d.current_url.endswith("/timetable/week"))
    assert one(browser, "#week-title").text == "Week 8"
    columns = by_css(browser, ".week-column")
    assert [c.find_element("css selector", "h2").text.split(",")[0] for c in columns][0].startswith("Mon")
    assert len(columns) == 5, "Monday to Friday: nothing meets at the weekend"
    boxes = [rect(browser, c) for c in columns]
    assert len({round(b["top"]) for b in boxes}) == 1, "the days side by side"
    assert all(a["right"] <= b["left"] for a, b in zip(boxes, boxes[1:], strict=False)), "in order, not overlapping"

    # Today (Wednesday) is marked, with a line at now (12:00), above the workshop at 15:00.
    today = one(browser, ".week-column.is-today")
    assert today.get_attribute("data-date") == f"day-{server.now().astimezone(MELBOURNE).date()}"
    assert "Today" in today.find_element("css selector", "h2").text
    now_line = one(browser, "#week-now")
    assert now_line.get_attribute("textContent") == "Now 12:00"
    workshop = today.find_element("css selector", '[data-class-id="fit1031-workshop-01"]')
    body = rect(browser, today.find_element("css selector", ".week-column-body"))
    hour = (rect(browser, workshop)["top"] - body["top"]) / 7  # 15:00 is seven hours below 08:00
    assert abs(rect(browser, now_line)["top"] - body["top"] - 4 * hour) <= 2

    # The clash: on Monday the lecture and the tutorial sit side by side, each saying what it clashes with.
    lecture = one(browser, '[data-class-id="fit1031-lecture-01"]')
    tutorial = one(browser, '[data-class-id="fit1032-tutorial-02"]')
    a, b = rect(browser, lecture), rect(browser, tutorial)
    assert a["right"] <= b["left"] + 1 and abs(a["width"] - b["width"]) <= 1, (a, b)
    assert abs(b["top"] - a["top"] - hour) <= 2 and abs(b["height"] - 1.5 * hour) <= 2
    assert "clash" in lecture.get_attribute("class") and "clash" in tutorial.get_attribute("class")
    assert "Clashes with FIT1032 Tutorial 02" in lecture.text
    assert one(browser, "#week-clashes").text == "2 classes clash with another this week."
    no_sideways_scroll(browser)
    axe.assert_clean(browser, "week view")

    # Back two weeks: the mid-semester break, said as such, each day named, no classes.
    for _ in range(2):
        one(browser, "#week-previous").click()
    wait_for(browser, lambda d: one(d, "#week-title").text.startswith("Mid-semester break: teaching resumes on "))
    assert [e.text for e in by_css(browser, ".week-day-off")] == ["Mid-semester break: no classes"] * 5
    assert not by_css(browser, ".week-event")
    assert one(browser, "#week-empty").text == "No classes this week."
    # And back to this week in one tap.
    one(browser, "#week-current").click()
    wait_for(browser, lambda d: one(d, "#week-title").text == "Week 8")


def test_the_week_on_a_phone_is_a_strip_of_days_opening_on_today(quad_server_factory, new_browser, axe):
    server = quad_server_factory(demo=True, now=melbourne("12:00", "wednesday"))
    driver = new_browser(width=PHONE)
    sign_in(driver, server, "kier", next_path="/timetable/week")
    strip = one(driver, ".week-columns")
    viewport = rect(driver, strip)
    today = one(driver, ".week-column.is-today")

    def in_view(column) -> bool:
        box = rect(driver, column)
        return abs(box["left"] - viewport["left"]) <= 2 and box["width"] <= viewport["width"] + 1

    # One day wide, the page itself not scrolling sideways, opened on today.
    wait_for(driver, lambda d: in_view(today), message="the strip did not open on today")
    no_sideways_scroll(driver)
    # The links above it take the strip to a day: Monday's lecture.
    links = by_css(driver, ".week-strip a")
    assert len(links) == 5
    assert links[2].get_attribute("aria-current") == "date"
    links[0].click()
    monday = by_css(driver, ".week-column")[0]
    wait_for(driver, lambda d: in_view(monday), message="Monday did not come into view")
    assert one(driver, '[data-class-id="fit1031-lecture-01"]').is_displayed()
    no_sideways_scroll(driver)
    axe.assert_clean(driver, "week view phone")


def test_french_week(quad_server_factory, new_browser, axe):
    server = quad_server_factory(demo=True, now=melbourne("12:00", "wednesday"))
    driver = new_browser(width=PHONE, lang="fr")
    sign_in(driver, server, "kier", next_path="/timetable/week")
    assert one(driver, "#week-title").text == "Semaine 8"
    assert one(driver, "#week-previous").text == "Semaine précédente"
    no_sideways_scroll(driver)
    axe.assert_clean(driver, "week view fr phone")


# "in 2 h 59 min", "in 3 h", "in 12 min": never a number of minutes that reads like a time of day.
WORDS = re.compile(r"^in (\d{1,2} min|\d h \d{1,2} min|\d{1,2} h|now)$")


def test_shuttles_say_their_time_and_how_long_until_it(quad_server_factory, browser):
    # Three in the morning: the first buses (06:00 and 06:15) are hours away.
    server = quad_server_factory(demo=True, now=melbourne("03:00:30"))
    browser.get(server.url + "/timetable")
    stops = by_css(browser, "#stop-list li.stop")
    assert stops
    for stop in stops:
        when = stop.find_element("css selector", ".stop-when").text
        time, words = when.split(" · ")
        assert WORDS.match(words), when
        expected = dt.datetime.fromisoformat(stop.get_attribute("data-expected-at").replace("Z", "+00:00"))
        assert time == expected.astimezone(MELBOURNE).strftime("%H:%M")
        left = (expected - server.now()).total_seconds()
        hours = int(left // 3600)
        assert words.startswith(f"in {hours} h"), (when, left)
        # No second-by-second clock hours ahead.
        assert stop.find_element("css selector", ".stop-clock").text == ""
        # "Live", or "Live · 2 min late" for a bus off its time.
        assert stop.find_element("css selector", ".stop-mode").text.split(" · ")[0] in ("Live", "Scheduled")
