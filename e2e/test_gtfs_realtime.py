"""Shuttles from the operator's GTFS-Realtime feed (issue 40): with QUAD_GTFS_RT_URL, Quad reads the operator's
TripUpdates (protobuf) every QUAD_GTFS_RT_EVERY seconds. A delay and a cancellation show on the open timetable within
one read; the feed stopped, the shuttles read "Scheduled" again within its staleness limit (QUAD_GTFS_RT_STALE_AFTER),
as UCSD's app said "not live" and NUSMods's did not. The feed is built with the operators' own Python bindings
(gtfs-realtime-bindings) and served on loopback by the test; the static feed is gtfs_feed.py's."""

from __future__ import annotations

import datetime as dt
import http.server
import threading
import time

from google.transit import gtfs_realtime_pb2
from selenium.webdriver.common.by import By

import gtfs_feed
from conftest import MELBOURNE, PHONE, http_request, melbourne
from helpers import by_css, set_campus, wait_for

EVERY = 1
STALE_AFTER = 6


class RealtimeFeed:
    """An operator's TripUpdates endpoint on loopback: each read is a FeedMessage stamped with the server's clock
    (`clock()`), holding what `trips` says now; `down` makes it answer 503 as a feed in trouble does."""

    def __init__(self, clock):
        self.clock = clock
        self.trips: list[gtfs_realtime_pb2.TripUpdate] = []
        self.down = False
        self.reads = 0
        feed = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (the standard library's name)
                feed.reads += 1
                if feed.down:
                    self.send_response(503)
                    self.end_headers()
                    return
                body = feed.message().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_port}/trip-updates.pb"

    def message(self) -> gtfs_realtime_pb2.FeedMessage:
        message = gtfs_realtime_pb2.FeedMessage()
        message.header.gtfs_realtime_version = "2.0"
        message.header.incrementality = gtfs_realtime_pb2.FeedHeader.FULL_DATASET
        message.header.timestamp = int(self.clock().timestamp())
        for number, trip in enumerate(self.trips, start=1):
            entity = message.entity.add()
            entity.id = str(number)
            entity.trip_update.CopyFrom(trip)
        return message

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def delayed(trip_id: str, day: dt.date, sequence: int, seconds: int) -> gtfs_realtime_pb2.TripUpdate:
    update = gtfs_realtime_pb2.TripUpdate()
    update.trip.trip_id = trip_id
    update.trip.start_date = gtfs_feed.yyyymmdd(day)
    stop = update.stop_time_update.add()
    stop.stop_sequence = sequence
    stop.departure.delay = seconds
    return update


def cancelled(trip_id: str, day: dt.date) -> gtfs_realtime_pb2.TripUpdate:
    update = gtfs_realtime_pb2.TripUpdate()
    update.trip.trip_id = trip_id
    update.trip.start_date = gtfs_feed.yyyymmdd(day)
    update.trip.schedule_relationship = gtfs_realtime_pb2.TripDescriptor.CANCELED
    return update


def shown(driver) -> dict[str, tuple[str, str, bool]]:
    """Each shuttle on the page by id: (its time, its mode in words, whether it is drawn cancelled)."""
    return {
        stop.get_attribute("data-stop-id"): (
            stop.find_element(By.CSS_SELECTOR, ".stop-time").text,
            stop.find_element(By.CSS_SELECTOR, ".stop-mode").text,
            "is-cancelled" in stop.get_attribute("class").split(),
        )
        for stop in by_css(driver, "#stop-list li.stop")
    }


