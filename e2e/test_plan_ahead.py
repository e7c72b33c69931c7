"""Planning a room on a phone (390 px), counting the taps of the three tasks the issue names: a room for six people
tomorrow at 10:00 for 30 minutes (at most 4), a weekly series until a date (at most 6), and booking now for an hour
(2). A tap is a press, a choice in a picker, or a number typed. Each test starts a server of its own with the demo
rooms, its clock on a Tuesday at 09:50 on the campus; North Hall opens weekdays 08:00 to 20:00.
"""

import datetime as dt

import pytest
from selenium.webdriver.support.ui import Select

from conftest import MELBOURNE, PHONE, melbourne
from helpers import my_bookings, one, set_building_rules, shown, sign_in_as, text_of, wait_for

NORTH_HALL = {"hours": "Mon-Fri 08:00-20:00", "horizonDays": 56, "maxMinutes": 240, "checkInMinutes": None}


@pytest.fixture
def server(quad_server_factory):
    server = quad_server_factory(demo=True, now=melbourne("09:50", day="tuesday"))
    set_building_rules(server, "North Hall", NORTH_HALL)
    return server


def today(server) -> dt.date:
    return server.now().astimezone(MELBOURNE).date()


def at(day: dt.date, time: str) -> str:
    """`time` on `day` on the campus clock, as the API writes instants."""
    hour, minute = (int(part) for part in time.split(":"))
    instant = dt.datetime(day.year, day.month, day.day, hour, minute, tzinfo=MELBOURNE).astimezone(dt.UTC)
    return instant.strftime("%Y-%m-%dT%H:%M:%SZ")


def pick_date(driver, selector: str, day: dt.date) -> None:
    """What a phone's date picker does to its field (WebDriver cannot open a native picker): one tap."""
    driver.execute_script(
        "const e = document.querySelector(arguments[0]); e.value = arguments[1];"
        "e.dispatchEvent(new Event('input', {bubbles: true})); e.dispatchEvent(new Event('change', {bubbles: true}));",
        selector,
        day.isoformat(),
    )


def in_first_screen(driver, element) -> bool:
    """Whether `element` is whole within the first screen, above the tab bar: reached without scrolling."""
    return driver.execute_script(
        "const r = arguments[0].getBoundingClientRect();"
        "const bar = document.querySelector('.site-header .services');"  # the tab bar, fixed at a phone's foot
        "const fixed = bar && getComputedStyle(bar).position === 'fixed';"
        "const bottom = fixed ? bar.getBoundingClientRect().top : innerHeight;"
        "return scrollY === 0 && r.top >= 0 && r.bottom <= bottom;",
        element,
    )


def test_six_people_tomorrow_at_ten_for_thirty_minutes_take_four_taps_on_a_phone(server, new_browser, axe):
    driver = new_browser(width=PHONE, height=844)
    sign_in_as(driver, server, "Kim", next_path="/rooms")
    wait_for(driver, lambda d: d.execute_script("return document.getElementById('rooms').dataset.live"))
    tomorrow = today(server) + dt.timedelta(days=1)
    taps = 0

    pick_date(driver, "#find-date", tomorrow)
    taps += 1
    Select(one(driver, "#find-start")).select_by_value("10:00")
    taps += 1
    people = one(driver, "#find-people")
    people.clear()
    people.send_keys("6")
    taps += 1  # 30 minutes is the default
    wait_for(
        driver,
        lambda d: (
            text_of(d, "#found-heading").startswith("Rooms for 6 people, ")
            and text_of(d, "#found-heading").endswith(", 10:00–10:30")
        ),
        message="the finder did not answer for six",
    )
    assert driver.current_url.endswith(f"/rooms?date={tomorrow}&start=10%3A00&minutes=30&people=6")
    first = one(driver, "#rooms-found .found-book button")
    assert first.text.startswith("Book 6 seats")
    assert in_first_screen(driver, first), "the first room found is below the first screen"
    axe.assert_clean(driver, "the finder's answer, phone")
    first.click()
    taps += 1

    wait_for(driver, lambda d: shown(d, "#room-notice"), message="no word of the booking")
    notice = text_of(driver, "#room-notice")
    assert notice.startswith("Booked 6 seats in Helmold: ") and notice.endswith(", 10:00–10:30."), notice
    assert taps <= 4
    booked = my_bookings(server, "Kim")
    assert [(b["roomId"], b["start"], b["end"], b.get("seats")) for b in booked] == [
        ("helmold", at(tomorrow, "10:00"), at(tomorrow, "10:30"), 6)
    ]


