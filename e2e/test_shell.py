"""The web shell: the home page `/` every feature hangs off.

Each test starts a fresh browser (own cookies, own service worker) against the session's server.
"""

import re

import pytest

from conftest import DESKTOP, PHONE, TABLET, http_request
from helpers import by_css, wait_for

WELCOME = {"en": "Welcome to Quad", "fr": "Bienvenue sur Quad"}
LANGUAGE_NAV_LABEL = {"en": "Language", "fr": "Langue"}


def html_lang(driver) -> str:
    return driver.execute_script("return document.documentElement.getAttribute('lang')")


def background_rgb(driver) -> tuple[str, tuple[int, int, int, int]]:
    """The body's computed background colour, as written and as RGBA (any CSS colour syntax)."""
    css, rgba = driver.execute_script(
        """
        const css = getComputedStyle(document.body).backgroundColor;
        const ctx = document.createElement('canvas').getContext('2d');
        ctx.fillStyle = css;
        ctx.fillRect(0, 0, 1, 1);
        return [css, Array.from(ctx.getImageData(0, 0, 1, 1).data)];
        """
    )
    return css, tuple(rgba)


# --- Language ---------------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["en", "fr"])
def test_page_speaks_the_browsers_language(quad_server, new_browser, lang):
    driver = new_browser(lang=lang)
    driver.get(quad_server.url + "/")

    assert html_lang(driver) == lang
    headings = by_css(driver, "h1")
    assert len(headings) == 1, f"expected exactly one <h1>, found {len(headings)}"
    assert headings[0].text.strip() == WELCOME[lang]


@pytest.mark.parametrize("lang", ["en", "fr"])
def test_header_has_services_and_language_navigation(quad_server, new_browser, lang):
    driver = new_browser(lang=lang)
    driver.get(quad_server.url + "/")

    assert by_css(driver, 'header nav[aria-label="Services"]'), "no <nav aria-label=Services> in <header>"
    label = LANGUAGE_NAV_LABEL[lang]
    language_navs = by_css(driver, f'header nav[aria-label="{label}"]')
    assert language_navs, f'no <nav aria-label="{label}"> in <header>'
    nav = language_navs[0]
    english = by_css(nav, 'a[hreflang="en"]')
    french = by_css(nav, 'a[hreflang="fr"]')
    assert english and english[0].text.strip() == "English"
    assert french and french[0].text.strip() == "Français"


def test_choosing_french_sticks_across_page_loads(quad_server, browser):
    browser.get(quad_server.url + "/")
    assert html_lang(browser) == "en"

    french = by_css(browser, 'header a[hreflang="fr"]')
    assert french, "no French link in the header"
    french[0].click()
    wait_for(browser, lambda d: html_lang(d) == "fr", message="page did not switch to French")
    assert by_css(browser, "h1")[0].text.strip() == WELCOME["fr"]

    # The browser still asks for English, but the choice is remembered.
    browser.get(quad_server.url + "/")
    assert html_lang(browser) == "fr"
    assert by_css(browser, "h1")[0].text.strip() == WELCOME["fr"]

    # And the way back.
    by_css(browser, 'header a[hreflang="en"]')[0].click()
    wait_for(browser, lambda d: html_lang(d) == "en", message="page did not switch back to English")
    browser.get(quad_server.url + "/")
    assert by_css(browser, "h1")[0].text.strip() == WELCOME["en"]


# --- Keyboard -----------------------------------------------------------------------------


def test_first_tab_reaches_skip_link_to_main(quad_server, browser):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    browser.get(quad_server.url + "/")
    ActionChains(browser).send_keys(Keys.TAB).perform()

    focused = browser.execute_script(
        "const e = document.activeElement;"
        "return e && {tag: e.tagName, cls: e.className, href: e.getAttribute('href'), text: e.textContent.trim()};"
    )
    assert focused and focused["tag"] == "A" and "skip-link" in focused["cls"].split(), (
        f"first Tab focused {focused}, expected a.skip-link"
    )
    assert focused["href"] == "#main"
    assert by_css(browser, "main#main"), "no <main id=main> for the skip link to land on"


# --- Theme --------------------------------------------------------------------------------


def test_background_follows_light_and_dark_preference(quad_server, browser, set_color_scheme):
    colours = {}
    for scheme in ("light", "dark"):
        set_color_scheme(browser, scheme)
        browser.get(quad_server.url + "/")
        assert browser.execute_script(f"return matchMedia('(prefers-color-scheme: {scheme})').matches")
        colours[scheme] = background_rgb(browser)

    (light_css, light), (dark_css, dark) = colours["light"], colours["dark"]
    assert light[3] > 0 and dark[3] > 0, f"body has a transparent background: light {light_css}, dark {dark_css}"
    assert light != dark, f"same background in light and dark: {light_css}"
    assert sum(dark[:3]) < 200, f"dark background is not dark: {dark_css}"
    assert sum(light[:3]) > 500, f"light background is not light: {light_css}"


