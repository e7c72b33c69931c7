"""Timetable as a student meets it: Kier's page with the demo data (the simulator moves car parks and
shuttle predictions every few seconds), the calendar subscription read by a real iCalendar parser,
a server error shown with Retry, and accessibility."""

from __future__ import annotations

import datetime as dt
import json
import re
import time
import urllib.parse
from zoneinfo import ZoneInfo

import pytest
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

icalendar = pytest.importorskip("icalendar")
from dateutil.rrule import rrulestr  # noqa: E402  (icalendar depends on python-dateutil)

MELBOURNE = ZoneInfo("Australia/Melbourne")


@pytest.fixture
def server(quad_server_factory):
    return quad_server_factory(demo=True)


def password_of(server, username: str) -> str:
    match = re.search(rf"^\s*{username} \(\w+\): (\S+)$", server.log(), re.MULTILINE)
    assert match, "the demo people's passwords are announced once"
    return match.group(1)


def bearer(server, username: str) -> dict:
    body = json.dumps({"username": username, "password": password_of(server, username)}).encode()
    response = server.request("/api/sessions", "POST", {"Content-Type": "application/json"}, body)
    assert response.status in (200, 201), response.text
    return {"Authorization": "Bearer " + response.json()["token"]}


def sign_in(driver, server, username: str, next_path: str):
    driver.get(f"{server.url}/signin?next={next_path}")
    driver.find_element(By.ID, "username").send_keys(username)
    driver.find_element(By.ID, "password").send_keys(password_of(server, username))
    driver.find_element(By.CSS_SELECTOR, "form.stacked-form button[type=submit]").click()
    WebDriverWait(driver, 10).until(lambda d: "/signin" not in d.current_url)
    WebDriverWait(driver, 10).until(lambda d: d.execute_script("return document.readyState") == "complete")


def test_the_calendar_expands_to_the_right_dates(server):
    headers = bearer(server, "kier")
    link = server.request("/api/me/calendar", headers=headers).json()
    path = link["url"][link["url"].index("/api/"):]
    response = server.request(path)
    assert response.status == 200
    assert response.content_type.startswith("text/calendar")
    calendar = icalendar.Calendar.from_ical(response.text)
    assert calendar.walk("VTIMEZONE")[0]["TZID"] == "Australia/Melbourne"
    events = {str(event["SUMMARY"]): event for event in calendar.walk("VEVENT")}
    assert set(events) == {"FIT1031 Lecture 01", "FIT1031 Lab 01", "FIT1031 Workshop 01", "FIT1032 Lecture 01"}
    assert len({str(event["UID"]) for event in events.values()}) == 4
    assert str(events["FIT1031 Lecture 01"]["LOCATION"]) == "S4, 13 College Walk, Clayton"

    # The demo puts this week in teaching week 8, after a one-week break two weeks ago.
    today = dt.datetime.now(MELBOURNE).date()
    this_monday = today - dt.timedelta(days=today.weekday())
    week1 = this_monday - dt.timedelta(weeks=8)
    break_monday = this_monday - dt.timedelta(weeks=2)

    lecture = events["FIT1031 Lecture 01"]
    start = lecture["DTSTART"].dt
    assert start.tzinfo is not None and start.hour == 10 and start.date() == week1
    rule = rrulestr(lecture["RRULE"].to_ical().decode(), dtstart=start)
    excluded = {d.dt.date() for exdate in _list(lecture.get("EXDATE")) for d in exdate.dts}
    dates = [d.date() for d in rule if d.date() not in excluded]
    assert len(dates) == 12, "twelve teaching weeks, the break left out"
    assert break_monday not in dates
    assert dates[7] == this_monday, "teaching week 8 is this week"
    assert all(d.weekday() == 0 for d in dates)
    # 10:00 on the wall clock every week, across any daylight-saving change.
    assert all(d.hour == 10 for d in rule)

    lab = events["FIT1031 Lab 01"]
    lab_rule = rrulestr(lab["RRULE"].to_ical().decode(), dtstart=lab["DTSTART"].dt)
    lab_excluded = {d.dt.date() for exdate in _list(lab.get("EXDATE")) for d in exdate.dts}
    lab_dates = [d.date() for d in lab_rule if d.date() not in lab_excluded]
    assert len(lab_dates) == 11, "the lab starts in week 2"
    assert lab_dates[0] == week1 + dt.timedelta(weeks=1, days=1)

    # A wrong key gives nothing; a new key retires the old address.
    assert server.request(path.split("?")[0] + "?key=nope").status == 404
    assert server.request("/api/me/calendar", "POST", headers).status == 200
    assert server.request(path).status == 404