def test_a_weekly_series_until_a_date_takes_six_taps_on_a_phone(server, new_browser):
    driver = new_browser(width=PHONE, height=844)
    sign_in_as(driver, server, "Kim", next_path="/rooms")
    wait_for(driver, lambda d: d.execute_script("return document.getElementById('rooms').dataset.live"))
    until = today(server) + dt.timedelta(days=21)
    taps = 0

    photo = one(driver, "#room-yana .room-photo")
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", photo)  # a scroll, not a tap
    photo.click()  # the room's day
    taps += 1
    wait_for(driver, lambda d: d.execute_script("return !!document.getElementById('day-slots')"))
    slot = one(driver, "#day-slots a[href*='start=14:00']")
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", slot)
    slot.click()  # the time
    taps += 1
    wait_for(driver, lambda d: shown(d, "#book-confirm"), message="the booking panel did not open")
    assert text_of(driver, ".book-what").startswith("Yana · ")
    one(driver, ".book-repeat summary").click()
    taps += 1
    Select(one(driver, "#book-repeat")).select_by_value("weekly")
    taps += 1
    pick_date(driver, "#book-until", until)
    taps += 1
    one(driver, "#book-confirm").click()
    taps += 1

    wait_for(driver, lambda d: shown(d, "#room-notice"), message="no word of the series")
    notice = text_of(driver, "#room-notice")
    assert notice.startswith("Booked a seat in Yana: ") and notice.endswith("All 4 dates are booked."), notice
    assert taps <= 6
    starts = [b["start"] for b in my_bookings(server, "Kim")]
    assert starts == [at(today(server) + dt.timedelta(days=7 * week), "14:00") for week in range(4)]


def test_booking_now_for_an_hour_takes_two_taps_and_says_the_end_first(server, new_browser):
    driver = new_browser(width=PHONE, height=844)
    sign_in_as(driver, server, "Kim", next_path="/rooms")
    wait_for(driver, lambda d: d.execute_script("return document.getElementById('rooms').dataset.live"))
    length = Select(one(driver, "#room-ljerka .book-length"))
    # 09:50: from the quarter hour now falls in, each length says its end before the tap.
    assert [o.text for o in length.options] == [
        "Until 20:00",
        "30 minutes, until 10:15",
        "1 hour, until 10:45",
        "1 h 30 min, until 11:15",
    ]
    length.select_by_value("60")
    one(driver, "#room-ljerka button.book").click()
    wait_for(driver, lambda d: shown(d, "#room-ljerka .cancel-one summary"), message="Ljerka was not booked")
    assert [(b["roomId"], b["start"], b["end"]) for b in my_bookings(server, "Kim")] == [
        ("ljerka", at(today(server), "09:45"), at(today(server), "10:45"))
    ]


def test_without_scripts_the_finder_asks_on_find_and_books_the_group(server, new_browser):
    driver = new_browser(width=PHONE, height=844)
    sign_in_as(driver, server, "Kim", next_path="/rooms")
    driver.execute_cdp_cmd("Emulation.setScriptExecutionDisabled", {"value": True})
    tomorrow = today(server) + dt.timedelta(days=1)
    driver.get(f"{server.url}/rooms?date={tomorrow}&start=10:00&minutes=60&people=3")
    assert text_of(driver, "#found-heading").endswith(", 10:00–11:00")
    one(driver, "#rooms-found .found-book button").click()
    wait_for(driver, lambda d: shown(d, "#room-notice"), message="no word of the booking")
    assert text_of(driver, "#room-notice").startswith("Booked 3 seats in Helmold: ")
