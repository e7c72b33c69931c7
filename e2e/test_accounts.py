"""Accounts as people meet them: signing in and out in the browser, the admin's people page,
CSRF refusals and the brute-force lockout."""

from __future__ import annotations

import json

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC

from helpers import add_person, sign_in, wait_for, wait_replaced


@pytest.fixture
def server(quad_server_factory):
    return quad_server_factory(demo=True)


def test_sign_in_and_out_in_the_browser(server, browser):
    add_person(server, "lin", "correct horse battery", display="Lin Wu")
    sign_in(browser, server, "lin", "wrong password!!", wait=False)
    error = wait_for(browser, EC.visibility_of_element_located((By.ID, "signin-error")))
    assert "not right" in error.text
    assert browser.find_element(By.ID, "username").get_attribute("value") == "lin", "what was typed is kept"
    assert browser.find_element(By.ID, "password").get_attribute("value") == "", "never the password"

    browser.find_element(By.ID, "password").send_keys("correct horse battery")
    browser.find_element(By.CSS_SELECTOR, "form.stacked-form button[type=submit]").click()
    wait_for(browser, EC.text_to_be_present_in_element((By.CSS_SELECTOR, "nav.account"), "Lin Wu"))
    cookie = browser.get_cookie("quad_session")
    assert cookie and cookie["httpOnly"] and cookie.get("sameSite") == "Lax"

    browser.find_element(By.CSS_SELECTOR, "nav.account form[action='/signout'] button").click()
    wait_for(browser, EC.presence_of_element_located((By.CSS_SELECTOR, "nav.account a[href^='/signin']")))
    assert browser.get_cookie("quad_session") in (None, {}) or not browser.get_cookie("quad_session").get("value")
    # The old session is over on the server too.
    response = server.request("/api/me", headers={"Cookie": f"quad_session={cookie['value']}"})
    assert response.status == 401


def test_a_visitor_is_asked_to_sign_in_to_book_and_comes_back(server, browser):
    add_person(server, "moe", "correct horse battery")
    browser.get(server.url + "/rooms")
    link = browser.find_element(By.CSS_SELECTOR, "#room-ljerka a.sign-in-to-book")
    assert link.get_attribute("textContent").strip().startswith("Sign in to book")
    link.click()
    wait_for(browser, EC.presence_of_element_located((By.ID, "username")))
    browser.find_element(By.ID, "username").send_keys("moe")
    browser.find_element(By.ID, "password").send_keys("correct horse battery")
    browser.find_element(By.CSS_SELECTOR, "form.stacked-form button[type=submit]").click()
    # (The sign-in page's own address, /signin?next=/rooms, contains "/rooms" too.)
    wait_for(browser, lambda d: d.current_url.split("?")[0].endswith("/rooms"))
    assert browser.find_elements(By.CSS_SELECTOR, "#room-ljerka button.book")
    assert browser.find_element(By.ID, "my-bookings")


def test_a_form_without_its_csrf_token_is_refused(server):
    add_person(server, "kai", "correct horse battery")
    response = server.request(
        "/signin",
        "POST",
        {"Content-Type": "application/x-www-form-urlencoded"},
        b"username=kai&password=correct+horse+battery",
    )
    assert response.status == 403
    # With a cookie but a different token: still refused.
    response = server.request(
        "/signin",
        "POST",
        {"Content-Type": "application/x-www-form-urlencoded", "Cookie": "quad_csrf=" + "a" * 43},
        b"csrf=" + b"b" * 43 + b"&username=kai&password=correct+horse+battery",
    )
    assert response.status == 403


def test_failures_make_that_address_wait_before_trying_that_name_again(server):
    """Three wrong passwords for zed from this address, then even the right one waits a few seconds (429 with
    Retry-After); another name from the same address is not held back."""
    add_person(server, "zed", "correct horse battery")
    add_person(server, "yan", "correct horse battery")

    def body(name, password):
        return json.dumps({"username": name, "password": password}).encode()

    for _ in range(3):
        assert (
            server.request(
                "/api/sessions", "POST", {"Content-Type": "application/json"}, body("zed", "nope nope nope")
            ).status
            == 401
        )
    waiting = server.request(
        "/api/sessions", "POST", {"Content-Type": "application/json"}, body("zed", "correct horse battery")
    )
    assert waiting.status == 429
    assert 0 < int(waiting.headers["retry-after"]) <= 5
    other = server.request(
        "/api/sessions", "POST", {"Content-Type": "application/json"}, body("yan", "correct horse battery")
    )
    assert other.status == 201


