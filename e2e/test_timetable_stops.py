"""The stops a student uses (issue 40): on their timetable a student ticks the stops of the operator's feed they take
the shuttle from; their shuttles are then listed first there and on Today. In the demo, Clayton campus has two stops
(the bus loop, "Clayton", Kier's, and the halls) and buses come back from Caulfield: Kier moves to Caulfield, and Today
follows."""

from __future__ import annotations

from conftest import PHONE
from helpers import by_css, one, sign_in, wait_for
from test_timetable import demo_at


def today_shuttles(driver) -> list[str]:
    return [e.text for e in by_css(driver, "#today-shuttles .today-title")]


def timetable_shuttles(driver) -> list[str]:
    return [e.text for e in by_css(driver, "#stop-list li.stop .stop-route")]


def test_a_student_changes_their_stops_and_today_follows(quad_server_factory, new_browser, axe):
    server = demo_at(quad_server_factory, "08:30")
    driver = new_browser(width=PHONE)
    sign_in(driver, server, "kier", next_path="/")
    # Kier takes the bus from Clayton's bus loop: Today's shuttles are from there.
    shuttles = wait_for(driver, today_shuttles, message="Today lists no shuttles")
    assert all(title.startswith("Clayton → ") for title in shuttles), shuttles

    # One tap to the timetable: the stops of the feed, Kier's ticked, each a 44 px target.
    one(driver, "nav a[href='/timetable']").click()
    wait_for(driver, lambda d: by_css(d, "#stops-form"))
    choices = {
        label.text: label.find_element("css selector", "input").is_selected()
        for label in by_css(driver, "#stops-form label.check")
    }
    assert choices == {"Caulfield": False, "Clayton": True, "Clayton – Halls": False}, choices
    assert all(label.size["height"] >= 44 for label in by_css(driver, "#stops-form label.check"))
    assert all(title.startswith("Clayton → ") for title in timetable_shuttles(driver))

    # Kier now studies at Caulfield: two ticks and Save (three taps).
    for name in ("Clayton", "Caulfield"):
        label = next(label for label in by_css(driver, "#stops-form label.check") if label.text == name)
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", label)
        label.click()
    one(driver, "#stops-form button[type=submit]").click()
    wait_for(driver, lambda d: d.current_url.endswith("/timetable?stops=saved#stops"))
    assert one(driver, "#stops [role=status]").text == "Your stops are saved: their shuttles come first."
    shown = timetable_shuttles(driver)
    assert shown and all(title == "Caulfield → Clayton" for title in shown), shown
    axe.assert_clean(driver, "timetable with the student's stops")

    # Today follows: the shuttles back from Caulfield come first.
    one(driver, "nav a[href='/']").click()
    wait_for(driver, lambda d: today_shuttles(d) and today_shuttles(d)[0] == "Caulfield → Clayton")
    assert all(title == "Caulfield → Clayton" for title in today_shuttles(driver))
