"""Metrics (issue 39): after a person has used Quad in a browser (signed in, looked at rooms, booked), a scrape of
`/metrics` passes `promtool check metrics` (Debian's `prometheus` package), from the address the operator names; from
anywhere else it is refused."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from conftest import DESKTOP, melbourne
from helpers import sign_in_as
from test_waiting import api, at


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool (apt-get install prometheus)")
def test_a_scrape_after_a_browser_session_passes_promtool(quad_server_factory, new_browser):
    server = quad_server_factory(demo=True, now=melbourne("10:00", "weekday"), env={"QUAD_METRICS_FROM": "127.0.0.1"})
    driver = new_browser(DESKTOP)
    sign_in_as(driver, server, "Maya Patel", "/rooms")
    for path in ("/rooms/yana", "/", "/specials", "/library", "/timetable", "/rooms"):
        driver.get(server.url + path)
    before = server.request("/metrics").text
    assert (
        api(
            server, "Maya Patel", "/api/rooms/yana/bookings", "POST", {"start": at(server, "10:30"), "minutes": 30}
        ).status
        == 201
    )

    scrape = server.request("/metrics")
    assert scrape.status == 200, scrape.text
    booked = 'quad_http_requests_total{operation="bookRoom",status="201"} '
    assert booked not in before and booked + "1" in scrape.text
    assert "quad_http_request_duration_seconds_bucket{" in scrape.text
    checked = subprocess.run(["promtool", "check", "metrics"], input=scrape.text, capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout + checked.stderr == "", "promtool's lint says nothing"

    # The same request through a proxy Quad does not trust, naming another client, is still from 127.0.0.1: only
    # an address the operator names, or the token, reads them.
    other = quad_server_factory(env={"QUAD_METRICS_FROM": "10.1.2.3"})
    assert other.request("/metrics").status == 403
