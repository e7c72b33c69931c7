"""Every page as each kind of person sees it (signed out, a member, a student with a timetable, an admin), at 320,
390, 768 and 1280 px, in English and in French: nothing scrolls sideways, and axe finds no serious violation, in
light and in dark.

One load per page, person and language: the other widths are the same page laid out again (the window resized, as a
phone turned). Axe runs twice per page: at 390 px and at 1280 px, one in light and one in dark (English and French
take them the other way round, so each language is checked in both).
"""

import pytest

from conftest import emulate_color_scheme, melbourne
from helpers import sign_in, sign_in_as, wait_for

WIDTHS = [320, 390, 768, 1280]
HEIGHT = 900

EVERYONE = [
    "/",
    "/rooms",
    "/rooms?start=13:00&minutes=60&people=6",
    "/rooms/mostafa",
    "/rooms/mostafa?start=13:00",
    "/rooms-timeline",
    "/rooms/mostafa/check-in",
    "/specials",
    "/library",
    "/library/books/1",
    "/timetable",
    "/timetable/week",
    "/offline",
]
SIGNED_OUT = EVERYONE + [
    "/signin",
    "/signup",
    "/signin/forgot",
    "/signin/reset?token=over",
    "/account/email/confirm?token=over",
    "/mail/unsubscribe?token=over",
]
MEMBER = EVERYONE + ["/notifications", "/account", "/account/password", "/account/app-links", "/library/new"]
ADMIN = MEMBER + [
    "/admin",
    "/admin/people",
    "/admin/people/kier/mail",
    "/admin/rooms",
    "/admin/rooms/new",
    "/admin/rooms/mostafa",
    "/admin/specials",
    "/admin/specials/new",
    "/admin/specials/settings",
    "/admin/timetable",
    "/admin/waiting",
    "/admin/records",
    "/admin/audit",
]
PEOPLE = {"signed out": SIGNED_OUT, "member": MEMBER, "student": MEMBER, "admin": ADMIN}


@pytest.fixture
def campus(quad_server_factory):
    """The demo campus on a Tuesday at noon: rooms open, a student's week, the specials."""
    return quad_server_factory(demo=True, now=melbourne("12:00", day="tuesday"))


def resize(driver, width: int) -> None:
    """Lays the page out again at `width` (Chromium does so before the next script runs)."""
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": HEIGHT, "deviceScaleFactor": 1, "mobile": width < 600},
    )


@pytest.mark.parametrize("lang", ["en", "fr"])
@pytest.mark.parametrize("person", list(PEOPLE))
def test_every_page_fits_every_width_and_is_accessible(campus, new_browser, axe, person, lang):
    driver = new_browser(width=390, lang=lang, height=HEIGHT)
    if person == "member":
        sign_in_as(driver, campus, "Mia")
    elif person == "student":
        sign_in(driver, campus, "kier")
    elif person == "admin":
        sign_in(driver, campus, "admin")
    schemes = {390: "light", 1280: "dark"} if lang == "en" else {390: "dark", 1280: "light"}
    wide = []
    for path in PEOPLE[person]:
        driver.get(campus.url + path)
        wait_for(driver, lambda d: d.execute_script("return document.readyState") == "complete", message=path)
        for width in WIDTHS:
            resize(driver, width)
            # Wider than the window less its scroll bar (desktops draw one): it scrolls sideways.
            inner, scroll, client = driver.execute_script(
                "const e = document.documentElement; return [innerWidth, e.scrollWidth, e.clientWidth]"
            )
            if inner != width or scroll > client:
                wide.append(f"{path} at {width}: {scroll}px in {client}px")
            if width in schemes:
                emulate_color_scheme(driver, schemes[width])
                axe.assert_clean(driver, f"{path}, {person}, {lang}, {width}px, {schemes[width]}")
    assert not wide, f"pages that scroll sideways ({person}, {lang}): {wide}"
