"""The audit trail (issue 39) as an admin reads it: a role changed on the people page shows on `/admin/audit`, with who
did it and what changed; the filter by who narrows the list; at a phone's width nothing scrolls sideways and axe finds
nothing serious; a member is refused the page."""

from __future__ import annotations

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from conftest import PHONE
from helpers import one, sign_in, wait_for


def loaded(driver) -> bool:
    return driver.execute_script("return document.readyState") == "complete"


@pytest.mark.parametrize("lang", ["en", "fr"])
def test_a_role_changed_on_the_people_page_is_in_the_trail(quad_server_factory, new_browser, axe, lang):
    server = quad_server_factory(demo=True)
    driver = new_browser(width=PHONE, lang=lang)
    sign_in(driver, server, "admin", next_path="/admin/people")
    Select(driver.find_element(By.ID, "role-grace")).select_by_value("admin")
    button = one(driver, "#person-grace form.inline-form button[type=submit]")
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", button)
    button.click()
    wait_for(driver, lambda d: loaded(d) and d.find_elements(By.ID, "people-notice"), message="the change saved")

    driver.get(server.url + "/admin/audit")
    wait_for(driver, loaded, message="the audit trail")
    first = [cell.text for cell in driver.find_elements(By.CSS_SELECTOR, "#audit-entries tbody tr:first-child td")]
    assert first[1] == "admin" and first[3] == "/admin/people/grace", first
    assert "grace: role member → admin" in first[4], first
    assert driver.execute_script("const e = document.documentElement; return e.scrollWidth <= e.clientWidth")
    axe.assert_clean(driver, f"the audit trail ({lang})")

    who = driver.find_element(By.ID, "audit-who")
    who.send_keys("nobody-at-all")
    button = one(driver, ".audit-filters button[type=submit]")
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", button)
    button.click()
    wait_for(driver, lambda d: loaded(d) and "who=nobody-at-all" in d.current_url, message="the filter")
    assert driver.find_elements(By.ID, "audit-empty")
    assert "who=nobody-at-all" in one(driver, "#audit-download").get_attribute("href")


def test_a_member_is_refused_the_trail(quad_server_factory, new_browser):
    server = quad_server_factory(demo=True)
    driver = new_browser(width=PHONE)
    sign_in(driver, server, "ada")
    driver.get(server.url + "/admin/audit")
    wait_for(driver, loaded, message="the page")
    assert not driver.find_elements(By.ID, "audit-entries") and not driver.find_elements(By.ID, "audit-who")
