"""What the browser tests share: finding things in a page and waiting for them, accounts and signing in,
and a browser's clock.

Pages
    by_css, one, text_of, shown      the elements a CSS selector finds, the first one, its text, rendered?
    wait_for(driver, condition)      waits (deadline, never a fixed sleep) until condition(driver) is truthy
    wait_replaced(driver, element)   waits until `element` has left the document (a form's page gave way to the next)
    set_offline(driver, offline)     the page's network off or on (DevTools; it does not reach the service worker)

Accounts
    add_person(server, username, password, role=...)   an account made by the admin, through the API
    give_address(server, username, address)             a person's mail address, set by the admin
    password_of(server, username)    a demo person's password (or the admin's), as the server announced it
    session_token / bearer           an API session for someone, as a token / as an Authorization header
    account_token(server, person)    an account for `person` ("Ada Lovelace"), made once per server; its token
    sign_in(driver, server, username, password=None, next_path="/")   the sign-in form, as a person fills it
    sign_in_as(driver, server, person, next_path)                     account_token, then sign_in

Administration
    admin_form(server, path, fields)  one of the admin's forms (`/admin/...`), sent as the admin with its CSRF token
    set_campus(server, semester_start=None, breaks="")   the campus in Melbourne, its semester and breaks
    quad_login(quad_binary, server, config)         the `quad` CLI signed in as the admin: its environment

Clock
    follow_clock(driver, server)     the browser's clock reads the server's clock (a device set right)
    advance_page_clock(driver, s)    the open page's clock moves on `s` seconds at once
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import socket
import struct
import subprocess
import urllib.parse
import zlib
from zoneinfo import ZoneInfo

from conftest import QuadServer, wait_until

# --- Pages ------------------------------------------------------------------------------------------


def by_css(driver, selector):
    """Every element `selector` finds (in a page, or inside an element)."""
    from selenium.webdriver.common.by import By

    return driver.find_elements(By.CSS_SELECTOR, selector)


def one(driver, selector):
    """The first element `selector` finds (NoSuchElementException when none)."""
    from selenium.webdriver.common.by import By

    return driver.find_element(By.CSS_SELECTOR, selector)


def text_of(driver, selector) -> str:
    """textContent, trimmed and with runs of white space as one space ('' when absent)."""
    return driver.execute_script(
        "const e = document.querySelector(arguments[0]);return e ? e.textContent.replace(/\\s+/g, ' ').trim() : '';",
        selector,
    )


def shown(driver, selector) -> bool:
    """The first element matching `selector` exists and is rendered."""
    return driver.execute_script(
        "const e = document.querySelector(arguments[0]);"
        "return !!e && e.getClientRects().length > 0 && getComputedStyle(e).visibility !== 'hidden';",
        selector,
    )


def wait_for(driver, condition, timeout: float = 10, message: str = ""):
    """Waits until condition(driver) is truthy and returns it; fails after `timeout` seconds.

    Stale elements are expected while waiting (pages redraw their lists), so they count as "not yet"; so does
    Chromium's "Node with given id does not belong to the document", its answer about a node of a page being
    replaced (after a form's submission) while the next one loads."""
    from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
    from selenium.webdriver.support.ui import WebDriverWait

    def attempt(d):
        try:
            return condition(d)
        except StaleElementReferenceException:
            raise
        except WebDriverException as error:
            if "does not belong to the document" in (error.msg or ""):
                return False
            raise

    return WebDriverWait(
        driver, timeout, poll_frequency=0.1, ignored_exceptions=(StaleElementReferenceException,)
    ).until(attempt, message)


def wait_replaced(driver, element, timeout: float = 10) -> None:
    """Waits until `element` is no longer in the document, as after a form's submission loads the next page.

    While the old page is being torn down, Chromium can answer a question about one of its nodes with "Node with
    given id does not belong to the document" instead of a stale reference: that, too, means it has gone."""
    from selenium.common.exceptions import StaleElementReferenceException, WebDriverException

    def gone(_driver) -> bool:
        try:
            element.is_enabled()
        except StaleElementReferenceException:
            return True
        except WebDriverException as error:
            if "does not belong to the document" in (error.msg or ""):
                return True
            raise
        return False

    wait_for(driver, gone, timeout, message="the element is still in the page")


def confirm_cancel(driver, scope: str):
    """Cancels the booking shown in `scope` as a person does: Cancel, then the button of the question it opens (a
    cancel asks once). Returns that button."""
    one(driver, f"{scope} .cancel-one summary").click()
    button = wait_for(
        driver,
        lambda d: [b for b in by_css(d, f"{scope} .cancel-one button[type=submit]") if b.is_displayed()],
        message=f"{scope}: Cancel did not ask",
    )[0]
    button.click()
    return button


def set_offline(driver, offline: bool) -> None:
    """Turns the page's network off or on, as DevTools does: navigator.onLine and the online/offline events follow.
    The service worker is another target and keeps its network: to be unreachable for it too, stop the server."""
    driver.execute_cdp_cmd("Network.enable", {})
    driver.execute_cdp_cmd(
        "Network.emulateNetworkConditions",
        {"offline": offline, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1},
    )


# --- Accounts ---------------------------------------------------------------------------------------

PASSWORD = "correct-horse-battery-staple"  # for the accounts account_token makes


def add_person(
    server: QuadServer,
    username: str,
    password: str,
    role: str = "member",
    display: str | None = None,
    allow_existing: bool = False,
) -> None:
    """Creates an account as the admin, through the API."""
    body = json.dumps(
        {"username": username, "displayName": display or username.title(), "password": password, "role": role}
    ).encode()
    response = server.request("/api/people", "POST", {"Content-Type": "application/json"}, body, admin=True)
    expected = (201, 409) if allow_existing else (201,)
    assert response.status in expected, f"creating {username}: {response.status} {response.text}"


def give_address(server: QuadServer, username: str, address: str | None = None) -> None:
    """Gives `username` a mail address (`username@example.org` unless one is given) as the admin, through the API."""
    body = json.dumps({"email": address or f"{username}@example.org"}).encode()
    response = server.request(
        f"/api/people/{username}", "PATCH", {"Content-Type": "application/json"}, body, admin=True
    )
    assert response.status == 200, response.text


FORM_CSRF = "e2e-csrf-token-0123456789abcdefghijklmnop"


def admin_form(server: QuadServer, path: str, fields: dict[str, str]) -> None:
    """Sends one of the admin's forms (`/admin/timetable/campus`) as the admin, with its CSRF token."""
    response = server.request(
        path,
        "POST",
        {"Content-Type": "application/x-www-form-urlencoded", "Cookie": f"quad_csrf={FORM_CSRF}"},
        urllib.parse.urlencode({"csrf": FORM_CSRF, **fields}).encode(),
        admin=True,
    )
    assert response.status in (200, 303), response.text


def set_campus(server: QuadServer, semester_start: dt.date | None = None, breaks: str = "") -> None:
    """The campus Clayton in Melbourne's time zone, its 12-week semester from `semester_start` (four weeks before the
    server's today there unless given), and its breaks (the form's lines: "Show day; 2026-10-22; 2026-10-22")."""
    today = server.now().astimezone(ZoneInfo("Australia/Melbourne")).date()
    fields = {
        "name": "Clayton",
        "timeZone": "Australia/Melbourne",
        "semesterStart": (semester_start or today - dt.timedelta(weeks=4)).isoformat(),
        "teachingWeeks": "12",
        "breaks": breaks,
    }
    admin_form(server, "/admin/timetable/campus", fields)


def quad_login(quad_binary, server: QuadServer, config) -> dict:
    """Signs the `quad` command line in to `server` as the admin, its settings in the folder `config`: the
    environment to run its commands in."""
    environment = dict(os.environ, QUAD_CONFIG_DIR=str(config), QUAD_SERVER=server.url)
    login = subprocess.run(
        [str(quad_binary), "login", "--username", "admin", "--password-stdin"],
        input=password_of(server, "admin") + "\n",
        capture_output=True,
        text=True,
        env=environment,
        timeout=60,
    )
    assert login.returncode == 0, login.stderr
    return environment


def set_building_rules(server: QuadServer, building: str, rules: dict) -> None:
    """Sets a building's booking rules (hours, horizon, longest, check-in) as the admin, through the API."""
    response = server.request(
        f"/api/buildings/{urllib.parse.quote(building)}",
        method="PUT",
        headers={"Content-Type": "application/json"},
        data=json.dumps(rules).encode(),
        admin=True,
    )
    assert response.status == 200, response.text


def my_bookings(server: QuadServer, person: str) -> list:
    """`person`'s bookings, as `GET /api/me/bookings` lists them."""
    headers = {"Authorization": f"Bearer {account_token(server, person)}"}
    return server.request("/api/me/bookings", headers=headers).json()["bookings"]


def password_of(server: QuadServer, username: str) -> str:
    """The password of a demo person, or of the admin account, from the lines the server printed once.

    Waits for the line: the server's log writer writes it on a thread of its own, which a busy machine may run only
    after the server already answers GET /health (seen once in a run of the whole suite)."""
    if username == "admin":
        pattern = re.compile(r"username admin, password (\S+)")
    else:
        pattern = re.compile(rf"^\s*{re.escape(username)} \(\w+\): (\S+)$", re.MULTILINE)
    found = wait_until(
        lambda: pattern.search(server.log()),
        message=f"the server did not announce {username}'s password (demo people's passwords are shown once)",
    )
    return found.group(1)


def session_token(server: QuadServer, username: str, password: str | None = None) -> str:
    """Signs `username` in through the API (a demo person's announced password unless one is given)."""
    body = json.dumps({"username": username, "password": password or password_of(server, username)}).encode()
    response = server.request("/api/sessions", "POST", {"Content-Type": "application/json"}, body)
    assert response.status in (200, 201), f"signing in {username}: {response.status} {response.text}"
    return response.json()["token"]


def bearer(server: QuadServer, username: str, password: str | None = None) -> dict:
    """An Authorization header for an API session of `username`."""
    return {"Authorization": "Bearer " + session_token(server, username, password)}


def account_token(server: QuadServer, person: str) -> str:
    """Creates an account for `person` ("Ada Lovelace", as the admin) once per server, and signs it in through
    the API: the session's token."""
    tokens = server.__dict__.setdefault("person_tokens", {})
    if person not in tokens:
        username = person_username(person)
        add_person(server, username, PASSWORD, display=person, allow_existing=True)
        tokens[person] = session_token(server, username, PASSWORD)
    return tokens[person]


def person_username(person: str) -> str:
    """The username account_token gives `person`: "Ada Lovelace" -> "ada-lovelace"."""
    return re.sub(r"[^a-z0-9]+", "-", person.lower()).strip("-").ljust(3, "x")[:32]


def sign_in(
    driver, server: QuadServer, username: str, password: str | None = None, next_path: str = "/", wait: bool = True
) -> None:
    """Fills in and sends the sign-in form (a demo person's announced password unless one is given). With `wait`,
    returns once the browser is on `next_path`, loaded; else right after sending (a test that expects a refusal).

    The browser's clock follows the server's (see follow_clock)."""
    from selenium.webdriver.common.by import By

    follow_clock(driver, server)
    driver.get(f"{server.url}/signin?next={urllib.parse.quote(next_path, safe='/')}")
    driver.find_element(By.ID, "username").send_keys(username)
    driver.find_element(By.ID, "password").send_keys(password or password_of(server, username))
    driver.find_element(By.CSS_SELECTOR, "form.stacked-form button[type=submit]").click()
    if not wait:
        return
    # (The sign-in page's own address, /signin?next=..., names the next page too: compare paths.)
    target = urllib.parse.urlsplit(next_path).path
    wait_for(
        driver,
        lambda d: (
            urllib.parse.urlsplit(d.current_url).path == target
            and d.execute_script("return document.readyState") == "complete"
        ),
        timeout=15,
        message=f"signing in as {username} did not reach {next_path} (at {driver.current_url})",
    )


def sign_in_as(driver, server: QuadServer, person: str, next_path: str = "/") -> None:
    """Signs the browser in as `person` (an account made once by account_token) through the sign-in form."""
    account_token(server, person)
    sign_in(driver, server, person_username(person), PASSWORD, next_path)


# --- Clock ------------------------------------------------------------------------------------------

# Runs before the page's own scripts: Date (Date.now(), new Date()) reads this machine's clock shifted by
# window.__e2eClock.shift milliseconds. Timers (setTimeout) are not touched.
_CLOCK_SCRIPT = """
(() => {
  const RealDate = Date;
  const realNow = RealDate.now.bind(RealDate);
  const clock = window.__e2eClock = {shift: %d};
  const now = () => realNow() + clock.shift;
  const ShiftedDate = new Proxy(RealDate, {
    construct: (target, args, newTarget) =>
      Reflect.construct(target, args.length ? args : [now()], newTarget === ShiftedDate ? target : newTarget),
    apply: () => new RealDate(now()).toString(),
    get: (target, key) => key === "now" ? now : Reflect.get(target, key, target),
  });
  Object.defineProperty(window, "Date", {value: ShiftedDate, writable: true, configurable: true});
})();
"""


def follow_clock(driver, server: QuadServer, error: dt.timedelta = dt.timedelta(0)) -> None:
    """From the next page loaded on, the browser's clock reads the server's clock (as a device set right does),
    plus `error` for a device set wrong. The server runs on a testing clock, often far from this machine's."""
    shift = round((server.clock_offset() + error.total_seconds()) * 1000)
    installed = getattr(driver, "_quad_clock", None)
    if installed and installed[1] == shift:
        return
    if installed:
        driver.execute_cdp_cmd("Page.removeScriptToEvaluateOnNewDocument", {"identifier": installed[0]})
    added = driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": _CLOCK_SCRIPT % shift})
    driver._quad_clock = (added["identifier"], shift)


def advance_page_clock(driver, seconds: float) -> None:
    """Moves the open page's clock (Date) on by `seconds` at once: what the page would see that much later,
    without waiting for it. Needs a page loaded after follow_clock."""
    assert getattr(driver, "_quad_clock", None), "call follow_clock before loading the page"
    assert driver.execute_script("return !!window.__e2eClock"), "the page was loaded before follow_clock"
    driver.execute_script("window.__e2eClock.shift += arguments[0]", round(seconds * 1000))


def png(seed: int = 0, width: int = 1, height: int = 1) -> bytes:
    """A small whole PNG, its colour from `seed` (so each seed is other bytes); its IHDR may claim any size,
    the pixels being one row's worth (Quad reads the header and the chunks, not the pixels)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(bytes([0, seed % 256, (seed // 256) % 256, 90])))
        + chunk(b"IEND", b"")
    )


def open_stream(server: QuadServer, path: str = "/api/events") -> tuple[socket.socket, int]:
    """GET /api/events on a socket of its own; returns it and the answer's status once its status line has come."""
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n".encode())
    head = b""
    while b"\r\n" not in head:
        chunk = sock.recv(4096)
        assert chunk, "the server closed the stream before answering"
        head += chunk
    return sock, int(head.split(b" ", 2)[1])