def test_a_one_day_holiday_has_no_class_in_the_calendar_or_the_week(server):
    # An admin adds a one-day holiday on next week's Wednesday (teaching week 9), the workshop's day.
    today = dt.datetime.now(MELBOURNE).date()
    this_monday = today - dt.timedelta(days=today.weekday())
    week1 = this_monday - dt.timedelta(weeks=8)
    break_monday = this_monday - dt.timedelta(weeks=2)
    holiday = this_monday + dt.timedelta(weeks=1, days=2)
    token = "e2e-csrf-token-0123456789abcdefghijklmnop"
    fields = {
        "csrf": token, "name": "Clayton", "timeZone": "Australia/Melbourne", "semesterStart": week1.isoformat(),
        "teachingWeeks": "12",
        "breaks": f"Mid-semester break; {break_monday}; {break_monday + dt.timedelta(days=6)}\n"
                  f"Show day; {holiday}; {holiday}",
    }
    response = server.request(
        "/admin/timetable/campus", "POST",
        {"Content-Type": "application/x-www-form-urlencoded", "Cookie": f"quad_csrf={token}"},
        urllib.parse.urlencode(fields).encode(), admin=True)
    assert response.status in (200, 303), response.text

    headers = bearer(server, "kier")
    # The week of the holiday: still teaching week 9, every class but the workshop.
    week = server.request(f"/api/schedules?date={holiday}", headers=headers).json()
    assert week["week"] == 9
    assert [s["class"] for s in week["schedules"]] == ["Lecture 01", "Lab 01", "Lecture 01"]
    assert not any(s["start_time"].startswith(holiday.isoformat()) for s in week["schedules"])
    assert week["daysOff"] == [{"date": holiday.isoformat(), "name": "Show day"}]

    # The calendar, read by a real parser: the workshop skips the holiday, the other classes keep that week.
    link = server.request("/api/me/calendar", headers=headers).json()
    calendar = icalendar.Calendar.from_ical(server.request(link["url"][link["url"].index("/api/"):]).text)
    events = {str(event["SUMMARY"]): event for event in calendar.walk("VEVENT")}

    def dates(summary):
        event = events[summary]
        rule = rrulestr(event["RRULE"].to_ical().decode(), dtstart=event["DTSTART"].dt)
        excluded = {d.dt.date() for exdate in _list(event.get("EXDATE")) for d in exdate.dts}
        return [d.date() for d in rule if d.date() not in excluded]

    workshop = dates("FIT1031 Workshop 01")
    assert holiday not in workshop
    assert len(workshop) == 11, "twelve teaching weeks less the holiday"
    assert holiday - dt.timedelta(weeks=1) in workshop and holiday + dt.timedelta(weeks=1) in workshop
    assert holiday - dt.timedelta(days=2) in dates("FIT1031 Lecture 01")
    assert len(dates("FIT1031 Lecture 01")) == 12


def _list(value):
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def test_kiers_page_counts_down_and_car_parks_change_without_reload(server, browser, axe):
    sign_in(browser, server, "kier", "/timetable")
    assert browser.find_element(By.ID, "timetable-greeting").text == "Hey, Kier"
    assert browser.find_element(By.ID, "timetable-week").text == "Week 8"
    assert browser.find_elements(By.CSS_SELECTOR, "#class-list .class-card"), "today's or the next day's classes"
    assert browser.find_element(By.ID, "add-to-calendar").get_attribute("href").startswith("webcal://")

    # The shuttle countdown ticks by itself.
    clock = browser.find_element(By.CSS_SELECTOR, "#stop-list li.stop .stop-clock")
    WebDriverWait(browser, 5).until(lambda d: clock.text != "")
    first = clock.text
    WebDriverWait(browser, 5).until(lambda d: clock.text != first)

    # The simulator moves the car parks; the page follows without a reload.
    browser.execute_script("window.__sameDocument = true")
    counts = lambda d: [e.text for e in d.find_elements(By.CSS_SELECTOR, "#parking-list .parking-count")]  # noqa: E731
    before = counts(browser)
    assert len(before) == 2
    WebDriverWait(browser, 30).until(lambda d: counts(d) != before)
    assert browser.execute_script("return window.__sameDocument === true")
    states = {e.text for e in browser.find_elements(By.CSS_SELECTOR, "#parking-list .parking-state")}
    assert states <= {"Plenty", "Filling", "Almost full", "Full"}
    assert all(e.text == "Live" for e in browser.find_elements(By.CSS_SELECTOR, "#parking-list .parking-live"))
    # Predictions arrive too: departures are marked live.
    WebDriverWait(browser, 30).until(
        lambda d: any(e.text == "Live" for e in d.find_elements(By.CSS_SELECTOR, "#stop-list .stop-mode")))
    axe.assert_clean(browser, "timetable")


