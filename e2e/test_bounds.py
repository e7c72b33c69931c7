"""What Quad promises at its edges, seen from outside: every page keeps the content security policy it is sent
with (no script, style or frame refused in a real Chromium), text from people is shown as text, and event-stream
slots come back when clients leave.
"""

from __future__ import annotations

import json

from conftest import wait_until
from helpers import open_stream, sign_in

PAGES = [
    "/",
    "/rooms",
    "/specials",
    "/specials?fragment=live",
    "/library",
    "/library/books/1",
    "/library/new",
    "/timetable",
    "/account",
    "/admin",
    "/admin/people",
    "/admin/specials",
    "/admin/specials/new",
    "/admin/timetable",
]


def csp_reports(driver) -> list[str]:
    return [
        entry["message"]
        for entry in driver.get_log("browser")
        if "Content Security Policy" in entry["message"] or "Refused to" in entry["message"]
    ]


def test_every_page_keeps_its_content_security_policy(quad_server_factory, browser):
    """An admin opens every page (each script, style, image and form of it runs under the policy the server
    sent): Chromium reports no violation, and each answer carried the policy and nosniff."""
    server = quad_server_factory(demo=True)
    sign_in(browser, server, "admin")
    browser.get_log("browser")  # what signing in logged is not this test's
    for path in PAGES:
        answer = server.request(path)
        assert "frame-ancestors 'none'" in answer.headers.get("content-security-policy", ""), path
        assert answer.headers.get("x-content-type-options") == "nosniff", path
        browser.get(server.url + path)
        wait_until(
            lambda: browser.execute_script("return document.readyState") == "complete", message=f"{path} did not load"
        )
        assert csp_reports(browser) == [], f"{path}: {csp_reports(browser)}"


def test_text_from_people_is_shown_as_text(quad_server_factory, browser):
    """A room named like markup is shown with its name as typed, and adds no element to the page."""
    server = quad_server_factory(demo=True)
    name = '<img src=x onerror="document.title=1">'
    created = server.request(
        "/api/rooms",
        "POST",
        {"Content-Type": "application/json"},
        json.dumps({"name": name, "building": "<b>North</b>", "capacity": 4}).encode(),
        admin=True,
    )
    assert created.status == 201, created.text
    html = server.request("/rooms").text
    assert name not in html and "&lt;img src=x onerror=" in html
    browser.get(server.url + "/rooms")
    wait_until(
        lambda: name in browser.find_element("css selector", "main").text, message="the room's name is not shown"
    )
    assert browser.execute_script("return document.querySelectorAll('main img[src=x], main b').length") == 0
    assert browser.title != "1"


def test_event_streams_give_back_their_slots_when_clients_leave(quad_server_factory):
    """A client may hold 8 streams; once it closes them (its network drops), the server notices at the next
    heartbeat and the client can open 8 again. HEAD requests never hold one."""
    server = quad_server_factory(env={"QUAD_EVENT_HEARTBEAT": "1"})
    for _ in range(12):
        assert server.request("/api/events", "HEAD").status == 200
    streams = [open_stream(server) for _ in range(8)]
    assert [status for _, status in streams] == [200] * 8
    extra, status = open_stream(server)
    assert status == 429
    extra.close()
    for stream, _ in streams:
        stream.close()

    # The streams that get a slot are kept open while waiting (a refused one holds none), so one attempt never
    # takes the slots the next is waiting for, however slowly a loaded server notices the closed ones.
    held = []

    def eight_again() -> bool:
        for _ in range(8 - len(held)):
            stream, status = open_stream(server)
            if status == 200:
                held.append(stream)
            else:
                stream.close()
        return len(held) == 8

    try:
        wait_until(eight_again, timeout=15, interval=1.5, message="the closed streams' slots did not come back")
    finally:
        for stream in held:
            stream.close()