def test_the_admin_page_adds_people_with_inline_errors(server, browser):
    add_person(server, "boss", "correct horse battery", role="admin")
    sign_in(browser, server, "boss", "correct horse battery", next_path="/admin/people")
    wait_for(browser, EC.presence_of_element_located((By.ID, "f-username")))
    browser.find_element(By.ID, "f-username").send_keys("newbie")
    browser.find_element(By.ID, "f-displayName").send_keys("New Person")
    browser.find_element(By.ID, "f-password").send_keys("short")
    browser.find_element(By.CSS_SELECTOR, "form[aria-labelledby=add-heading] button[type=submit]").click()
    error = wait_for(browser, EC.visibility_of_element_located((By.ID, "f-password-error")))
    assert "at least 10 characters" in error.text
    assert browser.find_element(By.ID, "f-username").get_attribute("value") == "newbie"
    assert browser.find_element(By.ID, "f-displayName").get_attribute("value") == "New Person"
    assert browser.find_element(By.ID, "f-password").get_attribute("aria-invalid") == "true"

    browser.find_element(By.ID, "f-password").send_keys("long enough now")
    browser.find_element(By.CSS_SELECTOR, "form[aria-labelledby=add-heading] button[type=submit]").click()
    wait_for(browser, EC.presence_of_element_located((By.ID, "person-newbie")))
    assert "New Person" in browser.find_element(By.ID, "people-notice").text

    # Reset shows a new password once; it works for signing in.
    added = browser.find_element(By.ID, "people-notice")
    browser.find_element(By.CSS_SELECTOR, "form[action='/admin/people/newbie/password'] button").click()
    # The notice of the page before (the person added) goes with it: read the new page's.
    wait_replaced(browser, added)
    notice = wait_for(browser, EC.visibility_of_element_located((By.ID, "people-notice"))).text
    password = notice.rsplit(" ", 1)[-1]
    ok = server.request(
        "/api/sessions",
        "POST",
        {"Content-Type": "application/json"},
        json.dumps({"username": "newbie", "password": password}).encode(),
    )
    assert ok.status == 201


def test_members_cannot_open_the_admin_page(server, browser):
    add_person(server, "pat", "correct horse battery")
    sign_in(browser, server, "pat", "correct horse battery", next_path="/admin/people")
    wait_for(browser, EC.presence_of_element_located((By.TAG_NAME, "h1")))
    assert "/admin/people" in browser.current_url
    assert not browser.find_elements(By.ID, "f-username")
    response = server.request("/admin/people", headers={"Accept": "text/html"})
    assert response.status in (303, 302) or "signin" in response.text


def test_passwords_never_reach_the_log(server):
    add_person(server, "sam", "my very secret pass")
    server.request(
        "/api/sessions",
        "POST",
        {"Content-Type": "application/json"},
        json.dumps({"username": "sam", "password": "my very secret pass"}).encode(),
    )
    server.request(
        "/api/sessions",
        "POST",
        {"Content-Type": "application/json"},
        json.dumps({"username": "sam", "password": "wrong secret pass"}).encode(),
    )
    log = server.log()
    assert "my very secret pass" not in log and "wrong secret pass" not in log
    assert server.admin_token not in log


def test_sign_in_page_is_accessible(server, new_browser, axe):
    for width in (390, 1280):
        driver = new_browser(width=width)
        driver.get(server.url + "/signin")
        axe.assert_clean(driver, f"/signin at {width}")


def test_open_sign_up_creates_an_account_and_closed_sign_up_does_not_exist(quad_server_factory, browser):
    closed = quad_server_factory()
    assert closed.request("/signup").status == 404

    server = quad_server_factory(env={"QUAD_SIGNUP": "open"})
    browser.get(server.url + "/signin")
    browser.find_element(By.LINK_TEXT, "Create one").click()
    wait_for(browser, EC.presence_of_element_located((By.ID, "f-username")))
    browser.find_element(By.ID, "f-username").send_keys("newcomer")
    browser.find_element(By.ID, "f-displayName").send_keys("New Comer")
    browser.find_element(By.ID, "f-password").send_keys("long enough password")
    browser.find_element(By.CSS_SELECTOR, "form.stacked-form button[type=submit]").click()
    wait_for(browser, EC.text_to_be_present_in_element((By.CSS_SELECTOR, "nav.account"), "New Comer"))
    me = server.request("/api/me", headers={"Cookie": f"quad_session={browser.get_cookie('quad_session')['value']}"})
    assert me.status == 200 and me.json()["role"] == "member"
