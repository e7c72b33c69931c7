"""Import and export on `/admin/records` and with `quad export` (issue 39), as an admin drives them: from `/admin`, a
file with rows at fault is refused with each row and column named and nothing applied, the corrected file is applied,
and the same file again changes nothing; the download is the API's export. At a phone's width, in French too, nothing
scrolls sideways and axe finds nothing serious, the errors' table included. Everyone's bookings export as one
calendar that the `icalendar` package reads."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
from pathlib import Path

import icalendar
import pytest
from selenium.webdriver.common.by import By

from conftest import MELBOURNE, PHONE, http_request, melbourne
from helpers import bearer, one, quad_login, sign_in, wait_for, wait_replaced

BAD = "title,author,isbn\r\nA field guide to moss,Ana Brandt,\r\n,Nobody,\r\nUnlucky,Someone,9780307887895\r\n"
GOOD = "title,author,isbn\r\nA field guide to moss,Ana Brandt,\r\nLichens,Ana Brandt,9780307887894\r\n"


def books(server) -> list[str]:
    answer = http_request(server.url + "/api/books", headers={"Authorization": f"Bearer {server.admin_token}"})
    return sorted(book["title"] for book in answer.json())


def send(driver, file: Path) -> None:
    driver.find_element(By.ID, "records-books-file").send_keys(str(file))
    button = one(driver, "#records-books form button[type=submit]")
    # (Into the middle of the screen: at its foot, a phone's tab bar covers it.)
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", button)
    page = driver.find_element(By.TAG_NAME, "html")
    button.click()
    # The page before it may be the import's answer too: wait for the new answer to replace it first.
    wait_replaced(driver, page)
    wait_for(
        driver,
        lambda d: (
            d.execute_script("return document.readyState") == "complete" and "/admin/records/books" in d.current_url
        ),
        message="the import's answer",
    )


def fits(driver) -> bool:
    return driver.execute_script("const e = document.documentElement; return e.scrollWidth <= e.clientWidth")


@pytest.mark.parametrize("lang", ["en", "fr"])
def test_an_admin_imports_books_from_a_file_all_or_nothing(quad_server_factory, new_browser, axe, tmp_path, lang):
    server = quad_server_factory(demo=True)
    before = books(server)
    driver = new_browser(width=PHONE, lang=lang)
    sign_in(driver, server, "admin", next_path="/admin")
    one(driver, 'a[href="/admin/records"]').click()
    wait_for(driver, lambda d: d.current_url.endswith("/admin/records"), message="the import page")
    download = one(driver, "#records-books-download").get_attribute("href")
    exported = http_request(
        download.replace("/admin/records/books.csv", "/api/records/books"),
        headers={"Authorization": f"Bearer {server.admin_token}"},
    )
    assert exported.text.startswith("id,title,author,publisher,categories,isbn\r\n")

    (tmp_path / "bad.csv").write_text(BAD)
    send(driver, tmp_path / "bad.csv")
    rows = [
        [cell.text for cell in row.find_elements(By.CSS_SELECTOR, "td")]
        for row in driver.find_elements(By.CSS_SELECTOR, "#records-books-errors tbody tr")
    ]
    assert [row[:2] for row in rows] == [["3", "title"], ["4", "isbn"]]
    assert books(server) == before, "a refused file changed the books"
    assert fits(driver)
    axe.assert_clean(driver, f"the import's errors ({lang})")

    (tmp_path / "good.csv").write_text(GOOD)
    send(driver, tmp_path / "good.csv")
    done = one(driver, "#records-books-applied").text
    assert ("2 added" in done) if lang == "en" else ("2 ajouts" in done)
    assert books(server) == sorted(before + ["A field guide to moss", "Lichens"])
    send(driver, tmp_path / "good.csv")
    again = one(driver, "#records-books-applied").text
    assert ("0 added, 0 changed, 2 unchanged" in again) if lang == "en" else ("2 lignes inchangées" in again)
    assert fits(driver)
    axe.assert_clean(driver, f"the import's summary ({lang})")


def test_a_member_is_refused_the_page(quad_server_factory, new_browser):
    server = quad_server_factory(demo=True)
    driver = new_browser(width=PHONE)
    sign_in(driver, server, "ada")
    driver.get(server.url + "/admin/records")
    wait_for(driver, lambda d: d.execute_script("return document.readyState") == "complete", message="the page")
    assert not driver.find_elements(By.CSS_SELECTOR, "input[type=file]"), "a member was shown the import form"
    answer = http_request(server.url + "/api/records/people", headers=bearer(server, "ada"))
    assert answer.status == 403


def test_everyones_bookings_export_as_one_calendar(quad_server_factory, quad_binary, tmp_path):
    """`quad export bookings`: an admin's calendar of every booking, read back by the `icalendar` package: each
    event at its time on the campus clock, saying whose it is."""
    server = quad_server_factory(demo=True, now=melbourne("09:00", "weekday"))
    day = (server.now().astimezone(MELBOURNE) + dt.timedelta(days=1)).date()
    start = dt.datetime(day.year, day.month, day.day, 11, tzinfo=MELBOURNE)
    body = json.dumps({"start": start.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"), "minutes": 45}).encode()
    booked = http_request(
        server.url + "/api/rooms/helmold/bookings",
        method="POST",
        headers=dict(bearer(server, "ada"), **{"Content-Type": "application/json"}),
        data=body,
    )
    assert booked.status == 201, booked.text

    environment = quad_login(quad_binary, server, tmp_path / "config")
    exported = subprocess.run(
        [str(quad_binary), "export", "bookings"], capture_output=True, env=environment, timeout=60
    )
    assert exported.returncode == 0, exported.stderr
    calendar = icalendar.Calendar.from_ical(exported.stdout)
    events = [event for event in calendar.walk("VEVENT") if "Ada Lovelace" in str(event["SUMMARY"])]
    assert [str(event["SUMMARY"]) for event in events] == ["Helmold · Ada Lovelace"]
    assert events[0].decoded("DTSTART") == start
    assert events[0].decoded("DURATION") == dt.timedelta(minutes=45)
    # Nothing to import back: it is an export.
    refused = http_request(
        server.url + "/api/records/bookings",
        method="PUT",
        headers={"Authorization": f"Bearer {server.admin_token}", "Content-Type": "text/csv"},
        data=b"x\r\n",
    )
    assert refused.status == 404