def test_a_server_error_is_shown_with_retry_and_the_page_is_kept(server, browser):
    sign_in(browser, server, "kier", "/timetable")
    cards = len(browser.find_elements(By.CSS_SELECTOR, "#class-list .class-card"))
    assert not browser.find_element(By.ID, "timetable-error").is_displayed()
    assert not browser.find_element(By.ID, "timetable-offline").is_displayed()
    # The next refresh gets a 500.
    browser.execute_script("""
        window.__realFetch = window.fetch;
        window.fetch = (url, options) => String(url).startsWith('/api/schedules')
          ? Promise.resolve(new Response('{"status":500}', {status: 500}))
          : window.__realFetch(url, options);
        document.getElementById('timetable-retry').click();
    """)
    error = WebDriverWait(browser, 10).until(EC.visibility_of_element_located((By.ID, "timetable-error")))
    assert "could not be refreshed" in error.text
    assert len(browser.find_elements(By.CSS_SELECTOR, "#class-list .class-card")) == cards
    assert browser.find_elements(By.CSS_SELECTOR, "#parking-list .parking")
    # Retry once the server answers again: the message goes.
    browser.execute_script("window.fetch = window.__realFetch;")
    browser.find_element(By.ID, "timetable-retry").click()
    WebDriverWait(browser, 10).until(EC.invisibility_of_element_located((By.ID, "timetable-error")))

    # No connection: the last timetable stays, with a note.
    browser.execute_cdp_cmd("Network.enable", {})
    browser.execute_cdp_cmd("Network.emulateNetworkConditions",
                            {"offline": True, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1})
    try:
        browser.execute_script("document.getElementById('timetable-retry').click()")
        note = WebDriverWait(browser, 10).until(EC.visibility_of_element_located((By.ID, "timetable-offline")))
        assert "last timetable" in note.text
        assert len(browser.find_elements(By.CSS_SELECTOR, "#class-list .class-card")) == cards
        assert browser.find_elements(By.CSS_SELECTOR, "#stop-list li.stop")
    finally:
        browser.execute_cdp_cmd("Network.emulateNetworkConditions",
                                {"offline": False, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1})


def test_an_open_page_moves_on_after_the_last_class(server, browser):
    sign_in(browser, server, "kier", "/timetable")
    root = browser.find_element(By.ID, "timetable")
    changes_at = dt.datetime.fromisoformat(root.get_attribute("data-changes-at").replace("Z", "+00:00"))
    now = dt.datetime.now(dt.timezone.utc)
    assert now < changes_at <= now + dt.timedelta(days=1), "the end of today's last class, or midnight"
    heading = browser.find_element(By.ID, "classes-heading").text
    # Pretend the page was drawn before the last class ended: the heading it showed then, and the moment
    # it changes just passed. The page fetches itself again and shows what the server says now, without a reload.
    browser.execute_script("""
        window.__sameDocument = true;
        document.getElementById('classes-heading').textContent = 'Earlier';
        document.getElementById('class-list').replaceChildren();
        document.getElementById('timetable').dataset.changesAt = new Date(Date.now() - 1000).toISOString();
    """)
    WebDriverWait(browser, 10).until(lambda d: d.find_element(By.ID, "classes-heading").text == heading)
    assert browser.find_elements(By.CSS_SELECTOR, "#class-list .class-card")
    assert browser.execute_script("return window.__sameDocument === true")
    later = dt.datetime.fromisoformat(
        browser.find_element(By.ID, "timetable").get_attribute("data-changes-at").replace("Z", "+00:00"))
    assert later == changes_at