# --- Layout -------------------------------------------------------------------------------

SMALL_TARGETS_JS = """
return Array.from(document.querySelectorAll('header a, header button'))
    .filter(e => !e.classList.contains('skip-link'))        // off-screen until focused
    .filter(e => e.getClientRects().length > 0 && getComputedStyle(e).visibility !== 'hidden')
    .map(e => ({html: e.outerHTML.slice(0, 120), r: e.getBoundingClientRect()}))
    .filter(t => t.r.width < 44 || t.r.height < 44)
    .map(t => `${Math.round(t.r.width)}x${Math.round(t.r.height)} ${t.html}`);
"""


@pytest.mark.parametrize("width", [PHONE, TABLET, DESKTOP], ids=["phone", "tablet", "desktop"])
def test_layout_fits_the_screen_with_big_enough_targets(quad_server, new_browser, width):
    driver = new_browser(width=width)
    driver.get(quad_server.url + "/")

    inner, scroll = driver.execute_script("return [window.innerWidth, document.documentElement.scrollWidth]")
    assert inner == width, (
        f"on a {width}px screen the page lays out {inner}px wide: "
        "content overflows, or <meta name=viewport content=width=device-width> is missing"
    )
    assert scroll <= inner, f"page scrolls sideways at {width}px: content is {scroll}px wide"

    small = driver.execute_script(SMALL_TARGETS_JS)
    assert not small, f"header targets smaller than 44x44 px at {width}px:\n" + "\n".join(small)


def test_text_follows_browser_font_size(quad_server, new_browser):
    # At phone width: breakpoints written in rem/em move with the default font size, so at a
    # desktop width 16 px and 32 px text can legitimately land in different layouts.
    sizes = {}
    for default_size in (16, 32):
        driver = new_browser(width=PHONE, font_size=default_size)
        driver.get(quad_server.url + "/")
        css = driver.execute_script(
            "return [getComputedStyle(document.documentElement).fontSize,"
            " getComputedStyle(document.querySelector('h1')).fontSize]"
        )
        sizes[default_size] = [float(re.match(r"([\d.]+)px", v).group(1)) for v in css]

    (root16, h1_16), (root32, h1_32) = sizes[16], sizes[32]
    assert abs(root32 - 2 * root16) <= 1, f"root font size is {root16}px at 16px and {root32}px at 32px"
    assert abs(h1_32 - 2 * h1_16) <= 1, f"h1 is {h1_16}px at the default 16px and {h1_32}px at 32px: it should double"


# --- Offline ------------------------------------------------------------------------------


def test_service_worker_is_registered(quad_server, browser):
    from selenium.common.exceptions import TimeoutException

    browser.get(quad_server.url + "/")
    browser.set_script_timeout(10)
    try:
        registration = browser.execute_async_script(
            """
            const done = arguments[arguments.length - 1];
            if (!('serviceWorker' in navigator)) { done({error: 'no navigator.serviceWorker'}); return; }
            navigator.serviceWorker.ready.then(
                r => done({scope: r.scope, script: r.active ? r.active.scriptURL : null}),
                e => done({error: String(e)}));
            """
        )
    except TimeoutException:
        pytest.fail("no service worker became active within 10 s", pytrace=False)

    assert "error" not in registration, registration["error"]
    assert registration["script"] and registration["script"].endswith("/sw.js"), registration


# --- Accessibility ------------------------------------------------------------------------


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("width", [PHONE, DESKTOP], ids=["phone", "desktop"])
def test_no_serious_accessibility_violations(quad_server, new_browser, set_color_scheme, axe, width, scheme):
    driver = new_browser(width=width)
    set_color_scheme(driver, scheme)
    driver.get(quad_server.url + "/")

    axe.assert_clean(driver, f"{width}px, {scheme}")


# --- Plain HTTP ---------------------------------------------------------------------------


def test_health_answers_ok(quad_server):
    response = http_request(quad_server.url + "/health")

    assert response.status == 200
    assert response.content_type.split(";")[0].strip() == "application/json"
    assert response.json().get("status") == "ok"


def test_unknown_api_path_answers_problem_json(quad_server):
    response = http_request(quad_server.url + "/api/does-not-exist")

    assert response.status == 404
    assert response.content_type.split(";")[0].strip() == "application/problem+json"
    problem = response.json()
    assert problem.get("status") == 404
    assert isinstance(problem.get("title"), str) and problem["title"]
