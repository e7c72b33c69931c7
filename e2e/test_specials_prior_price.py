"""A special's reduction against the lowest price of the 30 days before it (issue 40; EU Directive 2019/2161, Art. 6a):
orange juice at $2.00, then $1.50 for ten days, then $1.80; a special at $1.20 shows "lowest 30-day price $1.50" and
saves $0.30, and the manager's form says, as they type, when a special is not below that price. The days pass by
restarting the server later on its clock (the data stays)."""

from __future__ import annotations

import datetime as dt
import json

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from conftest import DESKTOP, PHONE
from helpers import sign_in, wait_for
from test_specials import preview_text

ADMIN_JSON = {"Content-Type": "application/json"}


def test_a_special_is_measured_from_the_lowest_price_of_the_last_30_days(quad_server_factory, new_browser, axe):
    server = quad_server_factory()

    def write(method: str, path: str, body: dict) -> dict:
        response = server.request(path, method, ADMIN_JSON, json.dumps(body).encode(), admin=True)
        assert response.status in (200, 201), response.text
        return response.json()

    juice = write(
        "POST",
        "/api/specials",
        {"display_name": "Orange juice 1.5 L", "width": 16, "height": 12, "original_price": "2.00", "price": "2.00"},
    )["id"]
    server.restart(now=server.now() + dt.timedelta(days=20))
    write("PATCH", f"/api/specials/{juice}", {"original_price": "1.50", "price": "1.50"})
    server.restart(now=server.now() + dt.timedelta(days=10))
    write("PATCH", f"/api/specials/{juice}", {"original_price": "1.80", "price": "1.80"})
    server.restart(now=server.now() + dt.timedelta(days=3))

    driver = new_browser(width=DESKTOP)
    sign_in(driver, server, "admin", next_path=f"/admin/specials/{juice}")
    price = driver.find_element(By.NAME, "price")

    def type_price(text: str) -> None:
        price.clear()
        price.send_keys(text)

    # $1.60 is below the regular $1.80 but not below $1.50: the form says so, and the tile shows no saving.
    type_price("1.60")
    note = wait_for(
        driver,
        lambda d: d.execute_script("const e = document.getElementById('preview-reference'); return e && e.textContent"),
        message="the form does not say the special is not below the 30-day price",
    )
    assert note == (
        "Not below the lowest price of the last 30 days ($1.50): the special shows no struck price and no saving."
    )
    assert preview_text(driver, ".special-original") is None and preview_text(driver, ".special-savings") is None

    # $1.20: measured from $1.50, said as such.
    type_price("1.20")
    wait_for(driver, lambda d: preview_text(d, ".special-savings") == "Save $0.30", message="no saving of $0.30")
    assert preview_text(driver, ".special-original") == "$1.50"
    assert preview_text(driver, ".special-lowest") == "lowest 30-day price $1.50"
    assert preview_text(driver, ".special-unit") == "$0.80/L"
    assert not driver.find_elements(By.ID, "preview-reference")
    # The bottle is in fact 2 litres: the quantity the manager gives wins over the name's.
    quantity = driver.find_element(By.NAME, "quantity")
    quantity.send_keys("2 l")
    wait_for(driver, lambda d: preview_text(d, ".special-unit") == "$0.60/L", message="the quantity given is not used")
    axe.assert_clean(driver, "the special's form with its preview")

    driver.find_element(By.CSS_SELECTOR, "#special-form button[type=submit]").click()
    wait_for(driver, lambda d: "/admin/specials" in d.current_url and "done" in d.current_url)
    # The shopper's tile and the API say the same.
    driver.get(server.url + "/specials")
    tile = wait_for(driver, lambda d: d.find_elements(By.CSS_SELECTOR, ".special-tile"))[0]
    assert tile.get_attribute("aria-label") == (
        "Orange juice 1.5 L, lowest 30-day price $1.50, now $1.20, save $0.30 (20%), $0.60/L"
    )
    assert tile.find_element(By.CSS_SELECTOR, ".special-lowest").text == "lowest 30-day price $1.50"
    listed = json.loads(server.request("/api/specials").text)["managerSpecials"][0]
    assert (listed["original_price"], listed["price"], listed["quantity"]) == ("1.50", "1.20", "2 L")


def test_a_product_had_before_goes_on_special_again_against_its_prices(quad_server_factory, new_browser, axe):
    """The juice's special is taken down; the manager, on a phone, puts the product on special again by picking it:
    its name, regular price and quantity fill in, and the reduction is measured from its own prices."""
    server = quad_server_factory()

    def write(method: str, path: str, body: dict | None = None) -> dict:
        data = json.dumps(body).encode() if body is not None else None
        response = server.request(path, method, ADMIN_JSON, data, admin=True)
        assert response.status in (200, 201, 204), response.text
        return response.json() if response.status != 204 else {}

    juice = write(
        "POST",
        "/api/specials",
        {
            "display_name": "Orange juice",
            "quantity": "1.5 L",
            "width": 8,
            "height": 8,
            "original_price": "2.00",
            "price": "2.00",
        },
    )
    server.restart(now=server.now() + dt.timedelta(days=20))
    write("PATCH", f"/api/specials/{juice['id']}", {"original_price": "1.50", "price": "1.50"})
    server.restart(now=server.now() + dt.timedelta(days=10))
    write("PATCH", f"/api/specials/{juice['id']}", {"original_price": "1.80", "price": "1.80"})
    write("DELETE", f"/api/specials/{juice['id']}")
    server.restart(now=server.now() + dt.timedelta(days=3))

    driver = new_browser(width=PHONE)
    sign_in(driver, server, "admin", next_path="/admin/specials/new")
    Select(driver.find_element(By.ID, "f-product")).select_by_value(juice["product_id"])
    assert driver.find_element(By.NAME, "display_name").get_attribute("value") == "Orange juice"
    assert driver.find_element(By.NAME, "original_price").get_attribute("value") == "1.80"
    assert driver.find_element(By.NAME, "quantity").get_attribute("value") == "1.5 L"
    driver.find_element(By.NAME, "price").send_keys("1.20")
    wait_for(driver, lambda d: preview_text(d, ".special-savings") == "Save $0.30", message="no saving of $0.30")
    assert preview_text(driver, ".special-lowest") == "lowest 30-day price $1.50"
    assert driver.execute_script("return document.documentElement.scrollWidth") <= PHONE
    axe.assert_clean(driver, "the special's form with a product picked")

    save = driver.find_element(By.CSS_SELECTOR, "#special-form button[type=submit]")
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", save)  # a scroll, not a tap
    save.click()
    wait_for(driver, lambda d: "/admin/specials" in d.current_url and "done=added" in d.current_url)
    listed = json.loads(server.request("/api/specials").text)["managerSpecials"][0]
    assert listed["product_id"] == juice["product_id"]
    assert (listed["display_name"], listed["original_price"], listed["price"]) == ("Orange juice", "1.50", "1.20")
