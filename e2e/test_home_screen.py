"""Quad on a home screen (issue 18): installable (manifest, icons, theme colours, Chromium's own installability
check), a phone layout like the apps it replaces (a compact top bar, a tab bar at the bottom), writes that wait
offline with a reason, and a sign-out that leaves nothing of the person in the browser's caches, offline too.
"""

import struct

import pytest
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.keys import Keys

from conftest import DESKTOP, PHONE, http_request
from helpers import account_token, by_css, one, set_offline, shown, sign_in, sign_in_as, text_of, wait_for

# The tab bar: the home (a signed-in person's Today) and the four services.
TABS = ["/", "/rooms", "/specials", "/library", "/timetable"]


def png_size(body: bytes) -> tuple[int, int]:
    """A PNG's width and height, from its header (fails on anything that is not a PNG)."""
    assert body[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return struct.unpack(">II", body[16:24])


def go_offline(driver, server) -> None:
    """Offline for real: the browser says so (navigator.onLine, the pages' banners) and the server is gone, for the
    service worker too (DevTools' offline switch reaches the page, not the worker, which would fetch anew)."""
    server.stop()
    set_offline(driver, True)


def controlled(driver) -> bool:
    return driver.execute_script("return !!(navigator.serviceWorker && navigator.serviceWorker.controller)")


# --- Installable ------------------------------------------------------------------------------------------


def test_the_manifest_and_icons_make_quad_installable(quad_server, browser):
    browser.get(quad_server.url + "/")
    href = one(browser, 'link[rel="manifest"]').get_attribute("href")
    response = http_request(href)
    assert response.status == 200 and response.content_type.startswith("application/manifest+json")
    manifest = response.json()
    assert manifest["name"] == "Quad" and manifest["short_name"] == "Quad"
    assert (manifest["display"], manifest["start_url"], manifest["scope"]) == ("standalone", "/", "/")
    dark = manifest["user_preferences"]["color_scheme"]["dark"]
    assert manifest["theme_color"] != dark["theme_color"]
    assert manifest["background_color"] != dark["background_color"]

    # Every icon is reachable and is the size it claims; one can be masked to any shape.
    purposes = set()
    for icon in manifest["icons"]:
        body = http_request(quad_server.url + icon["src"])
        assert body.status == 200 and body.content_type == "image/png", icon
        width, height = png_size(body.body)
        assert f"{width}x{height}" == icon["sizes"], icon
        purposes.add((icon["purpose"], icon["sizes"]))
    assert {("any", "192x192"), ("any", "512x512"), ("maskable", "512x512")} <= purposes
    touch = http_request(one(browser, 'link[rel="apple-touch-icon"]').get_attribute("href"))
    assert touch.status == 200 and png_size(touch.body) == (180, 180)

    # A bar colour for each scheme, and what iOS reads for a web app on its home screen.
    themes = {
        meta.get_attribute("media"): meta.get_attribute("content")
        for meta in by_css(browser, 'meta[name="theme-color"]')
    }
    assert set(themes) == {"(prefers-color-scheme: light)", "(prefers-color-scheme: dark)"}
    assert len(set(themes.values())) == 2
    assert themes["(prefers-color-scheme: light)"] == manifest["theme_color"]
    assert themes["(prefers-color-scheme: dark)"] == dark["theme_color"]
    assert one(browser, 'meta[name="apple-mobile-web-app-capable"]').get_attribute("content") == "yes"
    assert one(browser, 'meta[name="apple-mobile-web-app-title"]').get_attribute("content") == "Quad"
    assert "viewport-fit=cover" in one(browser, 'meta[name="viewport"]').get_attribute("content")

    # Chromium's own verdict: the manifest parses without a complaint, and nothing stops installing.
    assert browser.execute_cdp_cmd("Page.getAppManifest", {}).get("errors") == []
    wait_for(browser, controlled, message="no service worker controls the page")
    errors = lambda: browser.execute_cdp_cmd("Page.getInstallabilityErrors", {})["installabilityErrors"]  # noqa: E731
    try:
        wait_for(browser, lambda d: errors() == [])
    except TimeoutException:
        pytest.fail(f"Chromium reports installability errors: {errors()}", pytrace=False)


# --- A phone that looks like an app -----------------------------------------------------------------------


def tab_bar(driver) -> dict:
    return driver.execute_script(
        """
        const nav = document.querySelector('header nav.services');
        const r = nav.getBoundingClientRect();
        const tabs = Array.from(nav.querySelectorAll('a')).map(a => {
          const t = a.getBoundingClientRect();
          return {href: a.getAttribute('href'), current: a.getAttribute('aria-current'), width: t.width,
                  height: t.height, name: a.textContent.trim(),
                  icon: getComputedStyle(a.querySelector('svg')).display !== 'none'};
        });
        return {position: getComputedStyle(nav).position, top: r.top, bottom: r.bottom,
                background: getComputedStyle(nav).backgroundColor, innerHeight: window.innerHeight, tabs,
                header: document.querySelector('header.site-header').getBoundingClientRect().height,
                scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth};
        """
    )


def test_a_phone_gets_a_compact_top_bar_and_a_tab_bar(quad_server, new_browser):
    driver = new_browser(width=PHONE, height=844)
    driver.get(quad_server.url + "/rooms")
    bar = tab_bar(driver)
    assert bar["header"] <= 56, f"the top bar is {bar['header']:.0f} px high"
    assert bar["position"] == "fixed" and abs(bar["bottom"] - bar["innerHeight"]) <= 1, bar
    alpha = driver.execute_script(
        "const c = document.createElement('canvas').getContext('2d'); c.fillStyle = arguments[0];"
        "c.fillRect(0, 0, 1, 1); return c.getImageData(0, 0, 1, 1).data[3];",
        bar["background"],
    )
    assert 0 < alpha < 255, f"the tab bar is not translucent: {bar['background']}"
    assert [tab["href"] for tab in bar["tabs"]] == TABS
    assert [tab["name"] for tab in bar["tabs"]] == ["Home", "Rooms", "Specials", "Library", "Timetable"]
    assert all(tab["icon"] and tab["width"] >= 44 and tab["height"] >= 44 for tab in bar["tabs"]), bar["tabs"]
    assert [tab["current"] for tab in bar["tabs"]] == [None, "page", None, None, None]
    # One action in the bar; the languages are at the page's end.
    assert not shown(driver, "header nav.languages") and shown(driver, "footer nav.languages")
    assert bar["scrollWidth"] <= bar["innerWidth"]

    # By keyboard: Tab reaches the Library tab, Enter opens it, and the bar says it is current.
    for _ in range(12):
        ActionChains(driver).send_keys(Keys.TAB).perform()
        if driver.execute_script("return document.activeElement.getAttribute('href')") == "/library":
            break
    else:
        pytest.fail("Tab never reached the Library tab")
    ActionChains(driver).send_keys(Keys.ENTER).perform()
    wait_for(driver, lambda d: d.current_url.endswith("/library"), message="Enter did not open the Library")
    assert [tab["current"] for tab in tab_bar(driver)["tabs"]] == [None, None, None, "page", None]


def test_tablets_and_desktops_keep_the_top_navigation(quad_server, new_browser):
    for width in (768, DESKTOP):
        driver = new_browser(width=width)
        driver.get(quad_server.url + "/specials")
        bar = tab_bar(driver)
        assert bar["position"] == "static" and bar["bottom"] <= bar["header"] + 1, f"{width}px: {bar}"
        assert not any(tab["icon"] for tab in bar["tabs"]), f"{width}px: tab icons shown"
        assert shown(driver, "header nav.languages") and not shown(driver, "footer.site-footer")


@pytest.mark.parametrize("lang", ["en", "fr"])
def test_the_tab_bar_changes_rather_than_clips_with_200_percent_text(quad_server, new_browser, lang):
    driver = new_browser(width=PHONE, height=844, font_size=32, lang=lang)
    driver.get(quad_server.url + "/timetable")
    bar = tab_bar(driver)
    assert bar["scrollWidth"] <= bar["innerWidth"], "the page scrolls sideways"
    assert bar["position"] == "fixed" and all(t["width"] >= 44 and t["height"] >= 44 for t in bar["tabs"])
    # Names no longer fit side by side: the tabs show their pictures, and still say their names.
    names = {"en": "Timetable", "fr": "Emploi du temps"}
    assert bar["tabs"][4]["name"] == names[lang] and bar["tabs"][4]["current"] == "page"
    clipped = driver.execute_script(
        "return Array.from(document.querySelectorAll('.tab-label'))"
        ".filter(l => l.getClientRects().length && l.getBoundingClientRect().width > 1"
        " && l.scrollWidth > l.clientWidth + 1).map(l => l.textContent)"
    )
    assert clipped == []


def test_the_phone_layout_is_accessible_in_both_themes(quad_server, new_browser, set_color_scheme, axe):
    for scheme in ("light", "dark"):
        driver = new_browser(width=PHONE, height=844)
        set_color_scheme(driver, scheme)
        driver.get(quad_server.url + "/rooms")
        axe.assert_clean(driver, f"phone, {scheme}, tab bar")


# --- Offline: writes wait, with a reason -----------------------------------------------------------------


def enabled_writes(driver) -> list[str]:
    """The buttons in <main> that would send a form now, and the links to a form that are not marked waiting."""
    return driver.execute_script(
        "return Array.from(document.querySelectorAll("
        "'main form[method=post] button:not([type=button]), main a[data-write]'))"
        ".filter(e => !e.disabled && e.getAttribute('aria-disabled') !== 'true')"
        ".map(e => e.outerHTML.slice(0, 100))"
    )


def test_offline_a_page_never_opened_here_says_so(quad_server_factory, new_browser):
    server = quad_server_factory()
    driver = new_browser(width=PHONE, height=844, lang="fr")
    driver.get(server.url + "/")
    wait_for(driver, controlled, message="no service worker controls the page")
    go_offline(driver, server)
    driver.get(server.url + "/library")
    assert text_of(driver, "h1") == "Pas encore sur cet appareil"
    assert driver.current_url.endswith("/library")
    assert shown(driver, "header nav.services"), "no tab bar to go elsewhere"


def test_offline_the_library_holds_every_write_and_says_why(quad_server_factory, browser):
    server = quad_server_factory(demo=True)
    sign_in_as(browser, server, "Ada Lovelace", next_path="/library")
    book = server.request("/api/books?q=Sapiens").json()[0]["id"]
    browser.get(f"{server.url}/library/books/{book}")
    wait_for(browser, lambda d: controlled(d), message="no service worker")
    assert enabled_writes(browser), "the page has no write to hold: the test would prove nothing"
    set_offline(browser, True)
    try:
        wait_for(browser, lambda d: shown(d, "#library-offline"), message="no offline banner")
        assert "wait until you are back online" in text_of(browser, "#library-offline")
        wait_for(browser, lambda d: enabled_writes(d) == [], message=f"writes still enabled: {enabled_writes(browser)}")
        assert "library-offline" in one(browser, "#library-add").get_attribute("aria-describedby")
        # A held link goes nowhere.
        one(browser, "#library-add").click()
        assert browser.current_url.endswith(f"/library/books/{book}")
    finally:
        set_offline(browser, False)
    wait_for(browser, lambda d: not shown(d, "#library-offline"), message="still offline")
    wait_for(browser, lambda d: enabled_writes(d), message="writes not given back online")
    assert one(browser, "#library-add").get_attribute("aria-describedby") is None


@pytest.mark.parametrize("service", ["today", "rooms", "specials", "library", "timetable"])
def test_each_service_opens_offline_after_one_visit_and_says_how_old_it_is(quad_server_factory, browser, service):
    server = quad_server_factory(demo=True)
    path = "/" if service == "today" else f"/{service}"
    sign_in(browser, server, "kier", next_path=path)
    wait_for(browser, controlled, message="no service worker controls the page")
    browser.get(server.url + path)  # through the worker, which keeps a copy
    heading = text_of(browser, "h1")
    go_offline(browser, server)
    browser.get(server.url + path)
    wait_for(browser, lambda d: shown(d, f"#{service}-offline"), message="the page does not say it is offline")
    assert text_of(browser, "h1") == heading
    assert text_of(browser, f"#{service}-updated").startswith("Updated"), "the page does not say how old it is"
    wait_for(browser, lambda d: enabled_writes(d) == [], message=f"writes still enabled: {enabled_writes(browser)}")


def test_a_slow_refresh_says_it_is_updating(quad_server_factory, browser):
    server = quad_server_factory(demo=True)
    browser.get(server.url + "/library")
    # The next fetch waits until the test lets it go; the browser coming back online asks for one.
    browser.execute_script(
        """
        const real = window.fetch;
        window.fetch = (...args) => new Promise((resolve) => { window.__release = () => resolve(real(...args)); });
        window.dispatchEvent(new Event('online'));
        """
    )
    wait_for(browser, lambda d: text_of(d, "#library-updated") == "Updating…", message="no loading state")
    assert one(browser, "#library-panes").get_attribute("aria-busy") == "true"
    browser.execute_script("window.__release()")
    wait_for(browser, lambda d: text_of(d, "#library-updated") == "Updated just now", message="still loading")
    assert one(browser, "#library-panes").get_attribute("aria-busy") is None


def test_offline_a_page_without_a_live_part_says_so_and_holds_its_forms(quad_server, browser):
    account_token(quad_server, "Grace Hopper")
    sign_in_as(browser, quad_server, "Grace Hopper", next_path="/account")
    assert enabled_writes(browser)
    set_offline(browser, True)
    try:
        wait_for(browser, lambda d: shown(d, "#shell-offline"), message="no offline banner")
        assert enabled_writes(browser) == []
    finally:
        set_offline(browser, False)
    wait_for(browser, lambda d: not shown(d, "#shell-offline") and enabled_writes(d), message="not given back")


# --- Signing out on a shared device ---------------------------------------------------------------------

CACHED_TEXTS = """
const done = arguments[arguments.length - 1];
(async () => {
  const found = [];
  for (const name of await caches.keys()) {
    const cache = await caches.open(name);
    for (const request of await cache.keys()) {
      const text = await (await cache.match(request)).text();
      if (text.includes(arguments[0])) found.push(name + ' ' + request.url);
    }
  }
  return found;
})().then(done, (e) => done(['error ' + e]));
"""


def test_after_signing_out_nothing_personal_is_left_even_offline(quad_server_factory, browser):
    server = quad_server_factory(demo=True)
    sign_in(browser, server, "kier", next_path="/timetable")
    wait_for(browser, controlled, message="no service worker controls the page")
    browser.get(server.url + "/timetable")  # now through the worker, which keeps a copy for offline use
    personal = text_of(browser, "#class-list .class-card h3") or text_of(browser, "#class-list .class-card")
    assert personal, "Kier's timetable shows no class: the test would prove nothing"
    browser.set_script_timeout(10)
    wait_for(
        browser,
        lambda d: d.execute_async_script(CACHED_TEXTS, "Kier"),
        message="the worker kept no copy of Kier's page: the test would prove nothing",
    )

    one(browser, "nav.account form[action='/signout'] button").click()
    wait_for(browser, lambda d: by_css(d, "nav.account a[href^='/signin']"), message="not signed out")
    assert browser.execute_async_script(CACHED_TEXTS, "Kier") == []

    # The next person, offline, opens the timetable: nothing of Kier's, only the page that says it is not here.
    # (Signing out removed the service worker with the rest; the home page it lands on installs it anew.)
    wait_for(browser, controlled, timeout=15, message="no service worker again after signing out")
    go_offline(browser, server)
    browser.get(server.url + "/timetable")
    page = browser.page_source
    assert "Kier" not in page and personal not in page
    assert text_of(browser, "h1") == "Not on this device yet"


def test_a_session_the_server_ended_leaves_nothing_personal_kept(quad_server_factory, browser):
    """An admin resets Kier's password (every session of Kier's ends on the server): the next page Kier's browser
    asks for is sent to sign in, and the worker drops every page it kept, Kier's among them."""
    server = quad_server_factory(demo=True)
    sign_in(browser, server, "kier", next_path="/timetable")
    wait_for(browser, controlled, message="no service worker controls the page")
    browser.get(server.url + "/timetable")
    browser.set_script_timeout(10)
    wait_for(
        browser,
        lambda d: d.execute_async_script(CACHED_TEXTS, "Kier"),
        message="the worker kept no copy of Kier's page: the test would prove nothing",
    )
    reset = server.request(
        "/api/people/kier",
        method="PATCH",
        admin=True,
        headers={"Content-Type": "application/json"},
        data=b'{"password": "a-new-password-for-kier"}',
    )
    assert reset.status == 200, reset.text
    browser.get(server.url + "/notifications")
    wait_for(browser, lambda d: "/signin" in d.current_url, message="the ended session still opened a page")
    wait_for(
        browser,
        lambda d: d.execute_async_script(CACHED_TEXTS, "Kier") == [],
        message="the worker still keeps Kier's pages",
    )
