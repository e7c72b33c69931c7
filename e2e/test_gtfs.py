"""Shuttles from the operator's own GTFS feed (issue 40): an admin loads it from /admin/timetable (a feed at fault is
refused, naming each file, row and column, and nothing changes) or with `quad import gtfs feed.zip`; the timetable then
shows its departures, on the days each service runs, with a date removed, a trip past midnight, and times right across
the change of Melbourne's clocks (checked against Python's zoneinfo). The feed is made by the tests (gtfs_feed.py)."""

from __future__ import annotations

import datetime as dt
import subprocess

from selenium.webdriver.common.by import By

import gtfs_feed
from conftest import MELBOURNE, PHONE, http_request, melbourne
from helpers import by_css, one, quad_login, set_campus, sign_in, wait_for, wait_replaced


def departures(server) -> list[dict]:
    answer = http_request(server.url + "/api/departures")
    assert answer.status == 200, answer.text
    return answer.json()["departures"]


def local(stop: dict) -> dt.datetime:
    return dt.datetime.fromisoformat(stop["expectedAt"].replace("Z", "+00:00")).astimezone(MELBOURNE)


def upload(driver, path) -> None:
    driver.find_element(By.ID, "gtfs-file").send_keys(str(path))
    button = one(driver, "#gtfs-form button[type=submit]")
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", button)
    page = driver.find_element(By.TAG_NAME, "html")
    button.click()
    # The page before it was "complete" too: wait for the answer to replace it first.
    wait_replaced(driver, page)
    wait_for(driver, lambda d: d.execute_script("return document.readyState") == "complete")


