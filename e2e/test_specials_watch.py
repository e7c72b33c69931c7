"""Watching a product (issue 40): a signed-in shopper taps "Tell me when it's on special" on its page; when the manager
next puts it on special, it leads their Today and a message reaches their address through a real SMTP server
(aiosmtpd, e2e/smtp_sink.py)."""

from __future__ import annotations

import json

from conftest import MAIL_PUBLIC_URL as PUBLIC_URL
from conftest import PHONE, mail_settings, melbourne, wait_until
from helpers import bearer, by_css, give_address, one, sign_in, wait_for


def test_a_watched_product_on_special_leads_today_and_is_mailed(quad_server_factory, sink, new_browser, axe):
    server = quad_server_factory(
        demo=True,
        now=melbourne("10:00", "weekday"),
        env=mail_settings(sink.port),
    )
    give_address(server, "kier")
    listed = json.loads(server.request("/api/specials").text)["managerSpecials"]
    romaine = next(s for s in listed if s["display_name"] == "Organic Romaine Hearts")
    assert romaine["price"] == romaine["original_price"] == "3.92", "at its regular price"

    # One tap on the product's page.
    driver = new_browser(width=PHONE)
    sign_in(driver, server, "kier", next_path=f"/specials/{romaine['id']}")
    one(driver, "#watch button[type=submit]").click()
    wait_for(driver, lambda d: d.current_url.endswith(f"/specials/{romaine['id']}?watch=on#watch"))
    assert one(driver, "#watch [role=status]").text.startswith("You will be told")
    assert one(driver, "#watch button[type=submit]").text == "Stop telling me"
    axe.assert_clean(driver, "a special's page, watched")

    def today_titles() -> list[str]:
        driver.get(server.url + "/")
        return [e.text for e in by_css(driver, "#today-specials .today-title")]

    assert "On special, as you asked: Organic Romaine Hearts" not in today_titles()
    assert sink.messages() == []

    # The manager puts it on special.
    changed = server.request(
        f"/api/specials/{romaine['id']}",
        "PATCH",
        {"Content-Type": "application/json"},
        json.dumps({"price": "2.99"}).encode(),
        admin=True,
    )
    assert changed.status == 200, changed.text
    wait_until(lambda: len(sink.messages()) == 1, timeout=15, message="no message reached the relay")
    message = sink.messages()[0]
    assert "kier@example.org" in message["to"]
    assert message["headers"]["Subject"] == "On special: Organic Romaine Hearts at $2.99"
    assert "lowest 30-day price $3.92, save $0.93" in json.dumps(message)
    assert f"{PUBLIC_URL}/specials/{romaine['id']}" in json.dumps(message)

    titles = wait_for(driver, lambda d: today_titles(), message="Today lists no specials")
    assert titles[0] == "On special, as you asked: Organic Romaine Hearts", titles

    # Kier stops watching and Ada starts: the next time it goes on special, Ada alone is told.
    driver.get(server.url + f"/specials/{romaine['id']}")
    one(driver, "#watch button[type=submit]").click()
    wait_for(driver, lambda d: d.current_url.endswith("?watch=off#watch"))
    assert one(driver, "#watch button[type=submit]").text == "Tell me when it’s on special"
    give_address(server, "ada")
    watched = server.request(
        f"/specials/{romaine['id']}/watch",
        "POST",
        {**bearer(server, "ada"), "Content-Type": "application/x-www-form-urlencoded"},
        b"watch=on",
    )
    assert watched.status in (200, 303), watched.text
    for price in ("3.92", "2.49"):
        server.request(
            f"/api/specials/{romaine['id']}",
            "PATCH",
            {"Content-Type": "application/json"},
            json.dumps({"price": price}).encode(),
            admin=True,
        )
    wait_until(lambda: len(sink.messages()) == 2, timeout=15, message="Ada's message did not reach the relay")
    assert "ada@example.org" in sink.messages()[1]["to"]
    assert [m for m in sink.messages() if "kier@example.org" in m["to"]] == [message]