def test_a_delay_and_a_cancellation_show_within_one_read_and_the_schedule_returns_when_the_feed_stops(
    quad_server_factory, new_browser, axe
):
    started = melbourne("07:45", "wednesday")
    offset = started.timestamp() - time.time()
    feed = RealtimeFeed(lambda: dt.datetime.fromtimestamp(time.time() + offset, dt.UTC))
    try:
        server = quad_server_factory(
            now=started,
            env={
                "QUAD_GTFS_RT_URL": feed.url,
                "QUAD_GTFS_RT_EVERY": str(EVERY),
                "QUAD_GTFS_RT_STALE_AFTER": str(STALE_AFTER),
            },
        )
        # The feed's clock is the server's (both started from the same instant, give or take the start-up).
        feed.clock = server.now
        set_campus(server)
        wednesday = server.now().astimezone(MELBOURNE).date()
        loaded = server.request(
            "/api/gtfs",
            "PUT",
            {"Content-Type": "application/zip"},
            gtfs_feed.feed_bytes(wednesday),
            admin=True,
        )
        assert loaded.status == 200, loaded.text
        morning = f"morning-cl-{gtfs_feed.yyyymmdd(wednesday)}-0800"
        back = f"back-ca-{gtfs_feed.yyyymmdd(wednesday)}-0800"

        driver = new_browser(width=PHONE)
        driver.get(server.url + "/timetable")
        # The feed answers and says nothing of these runs: they run to the schedule as far as anyone knows.
        wait_for(driver, lambda d: feed.reads >= 1, message="Quad reads the feed")
        assert shown(driver)[morning] == ("08:00", "Scheduled", False)
        assert shown(driver)[back] == ("08:00", "Scheduled", False)

        # The operator says the morning bus leaves Clayton 3 minutes late and cancels the 08:00 from Caulfield: the
        # open page shows both within one read (and the redraw after it), without being reloaded.
        feed.trips = [delayed("morning", wednesday, 1, 180), cancelled("back", wednesday)]
        said = time.monotonic()
        wait_for(
            driver,
            lambda d: shown(d).get(morning, ("",))[0] == "08:03" and shown(d).get(back, ("", "", False))[2],
            timeout=EVERY + 6,
            message="the delay and the cancellation reach the open page",
        )
        assert time.monotonic() - said <= EVERY + 6
        page = shown(driver)
        assert page[morning] == ("08:03", "Live · 3 min late", False), page
        assert page[back] == ("08:00", "Cancelled", True), page
        # The delay carries on to the morning bus's next stop (the station, 08:10 → 08:13).
        station = f"morning-hs-{gtfs_feed.yyyymmdd(wednesday)}-0810"
        assert page[station] == ("08:13", "Live · 3 min late", False), page
        # The API says it too: the time expected, and the run cancelled.
        listed = {stop["id"]: stop for stop in http_request(server.url + "/api/departures").json()["departures"]}
        assert listed[morning]["live"] is True
        expected = dt.datetime.fromisoformat(listed[morning]["expectedAt"].replace("Z", "+00:00"))
        assert expected.astimezone(MELBOURNE).strftime("%H:%M") == "08:03"
        assert listed[back]["cancelled"] is True and "cancelled" not in listed[morning]
        axe.assert_clean(driver, "timetable with a delay and a cancellation")

        # The feed stops answering: once its last data is too old to believe, every shuttle reads "Scheduled" again,
        # at its scheduled time, on the page left open.
        feed.down = True
        stopped = time.monotonic()
        wait_for(
            driver,
            lambda d: (
                shown(d).get(morning) == ("08:00", "Scheduled", False)
                and shown(d).get(back) == ("08:00", "Scheduled", False)
            ),
            timeout=STALE_AFTER + EVERY + 4,
            message="the shuttles read Scheduled once the feed is stale",
        )
        assert time.monotonic() - stopped <= STALE_AFTER + EVERY + 4
        assert "cancelled" not in http_request(server.url + "/api/departures").json()["departures"][0]
        log = server.log()
        assert log.count("The GTFS-Realtime feed cannot be read") == 1, "said once, not at every read"
        assert "trip-updates.pb" not in log, "the feed's address (which may hold a key) is never logged"

        # It answers again: live within one read.
        feed.down = False
        wait_for(
            driver,
            lambda d: shown(d).get(morning, ("",))[0] == "08:03",
            timeout=EVERY + 6,
            message="live again once the feed answers",
        )
        assert "The GTFS-Realtime feed answers again" in server.log()
    finally:
        feed.close()