def test_an_admin_loads_the_feed_and_the_shuttles_come_from_it(quad_server_factory, new_browser, axe, tmp_path):
    server = quad_server_factory(now=melbourne("07:45", "wednesday"))
    set_campus(server)
    wednesday = server.now().astimezone(MELBOURNE).date()
    driver = new_browser(width=PHONE)
    sign_in(driver, server, "admin", next_path="/admin/timetable#gtfs")
    assert one(driver, "#gtfs-loaded").text == "No feed loaded: the shuttles are the routes above."

    # A feed at fault: a call of a trip the feed does not have, and a time that is no time. Refused, each named.
    def broken(tables):
        ghost = {"trip_id": "ghost", "arrival_time": "", "departure_time": "09:00:00", "stop_id": "CL"}
        tables["stop_times.txt"].append({**ghost, "stop_sequence": "1"})
        tables["stop_times.txt"][0]["departure_time"] = "8am"

    upload(driver, gtfs_feed.write_feed(tmp_path / "broken.zip", wednesday, broken))
    errors = [e.text for e in by_css(driver, "#timetable-errors li")]
    assert errors == [
        "stop_times.txt departure_time: row 2: Write the time as HH:MM:SS (past 24:00 after midnight).",
        "stop_times.txt trip_id: row 13: No trip ghost in trips.txt.",
    ], errors
    assert departures(server) == [], "nothing was loaded"
    axe.assert_clean(driver, "admin timetable, feed refused")

    upload(driver, gtfs_feed.write_feed(tmp_path / "feed.zip", wednesday))
    wait_for(driver, lambda d: d.current_url.endswith("/admin/timetable?saved=1#gtfs"))
    assert one(driver, "#gtfs-loaded").text == "Loaded: Campus Shuttle: 5 stops, 2 services, 6 calls."

    # The timetable's shuttles are the feed's: at 07:45, the 08:00s from each campus, the 08:10 from the station…
    driver.get(server.url + "/timetable")
    shown = [
        (e.find_element(By.CSS_SELECTOR, ".stop-route").text, e.find_element(By.CSS_SELECTOR, ".stop-when").text)
        for e in by_css(driver, "#stop-list li.stop")
    ]
    # (The server's clock runs on while the page is drawn: a minute may have passed since 07:45.)
    minutes = int((dt.datetime.combine(wednesday, dt.time(8), tzinfo=MELBOURNE) - server.now()).total_seconds() // 60)
    assert shown[:4] in [
        [
            ("Caulfield campus → Clayton campus", f"08:00 · in {m} min"),
            ("Clayton campus → Caulfield campus", f"08:00 · in {m} min"),
            ("Huntingdale station → Caulfield campus", f"08:10 · in {m + 10} min"),
            ("Clayton campus → Caulfield campus", "17:30 · in 9 h"),
        ]
        for m in (minutes, minutes + 1)
    ], shown
    # …and the night trip of Wednesday's service leaves at 01:10 on Thursday.
    late = [stop for stop in departures(server) if stop["id"].startswith("late-")]
    assert [local(stop) for stop in late] == [
        dt.datetime.combine(wednesday + dt.timedelta(days=1), dt.time(1, 10), tzinfo=MELBOURNE)
    ]

    # Thursday is a holiday for the weekday service: the morning trip does not run, the daily ones do.
    server.restart(now=server.now() + dt.timedelta(days=1))
    thursday = [stop["id"].split("-")[0] for stop in departures(server)]
    assert "morning" not in thursday and thursday[:1] == ["back"], thursday


def next_change_of_clocks(after: dt.date) -> dt.date:
    """The next day on which Melbourne's clocks change (a Sunday in April or October)."""
    day = after
    while True:
        noon = dt.datetime.combine(day, dt.time(12), tzinfo=MELBOURNE)
        if noon.utcoffset() != (noon - dt.timedelta(days=1)).utcoffset():
            return day
        day += dt.timedelta(days=1)


def test_quad_import_gtfs_and_departures_across_the_change_of_clocks(quad_server_factory, quad_binary, tmp_path):
    change = next_change_of_clocks(dt.datetime.now(dt.UTC).astimezone(MELBOURNE).date())
    saturday = change - dt.timedelta(days=1)
    # Half past eleven on the Saturday night before the clocks change.
    server = quad_server_factory(now=dt.datetime.combine(saturday, dt.time(23, 30), tzinfo=MELBOURNE))
    set_campus(server)

    environment = quad_login(quad_binary, server, tmp_path / "config")
    feed = gtfs_feed.write_feed(tmp_path / "feed.zip", saturday)
    loaded = subprocess.run(
        [str(quad_binary), "import", "gtfs", str(feed)], capture_output=True, text=True, env=environment, timeout=60
    )
    assert loaded.returncode == 0, loaded.stderr
    assert loaded.stdout.strip() == "gtfs: Campus Shuttle: 5 stops, 2 services, 6 calls"

    # Saturday's night trip at 01:10 (before the change), Sunday's 03:30 and 08:00s (after it): each at its time on
    # the wall clock, as zoneinfo places it.
    shown = {(stop["id"].split("-")[0], stop["departure"]): stop for stop in departures(server)}
    expected = {
        ("late", "Clayton campus"): dt.datetime.combine(change, dt.time(1, 10), tzinfo=MELBOURNE),
        ("early", "Peninsula campus"): dt.datetime.combine(change, dt.time(3, 30), tzinfo=MELBOURNE),
        ("back", "Caulfield campus"): dt.datetime.combine(change, dt.time(8, 0), tzinfo=MELBOURNE),
        ("evening", "Clayton campus"): dt.datetime.combine(change, dt.time(17, 30), tzinfo=MELBOURNE),
    }
    for key, when in expected.items():
        assert key in shown, (key, sorted(shown))
        assert local(shown[key]) == when, (key, shown[key])
        assert shown[key]["predicted_arrival_date"] == when.strftime("%Y-%m-%dT%H:%M:%S")
    assert ("morning", "Clayton campus") not in shown, "the weekday service does not run on a Sunday"
    # Between the 01:10 and the 03:30, the clocks skipped an hour: one hour and twenty minutes passed, not two twenty.
    gap = local(shown[("early", "Peninsula campus")]) - local(shown[("late", "Clayton campus")])
    assert gap == dt.timedelta(hours=1, minutes=20) if change.month == 10 else dt.timedelta(hours=3, minutes=20)

    # A feed at fault: every error said, nothing loaded (the feed before stays).
    broken = gtfs_feed.write_feed(tmp_path / "broken.zip", saturday, lambda t: t.pop("trips.txt"))
    refused = subprocess.run(
        [str(quad_binary), "import", "gtfs", str(broken)], capture_output=True, text=True, env=environment, timeout=60
    )
    assert refused.returncode == 1
    assert "trips.txt: The feed has no trips.txt." in refused.stderr, refused.stderr
    assert len(departures(server)) == len(shown)
