"""Mail, as a person meets it: they give their address on their account page, a link comes to it through a real SMTP
server (aiosmtpd, e2e/smtp_sink.py), and following it on another device, signed in to nothing, makes it theirs."""

from __future__ import annotations

import json
import sqlite3
import urllib.parse

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from conftest import MAIL_PUBLIC_URL as PUBLIC_URL
from conftest import PHONE, mail_settings, melbourne, wait_until
from helpers import account_token, bearer, give_address, sign_in, text_of, wait_for


@pytest.fixture
def server(quad_server_factory, sink):
    return quad_server_factory(
        demo=True,
        now=melbourne("10:00", "weekday"),
        env=mail_settings(sink.port),
    )


def fits(driver) -> bool:
    return driver.execute_script("return document.documentElement.scrollWidth <= window.innerWidth")


def test_an_address_given_in_french_is_confirmed_from_the_link_on_a_phone(server, sink, new_browser, axe):
    kier = new_browser(width=PHONE, lang="fr")
    sign_in(kier, server, "kier", next_path="/account")
    assert "Quad n’a pas votre adresse" in text_of(kier, "#mail-in-use")
    assert fits(kier)
    axe.assert_clean(kier, "/account with the mail form, in French, on a phone")

    # A wrong address is said next to the field, what was typed kept.
    field = kier.find_element(By.ID, "mail-address")
    field.send_keys("kier at home")
    kier.execute_script("arguments[0].type = 'text'", field)  # past the browser's own check: the server's is shown
    field.submit()
    wait_for(kier, lambda d: d.find_elements(By.ID, "mail-address-error"), message="no error for a wrong address")
    assert kier.find_element(By.ID, "mail-address").get_attribute("aria-invalid") == "true"
    assert kier.find_element(By.ID, "mail-address").get_attribute("value") == "kier at home"
    assert text_of(kier, "#mail-address-error") == "Donnez une adresse e-mail comme ada@example.org."
    assert sink.messages() == []

    field = kier.find_element(By.ID, "mail-address")
    field.clear()
    field.send_keys("kier@example.org")
    Select(kier.find_element(By.ID, "mail-language")).select_by_value("fr")
    field.submit()
    wait_for(kier, lambda d: d.find_elements(By.ID, "mail-pending"), message="the page did not say a link was sent")
    assert "Un lien part vers l’adresse que vous avez donnée" in text_of(kier, "#account-notice")
    assert "kier@example.org" in text_of(kier, "#mail-pending")

    wait_until(lambda: len(sink.messages()) == 1, timeout=15, message="the link did not reach the relay")
    message = sink.messages()[0]
    assert message["rcpt_tos"] == ["kier@example.org"]
    assert message["subject"] == "Confirmez votre adresse pour Quad"
    assert message["defects"] == []
    text = next(part["body"] for part in message["parts"] if part["type"] == "text/plain")
    link = next(line for line in text.splitlines() if line.startswith(PUBLIC_URL + "/account/email/confirm?token="))

    # Opened on another device, signed in to nothing (behind the operator's proxy, the public address is this server).
    phone = new_browser(width=PHONE, lang="fr")
    phone.get(server.url + link.removeprefix(PUBLIC_URL))
    assert "kier@example.org" in text_of(phone, "main")
    assert fits(phone)
    axe.assert_clean(phone, "the link's page, in French, on a phone")
    phone.find_element(By.CSS_SELECTOR, "main form button[type=submit]").click()
    wait_for(phone, lambda d: d.find_elements(By.ID, "mail-confirmed"), message="the address was not confirmed")
    assert "Votre adresse est confirmée" in text_of(phone, "#mail-confirmed")
    assert urllib.parse.urlsplit(phone.current_url).query == "done=confirmed"

    kier.get(server.url + "/account")
    assert "Les e-mails vont à kier@example.org." in text_of(kier, "#mail-in-use")
    # The link works once.
    phone.get(server.url + link.removeprefix(PUBLIC_URL))
    assert "Ce lien ne fonctionne plus" in text_of(phone, "#mail-link-over")


def test_one_click_from_a_real_message_stops_that_kind_with_no_sign_in(server, sink):
    """The List-Unsubscribe header of a message as it reached the relay, followed as a mail client does (RFC 8058:
    a POST of `List-Unsubscribe=One-Click`, no cookie, no sign-in): offers stop; the next one is made, not mailed."""
    give_address(server, "kier")
    kier = bearer(server, "kier")
    lender = {"Authorization": f"Bearer {account_token(server, 'Ada Lender')}", "Content-Type": "application/json"}

    def offer_a_book(title: str) -> None:
        """Ada has the book, Kier waits for it, Ada brings it back: it is held for Kier."""
        created = server.request(
            "/api/books",
            "POST",
            {"Content-Type": "application/json"},
            json.dumps({"title": title, "author": "A. Writer"}).encode(),
            admin=True,
        )
        assert created.status == 201, created.text
        book = created.json()["id"]
        assert server.request(f"/api/books/{book}/checkout", "POST", lender, b"{}").status == 200
        assert server.request(f"/api/books/{book}/holds", "POST", kier).status == 201
        assert server.request(f"/api/books/{book}/return", "POST", lender).status == 200

    offer_a_book("The First Copy")
    wait_until(lambda: len(sink.messages()) == 1, timeout=15, message="the offer did not reach the relay")
    headers = sink.messages()[0]["headers"]
    assert headers["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    link = headers["List-Unsubscribe"].strip("<>")
    assert link.startswith(PUBLIC_URL + "/api/mail/unsubscribe?token=")

    # The mail client's POST, to this server behind the public address: nothing but the link and its body.
    stopped = server.request(
        link.removeprefix(PUBLIC_URL),
        "POST",
        {"Content-Type": "application/x-www-form-urlencoded"},
        b"List-Unsubscribe=One-Click",
    )
    assert stopped.status == 200, stopped.text
    assert stopped.json() == {"choice": "offers", "on": False}

    # The next book held for Kier is his to take, and no message goes.
    offer_a_book("The Second Copy")
    offers = server.request("/api/me/notifications", headers=kier).json()["offers"]
    assert sorted(offer["label"] for offer in offers) == ["The First Copy", "The Second Copy"]

    def kiers() -> tuple[int, int]:
        """Kier's messages in the outbox: all, and those not yet written or sent."""
        with sqlite3.connect(f"file:{server.workdir / 'quad.sqlite'}?mode=ro", uri=True) as database:
            return database.execute(
                "SELECT COUNT(*), COUNT(*) FILTER (WHERE state = 'pending') FROM mail_outbox WHERE owner = 'kier'"
            ).fetchone()

    # Queued with the hold, then dropped by the courier as it comes to write it: Kier turned offers off.
    wait_until(lambda: kiers()[1] == 0, timeout=15, message="the courier left a message pending")
    assert kiers() == (1, 0)
    assert len(sink.messages()) == 1