def test_a_device_clock_set_wrong_still_shows_live_car_parks_and_true_countdowns(quad_server_factory, new_browser):
    server = quad_server_factory(demo=True, env={"QUAD_REFRESH_SECONDS": "600"})
    driver = new_browser()
    # This device's clock runs 20 minutes fast.
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": """
        (() => { const shift = 20 * 60 * 1000, RealDate = Date;
          Date.now = () => RealDate.prototype.getTime.call(new RealDate()) + shift; })();
    """})
    driver.get(server.url + "/timetable")
    assert driver.execute_script("return Date.now() - new Date().getTime()") > 19 * 60 * 1000
    # The page learns the server's clock: readings a few seconds old are live, and the first bus is not
    # shown as already gone or 20 minutes nearer.
    # (A live update may redraw the list while it is read.)
    WebDriverWait(driver, 15, ignored_exceptions=(StaleElementReferenceException,)).until(
        lambda d: [e.text for e in d.find_elements(By.CSS_SELECTOR, "#parking-list .parking-live")] == ["Live", "Live"])
    first = driver.find_element(By.CSS_SELECTOR, "#stop-list li.stop")
    expected = dt.datetime.fromisoformat(first.get_attribute("data-expected-at").replace("Z", "+00:00"))
    minutes = int((expected - dt.datetime.now(dt.timezone.utc)).total_seconds() // 60)
    shown = first.find_element(By.CSS_SELECTOR, ".stop-minutes").text
    assert shown in {f"in {m} minutes" for m in (minutes - 1, minutes, minutes + 1)} | (
        {"now", "in 1 minute"} if minutes <= 2 else set()), shown


DEMO_CLASSES = {  # id: the admin form's fields, as the demo data has them
    "fit1031-lecture-01": ("FIT1031", "Lecture 01", "Arun", "S4", 1, "10:00", "12:00", "1-12"),
    "fit1031-lab-01": ("FIT1031", "Lab 01", "Arun", "S4", 2, "12:30", "13:30", "2-12"),
    "fit1031-workshop-01": ("FIT1031", "Workshop 01", "Arun", "S4", 3, "15:00", "16:30", "1-12"),
    "fit1032-lecture-01": ("FIT1032", "Lecture 01", "David", "S2", 4, "17:00", "18:00", "1-12"),
}


def test_an_admin_moves_a_class_and_the_open_page_follows(quad_server_factory, browser):
    server = quad_server_factory(demo=True, env={"QUAD_REFRESH_SECONDS": "5"})
    sign_in(browser, server, "kier", "/timetable")
    browser.execute_script("window.__sameDocument = true")
    card = browser.find_element(By.CSS_SELECTOR, "#class-list .class-card")
    class_id = card.get_attribute("data-class-id")
    assert "S4" in card.text or "S2" in card.text
    course, name, lecturer, _, weekday, start, end, weeks = DEMO_CLASSES[class_id]
    token = "e2e-csrf-token-0123456789abcdefghijklmnop"
    fields = {"csrf": token, "id": class_id, "course": course, "name": name, "lecturer": lecturer, "room": "G81",
              "campus": "13 College Walk, Clayton", "weekday": weekday, "start": start, "end": end, "weeks": weeks}
    response = server.request(
        "/admin/timetable/classes", "POST",
        {"Content-Type": "application/x-www-form-urlencoded", "Cookie": f"quad_csrf={token}"},
        urllib.parse.urlencode(fields).encode(), admin=True)
    assert response.status in (200, 303), response.text
    moved = f'#class-list .class-card[data-class-id="{class_id}"]'
    WebDriverWait(browser, 20).until(
        lambda d: "G81, 13 College Walk, Clayton" in d.find_element(By.CSS_SELECTOR, moved).text)
    assert browser.execute_script("return window.__sameDocument === true")


def test_french_and_a_phone(server, new_browser, axe):
    driver = new_browser(width=390, lang="fr")
    sign_in(driver, server, "kier", "/timetable")
    assert driver.find_element(By.ID, "timetable-greeting").text == "Salut, Kier"
    assert driver.find_element(By.ID, "timetable-week").text == "Semaine 8"
    assert driver.find_element(By.ID, "shuttle-heading").text == "Navette entre campus"
    axe.assert_clean(driver, "timetable fr phone")


def test_a_visitor_sees_live_car_parks_and_shuttles_and_the_api_privacy(server, browser, axe):
    browser.get(server.url + "/timetable")
    # A sign-in prompt for the personal timetable, and nothing personal.
    assert browser.find_element(By.CSS_SELECTOR, "#timetable-signin a[href='/signin?next=/timetable']").text == (
        "Sign in to see your timetable.")
    assert not browser.find_elements(By.CSS_SELECTOR, ".class-card, #add-to-calendar, #timetable-greeting")
    # The car parks and the shuttle are public: shown with their states, and live.
    browser.execute_script("window.__sameDocument = true")
    counts = lambda d: [e.text for e in d.find_elements(By.CSS_SELECTOR, "#parking-list .parking-count")]  # noqa: E731
    before = counts(browser)
    assert len(before) == 2
    states = {e.text for e in browser.find_elements(By.CSS_SELECTOR, "#parking-list .parking-state")}
    assert states and states <= {"Plenty", "Filling", "Almost full", "Full"}
    clock = browser.find_element(By.CSS_SELECTOR, "#stop-list li.stop .stop-clock")
    WebDriverWait(browser, 5).until(lambda d: clock.text != "")
    first = clock.text
    WebDriverWait(browser, 5).until(lambda d: clock.text != first)
    assert "→" in browser.find_element(By.CSS_SELECTOR, "#stop-list li.stop .stop-route").text
    # The simulator's readings reach the visitor's page without a reload.
    WebDriverWait(browser, 30).until(lambda d: counts(d) != before)
    WebDriverWait(browser, 30).until(
        lambda d: any(e.text == "Live" for e in d.find_elements(By.CSS_SELECTOR, "#stop-list .stop-mode")))
    assert browser.execute_script("return window.__sameDocument === true")
    axe.assert_clean(browser, "timetable visitor")

    # A refresh that fails keeps what is shown and says so, with Retry; the page's own refresh uses the
    # public API (no 401 for a visitor).
    browser.execute_script("""
        window.__realFetch = window.fetch;
        window.__asked = [];
        window.fetch = (url, options) => { window.__asked.push(String(url));
          return Promise.resolve(new Response('{"status":500}', {status: 500})); };
        document.getElementById('timetable-retry').click();
    """)
    error = WebDriverWait(browser, 10).until(EC.visibility_of_element_located((By.ID, "timetable-error")))
    assert "could not be refreshed" in error.text
    assert len(counts(browser)) == 2
    asked = browser.execute_script("return window.__asked")
    assert "/api/parkings" in asked and "/api/schedules" not in asked
    browser.execute_script("window.fetch = window.__realFetch;")
    browser.find_element(By.ID, "timetable-retry").click()
    WebDriverWait(browser, 10).until(EC.invisibility_of_element_located((By.ID, "timetable-error")))

    assert server.request("/api/schedules").status == 401
    other = bearer(server, "ada")
    assert server.request("/api/schedules?student=305491", headers=other).status == 403
    assert server.request("/api/parkings").status == 200
    assert server.request("/api/departures").status == 200


def test_an_admin_adds_a_car_park_with_the_form(server, browser, axe):
    match = re.search(r"username admin, password (\S+)", server.log())
    assert match
    browser.get(f"{server.url}/signin?next=/admin/timetable")
    browser.find_element(By.ID, "username").send_keys("admin")
    browser.find_element(By.ID, "password").send_keys(match.group(1))
    browser.find_element(By.CSS_SELECTOR, "form.stacked-form button[type=submit]").click()
    WebDriverWait(browser, 10).until(EC.presence_of_element_located((By.ID, "carparks-heading")))
    assert browser.find_element(By.ID, "c-zone").get_attribute("value") == "Australia/Melbourne"
    axe.assert_clean(browser, "timetable admin")

    browser.find_element(By.ID, "cp-name").send_keys("Peninsula")
    browser.find_element(By.ID, "cp-capacity").send_keys("120")
    browser.find_element(By.CSS_SELECTOR, "form[action='/admin/timetable/carparks'] button[type=submit]").click()
    WebDriverWait(browser, 10).until(EC.presence_of_element_located((By.ID, "timetable-saved")))
    names = [park["name"] for park in server.request("/api/parkings").json()["parkings"]]
    assert "Peninsula" in names


def test_an_admin_edits_a_car_park_and_open_pages_follow(quad_server_factory, browser, new_browser):
    # The page's own periodic refresh is 10 minutes away: only the admin's event can bring the new name.
    server = quad_server_factory(demo=True, env={"QUAD_REFRESH_SECONDS": "600"})
    kier = new_browser()
    sign_in(kier, server, "kier", "/timetable")
    kier.execute_script("window.__sameDocument = true")
    names = lambda d: [e.text for e in d.find_elements(By.CSS_SELECTOR, "#parking-list .parking-name")]  # noqa: E731
    assert "Clayton" in names(kier)

    match = re.search(r"username admin, password (\S+)", server.log())
    assert match
    browser.get(f"{server.url}/signin?next=/admin/timetable")
    browser.find_element(By.ID, "username").send_keys("admin")
    browser.find_element(By.ID, "password").send_keys(match.group(1))
    browser.find_element(By.CSS_SELECTOR, "form.stacked-form button[type=submit]").click()
    WebDriverWait(browser, 10).until(EC.presence_of_element_located((By.ID, "carparks-heading")))
    browser.find_element(By.CSS_SELECTOR, "a[href='/admin/timetable?edit=carparks&id=clayton#carparks']").click()
    WebDriverWait(browser, 10).until(lambda d: d.find_element(By.ID, "cp-name").get_attribute("value") == "Clayton")
    # A mistake comes back with what was typed.
    name = browser.find_element(By.ID, "cp-name")
    name.clear()
    name.send_keys("Clayton North")
    capacity = browser.find_element(By.ID, "cp-capacity")
    browser.execute_script("arguments[0].removeAttribute('min')", capacity)
    capacity.clear()
    capacity.send_keys("-3")
    browser.find_element(By.CSS_SELECTOR, "#carpark-form button[type=submit]").click()
    WebDriverWait(browser, 10).until(EC.presence_of_element_located((By.ID, "cp-capacity-error")))
    assert browser.find_element(By.ID, "cp-name").get_attribute("value") == "Clayton North"
    capacity = browser.find_element(By.ID, "cp-capacity")
    capacity.clear()
    capacity.send_keys("900")
    browser.find_element(By.CSS_SELECTOR, "#carpark-form button[type=submit]").click()
    WebDriverWait(browser, 10).until(EC.presence_of_element_located((By.ID, "timetable-saved")))

    # Kier's open page shows the new name without a reload.
    WebDriverWait(kier, 15).until(lambda d: "Clayton North" in names(d))
    assert kier.execute_script("return window.__sameDocument === true")


def test_a_live_prediction_moves_the_shown_time_and_the_order(server, browser):
    sign_in(browser, server, "kier", "/timetable")
    stops = lambda d: d.find_elements(By.CSS_SELECTOR, "#stop-list li.stop")  # noqa: E731
    WebDriverWait(browser, 10).until(lambda d: len(stops(d)) >= 2)
    first, last = stops(browser)[0], stops(browser)[-1]
    stop_id = first.get_attribute("data-stop-id")
    # The first bus is now predicted a minute after the last one shown.
    predicted = dt.datetime.fromisoformat(last.get_attribute("data-expected-at").replace("Z", "+00:00")) + dt.timedelta(
        minutes=1)
    body = json.dumps({"predicted": predicted.strftime("%Y-%m-%dT%H:%M:%SZ")}).encode()
    response = server.request(f"/api/departures/{stop_id}", "PUT", {"Content-Type": "application/json"}, body,
                              admin=True)
    assert response.status == 200, response.text
    shown = predicted.astimezone(MELBOURNE).strftime("%H:%M")
    moved = lambda d: d.find_element(By.CSS_SELECTOR, f'#stop-list li[data-stop-id="{stop_id}"]')  # noqa: E731
    WebDriverWait(browser, 10).until(lambda d: moved(d).find_element(By.CSS_SELECTOR, ".stop-time").text == shown)
    # The list is in the order the buses come: the delayed one is now last.
    assert stops(browser)[-1].get_attribute("data-stop-id") == stop_id
    times = [li.get_attribute("data-expected-at") for li in stops(browser)]
    assert times == sorted(times, key=lambda t: dt.datetime.fromisoformat(t.replace("Z", "+00:00")))
