"""The Specials mosaic `/specials` in a real browser: exact tile sizes at phone width, the content
rules for narrow tiles, live updates without reload, the manager's pages, and accessibility.

Every test starts a server of its own with the demo data: the 21 products of the original payload,
canvas 16 units.
"""

import json
import urllib.parse

import pytest

from conftest import PHONE
from helpers import add_person, by_css, sign_in, wait_for

# backup.json's tiles, in order: (width, height) in units.
DEMO_SIZES = [
    (16, 8),
    (8, 8),
    (8, 8),
    (14, 4),
    (4, 6),
    (4, 6),
    (4, 6),
    (4, 6),
    (16, 16),
    (16, 16),
    (9, 8),
    (5, 8),
    (3, 3),
    (3, 3),
    (3, 3),
    (3, 4),
    (12, 4),
    (4, 4),
    (5, 5),
    (5, 5),
    (5, 5),
]


@pytest.fixture
def specials_server(quad_server_factory):
    return quad_server_factory(demo=True)


def tile_boxes(driver):
    """Each tile's id, size in units, its box, and what it shows, measured in the page."""
    return driver.execute_script(
        """
        const canvas = document.querySelector('.specials-canvas');
        const rect = canvas.getBoundingClientRect();
        const unit = rect.width / Number(canvas.dataset.canvasUnit);
        const shown = (el) => !!el && el.getClientRects().length > 0 && getComputedStyle(el).display !== 'none';
        return {
          canvas: {left: rect.left, width: rect.width}, unit, viewport: document.documentElement.clientWidth,
          tiles: [...document.querySelectorAll('.special-cell')].map((cell) => {
            const box = cell.getBoundingClientRect();
            const card = cell.querySelector('.special-tile').getBoundingClientRect();
            // What shows of the image, prices and name and does not fit inside the card (cut off).
            const outside = ['.special-image', '.special-prices', '.special-name']
              .map((selector) => cell.querySelector(selector)).filter(shown)
              .filter((el) => {
                const r = el.getBoundingClientRect();
                return r.top < card.top - 1 || r.bottom > card.bottom + 1
                  || r.left < card.left - 1 || r.right > card.right + 1;
              }).map((el) => el.className);
            return {
              id: cell.dataset.id, w: Number(cell.dataset.width), h: Number(cell.dataset.height),
              left: box.left, top: box.top, width: box.width, height: box.height,
              image: shown(cell.querySelector('.special-image')),
              price: shown(cell.querySelector('.special-price')),
              name: shown(cell.querySelector('.special-name')),
              label: cell.querySelector('a').getAttribute('aria-label'),
              outside,
            };
          }),
        };
        """
    )


def test_every_tile_is_its_size_in_units_at_phone_width(specials_server, new_browser, axe):
    driver = new_browser(width=PHONE)
    driver.get(specials_server.url + "/specials")
    wait_for(driver, lambda d: len(by_css(d, ".special-cell")) == 21)
    measured = tile_boxes(driver)
    # The canvas spans the phone's width: one unit is a sixteenth of it.
    assert abs(measured["canvas"]["width"] - measured["viewport"]) <= 1
    assert abs(measured["unit"] - measured["viewport"] / 16) < 0.1
    unit = measured["unit"]
    assert [(t["w"], t["h"]) for t in measured["tiles"]] == DEMO_SIZES
    for tile in measured["tiles"]:
        assert abs(tile["width"] - tile["w"] * unit) <= 1, tile
        assert abs(tile["height"] - tile["h"] * unit) <= 1, tile
    # Rows as the original brief says: 14 units centred (one unit either side), 5+5+5 centred.
    romaine = measured["tiles"][3]
    assert abs(romaine["left"] - (measured["canvas"]["left"] + unit)) <= 1
    water = measured["tiles"][18]
    assert abs(water["left"] - (measured["canvas"]["left"] + unit / 2)) <= 1
    # Tiles keep the server's order: top to bottom, then left to right.
    positions = [(round(t["top"]), t["left"]) for t in measured["tiles"]]
    assert positions == sorted(positions)
    axe.assert_clean(driver, "specials at phone width")


def test_narrow_tiles_follow_the_content_rules(specials_server, new_browser):
    driver = new_browser(width=PHONE)
    driver.get(specials_server.url + "/specials")
    wait_for(driver, lambda d: len(by_css(d, ".special-cell")) == 21)
    for tile in tile_boxes(driver)["tiles"]:
        if tile["w"] <= 3:  # the image alone
            assert tile["image"] and not tile["price"] and not tile["name"], tile
        elif tile["w"] <= 5:  # prices and name, no image
            assert not tile["image"] and tile["price"] and tile["name"], tile
        else:
            assert tile["image"] and tile["price"] and tile["name"], tile
        # Nothing a tile shows is cut off by its card (a wide, short tile's name included).
        assert tile["outside"] == [], tile
    first = tile_boxes(driver)["tiles"][0]
    assert first["label"] == "Noodle Dish with Roasted Black Bean Sauce, was $2.00, now $1.00, save $1.00 (50%)"


def test_a_wider_screen_caps_the_unit_and_centres_the_canvas(specials_server, new_browser):
    driver = new_browser(width=1280)
    driver.get(specials_server.url + "/specials")
    wait_for(driver, lambda d: len(by_css(d, ".special-cell")) == 21)
    measured = tile_boxes(driver)
    assert measured["unit"] <= 40.5
    middle = measured["canvas"]["left"] + measured["canvas"]["width"] / 2
    assert abs(middle - measured["viewport"] / 2) <= 2
    # A 5-unit tile now has room for everything.
    assert measured["tiles"][11]["image"] and measured["tiles"][11]["price"]
    assert [t for t in measured["tiles"] if t["outside"]] == []


def test_a_special_added_through_the_api_appears_without_reload(specials_server, new_browser):
    driver = new_browser(width=PHONE)
    driver.get(specials_server.url + "/specials")
    wait_for(driver, lambda d: d.execute_script("return document.getElementById('specials').dataset.live") == "stream")
    driver.execute_script("window.__sameDocument = true")
    # A keyboard user on the second tile stays there while the mosaic changes.
    second = by_css(driver, ".special-cell")[1]
    second_id = second.get_attribute("data-id")
    driver.execute_script("arguments[0].focus()", second.find_element("css selector", "a"))
    body = {"display_name": "Fresh Figs", "width": 8, "height": 4, "original_price": "4.00", "price": "3.00"}
    response = specials_server.request(
        "/api/specials",
        method="POST",
        admin=True,
        headers={"Content-Type": "application/json"},
        data=json.dumps(body).encode(),
    )
    assert response.status == 201
    wait_for(driver, lambda d: len(by_css(d, ".special-cell")) == 22, timeout=3, message="the new tile")
    tile = tile_boxes(driver)["tiles"][-1]
    assert tile["label"] == "Fresh Figs, was $4.00, now $3.00, save $1.00 (25%)"
    assert driver.execute_script("return window.__sameDocument") is True
    focused = "const c = document.activeElement.closest('.special-cell'); return c && c.dataset.id"
    assert driver.execute_script(focused) == second_id
    # An edit shows too: a promotion appears on the tile and is read with it.
    special_id = json.loads(response.text)["id"]
    patch = specials_server.request(
        f"/api/specials/{special_id}",
        method="PATCH",
        admin=True,
        headers={"Content-Type": "application/json"},
        data=json.dumps({"promotion": "2 for $5"}).encode(),
    )
    assert patch.status == 200
    wait_for(
        driver,
        lambda d: [e.text for e in by_css(d, ".special-promotion")] == ["2 for $5"],
        timeout=3,
        message="the promotion on the tile",
    )
    assert tile_boxes(driver)["tiles"][-1]["label"] == "Fresh Figs, was $4.00, now $3.00, save $1.00 (25%), 2 for $5"
    # And a deletion takes it away again.
    assert specials_server.request(f"/api/specials/{special_id}", method="DELETE", admin=True).status == 204
    wait_for(driver, lambda d: len(by_css(d, ".special-cell")) == 21, timeout=3, message="the tile removed")


def test_a_tile_opens_its_details_in_french(specials_server, new_browser, axe):
    driver = new_browser(width=PHONE, lang="fr")
    driver.get(specials_server.url + "/specials")
    wait_for(driver, lambda d: len(by_css(d, ".special-cell")) == 21)
    label = tile_boxes(driver)["tiles"][0]["label"]
    assert (
        label == "Noodle Dish with Roasted Black Bean Sauce, avant 2,00\u00a0$, maintenant 1,00\u00a0$, "
        "économie de 1,00\u00a0$ (50\u202f%)"
    )
    by_css(driver, ".special-tile")[0].click()
    wait_for(driver, lambda d: "/specials/" in d.current_url)
    assert by_css(driver, "h1")[0].text == "Noodle Dish with Roasted Black Bean Sauce"
    assert "1,00" in by_css(driver, ".special-details-prices")[0].text
    axe.assert_clean(driver, "special details")


def test_the_empty_state(quad_server, new_browser):
    driver = new_browser(width=PHONE)
    driver.get(quad_server.url + "/specials")
    assert by_css(driver, "#specials-empty")[0].text == "No specials right now"


def sign_in_as_manager(driver, server):
    """Makes Manon, an admin, and signs her in on the manager's page."""
    add_person(server, "manon", "correct horse battery", role="admin", display="Manon")
    sign_in(driver, server, "manon", "correct horse battery", next_path="/admin/specials")


def test_the_manager_adds_moves_and_deletes(specials_server, new_browser, axe, tmp_path):
    from selenium.webdriver.common.by import By

    driver = new_browser(width=1280)
    sign_in_as_manager(driver, specials_server)
    assert len(by_css(driver, ".specials-manager-item")) == 21
    axe.assert_clean(driver, "manager list")

    driver.get(specials_server.url + "/admin/specials/new")
    form = driver.find_element(By.ID, "special-form")
    form.find_element(By.NAME, "display_name").send_keys("Ripe Mangoes")
    width = form.find_element(By.NAME, "width")
    width.clear()
    width.send_keys("20")
    form.find_element(By.NAME, "original_price").send_keys("3.00")
    form.find_element(By.NAME, "price").send_keys("1.2.3")
    # The preview follows what is typed, at phone size (a unit is 390 / 16 px; the width is capped at 16).
    wait_for(driver, lambda d: preview_text(d, ".special-name") == "Ripe Mangoes", message="no preview")
    wait_for(driver, lambda d: abs(d.find_element(By.ID, "preview-cell").rect["width"] - 390) <= 1)
    # No picture chosen yet: the letter tile the special will get.
    letter = driver.find_element(By.CSS_SELECTOR, "#preview-cell img").get_attribute("src")
    assert urllib.parse.urlparse(letter).path.startswith("/images/")
    axe.assert_clean(driver, "manager form")
    form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    # Refused: each field at fault says why, and what was typed stays.
    wait_for(driver, lambda d: by_css(d, "#f-width-error"))
    assert "width 20 is wider than the canvas (16)" in driver.find_element(By.ID, "f-width-error").text
    assert "price 1.2.3 is not an amount" in driver.find_element(By.ID, "f-price-error").text
    form = driver.find_element(By.ID, "special-form")
    assert form.find_element(By.NAME, "display_name").get_attribute("value") == "Ripe Mangoes"
    width = form.find_element(By.NAME, "width")
    width.clear()
    width.send_keys("8")
    price = form.find_element(By.NAME, "price")
    price.clear()
    price.send_keys("1.50")
    # The preview shows the prices as the tile will: the original struck through and the saving.
    wait_for(driver, lambda d: preview_text(d, ".special-price") == "$1.50", message="the price is not previewed")
    assert preview_text(driver, ".special-original") == "$3.00"
    assert preview_text(driver, ".special-savings") == "Save $1.50"
    # An image chosen in the form is uploaded at once and shown in the preview.
    first = json.loads(specials_server.request("/api/specials").text)["managerSpecials"][9]
    picture = tmp_path / "mango.png"
    picture.write_bytes(specials_server.request(urllib.parse.urlparse(first["imageUrl"]).path).body)
    driver.find_element(By.ID, "f-image-file").send_keys(str(picture))
    wait_for(driver, lambda d: d.find_element(By.ID, "f-image").get_attribute("value").startswith("/images/"))
    uploaded = driver.find_element(By.ID, "f-image").get_attribute("value")
    wait_for(
        driver,
        lambda d: d.find_element(By.CSS_SELECTOR, "#preview-cell img").get_attribute("src").endswith(uploaded),
        message="the uploaded picture is not previewed",
    )
    form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    wait_for(driver, lambda d: by_css(d, "#specials-notice"))
    items = by_css(driver, ".specials-manager-item")
    assert len(items) == 22 and "Ripe Mangoes" in items[-1].text
    assert items[-1].find_element(By.TAG_NAME, "img").get_attribute("src").endswith(uploaded)

    # Move it up one place.
    items[-1].find_element(By.XPATH, ".//form[input[@name='direction'][@value='up']]//button").click()
    # (While the page reloads the list can be momentarily empty.)
    wait_for(
        driver,
        lambda d: (
            len(by_css(d, ".specials-manager-item")) == 22
            and "Ripe Mangoes" in by_css(d, ".specials-manager-item")[-2].text
        ),
    )
    names = [s["display_name"] for s in json.loads(specials_server.request("/api/specials").text)["managerSpecials"]]
    assert names[-2:] == ["Ripe Mangoes", "Arrowhead Mountain Spring Water 1.5 L"]

    # Delete, after confirming.
    item = by_css(driver, ".specials-manager-item")[-2]
    item.find_element(By.CSS_SELECTOR, "button.danger").click()
    alert = driver.switch_to.alert
    assert "Ripe Mangoes" in alert.text
    alert.accept()
    wait_for(driver, lambda d: len(by_css(d, ".specials-manager-item")) == 21)


def test_offline_keeps_the_mosaic_and_an_error_offers_retry(specials_server, new_browser):
    driver = new_browser(width=PHONE)
    driver.get(specials_server.url + "/specials")
    wait_for(driver, lambda d: d.execute_script("return document.getElementById('specials').dataset.live") == "stream")
    driver.execute_cdp_cmd("Network.enable", {})
    driver.execute_cdp_cmd(
        "Network.emulateNetworkConditions",
        {"offline": True, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1},
    )
    wait_for(driver, lambda d: d.find_element("id", "specials-offline").is_displayed(), message="offline note")
    assert len(by_css(driver, ".special-cell")) == 21
    driver.execute_cdp_cmd(
        "Network.emulateNetworkConditions",
        {"offline": False, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1},
    )
    wait_for(driver, lambda d: not d.find_element("id", "specials-offline").is_displayed(), message="back online")
    # The server goes away: coming back to the tab tries at once, fails, and offers Retry; the mosaic stays.
    specials_server.stop()
    driver.execute_script("document.dispatchEvent(new Event('visibilitychange'))")
    wait_for(driver, lambda d: d.find_element("id", "specials-error").is_displayed(), message="error state")
    assert driver.find_element("id", "specials-retry").is_displayed()
    assert len(by_css(driver, ".special-cell")) == 21


# Makes the page poll: no EventSource, as behind a proxy that drops streams. The polling timer (minutes
# long) never runs by itself: the script keeps each one the page schedules (its delay in window.__polls,
# the pending ones in window.__pending) and the test runs them with window.__runPolls(), as if that much
# time had passed. window.__fetches lists every fetch the page makes.
POLLING_ONLY = """
delete window.EventSource;
window.__polls = [];
window.__pending = new Map();
window.__fetches = [];
const realSetTimeout = window.setTimeout.bind(window), realClearTimeout = window.clearTimeout.bind(window);
let nextPoll = 1e9;
window.setTimeout = (callback, ms, ...rest) => {
  if (!(ms >= 60000)) return realSetTimeout(callback, ms, ...rest);
  window.__polls.push(ms);
  const id = nextPoll++;
  window.__pending.set(id, () => callback(...rest));
  return id;
};
window.clearTimeout = (id) => { if (!window.__pending.delete(id)) realClearTimeout(id); };
window.__runPolls = () => {
  const due = [...window.__pending.values()];
  window.__pending.clear();
  due.forEach((run) => run());
  return due.length;
};
const realFetch = window.fetch.bind(window);
window.fetch = (url, ...rest) => { window.__fetches.push(String(url)); return realFetch(url, ...rest); };
window.__setHidden = (hidden) => {
  Object.defineProperty(document, "hidden", {configurable: true, get: () => hidden});
  document.dispatchEvent(new Event("visibilitychange"));
};
"""


def test_without_events_the_page_polls_every_five_minutes_and_not_while_hidden(specials_server, new_browser):
    driver = new_browser(width=PHONE)
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": POLLING_ONLY})
    driver.get(specials_server.url + "/specials")
    wait_for(driver, lambda d: d.execute_script("return document.getElementById('specials').dataset.live") == "poll")
    pending = lambda: driver.execute_script("return window.__pending.size")  # noqa: E731
    fetches = lambda: driver.execute_script("return window.__fetches.length")  # noqa: E731

    def add(name):
        body = {"display_name": name, "width": 8, "height": 4, "original_price": "4.00", "price": "3.00"}
        response = specials_server.request(
            "/api/specials",
            method="POST",
            admin=True,
            headers={"Content-Type": "application/json"},
            data=json.dumps(body).encode(),
        )
        assert response.status == 201

    assert pending() == 1, "one poll waits"
    add("Fresh Figs")
    assert len(by_css(driver, ".special-cell")) == 21, "no stream: nothing comes before the poll"
    # The poll's time comes: it picks the new special up, and the next poll is set.
    assert driver.execute_script("return window.__runPolls()") == 1
    wait_for(driver, lambda d: len(by_css(d, ".special-cell")) == 22, message="not picked up by the poll")
    wait_for(driver, lambda d: pending() == 1, message="no next poll after the first")
    polls = driver.execute_script("return window.__polls")
    # Every five minutes, jittered (±20 %) so that many open pages do not poll in step.
    assert len(polls) == 2 and all(240_000 <= ms <= 360_000 for ms in polls), polls
    # Hidden: no poll is scheduled and nothing is fetched, however long it stays hidden.
    driver.execute_script("window.__setHidden(true)")
    assert pending() == 0, "a poll is still set while hidden"
    fetched = fetches()
    add("Green Grapes")
    assert driver.execute_script("return window.__runPolls()") == 0
    assert len(by_css(driver, ".special-cell")) == 22
    assert len(driver.execute_script("return window.__polls")) == 2
    assert fetches() == fetched, driver.execute_script("return window.__fetches")
    # Back on the tab: refreshed at once, before the next poll (set again, and never run here) is due.
    driver.execute_script("window.__setHidden(false)")
    wait_for(driver, lambda d: len(by_css(d, ".special-cell")) == 23, message="not refreshed on return")
    assert pending() == 1


def test_the_preview_writes_prices_like_the_tiles_in_french(specials_server, new_browser):
    from selenium.webdriver.common.by import By

    driver = new_browser(width=1280, lang="fr")
    sign_in_as_manager(driver, specials_server)
    driver.get(specials_server.url + "/admin/specials/new")
    form = driver.find_element(By.ID, "special-form")
    form.find_element(By.NAME, "display_name").send_keys("Clémentines")
    form.find_element(By.NAME, "original_price").send_keys("1234.5")
    form.find_element(By.NAME, "price").send_keys("617.25")
    form.find_element(By.NAME, "promotion").send_keys("2 pour 1 000 $")

    # Exactly as the tiles write them (QuadCore's Currency.format), spaces included.
    wait_for(driver, lambda d: preview_text(d, ".special-promotion") == "2 pour 1 000 $", message="no preview")
    assert preview_text(driver, ".special-original") == "1\u202f234,50\u00a0$"
    assert preview_text(driver, ".special-price") == "617,25\u00a0$"
    assert preview_text(driver, ".special-savings") == "Économisez 617,25\u00a0$"


def test_the_managers_settings_change_open_pages(specials_server, new_browser, axe):
    from selenium.webdriver.common.by import By

    shopper = new_browser(width=PHONE)
    shopper.get(specials_server.url + "/specials")
    wait_for(shopper, lambda d: d.execute_script("return document.getElementById('specials').dataset.live") == "stream")
    manager = new_browser(width=1280)
    sign_in_as_manager(manager, specials_server)

    def submit(canvas, currency, zone):
        form = manager.find_element(By.CSS_SELECTOR, "form[action='/admin/specials/settings']")
        for name, value in (("canvasUnit", canvas), ("currency", currency), ("timeZone", zone)):
            field = form.find_element(By.NAME, name)
            field.clear()
            field.send_keys(value)
        form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()

    # Refused: each field says why, what was typed stays, and the page stays accessible.
    submit("16", "E1", "Europe/Paris")
    wait_for(manager, lambda d: by_css(d, "#s-currency-error"))
    assert "currency E1 is not a three-letter code" in manager.find_element(By.ID, "s-currency-error").text
    assert manager.find_element(By.ID, "s-currency").get_attribute("value") == "E1"
    assert manager.find_element(By.ID, "s-currency").get_attribute("aria-invalid") == "true"
    axe.assert_clean(manager, "settings refused")
    # A canvas narrower than the widest special (16 units) is refused too.
    submit("12", "EUR", "Europe/Paris")
    wait_for(manager, lambda d: by_css(d, "#s-canvas-error"))
    assert "canvasUnit 12 is too small for the specials" in manager.find_element(By.ID, "s-canvas-error").text
    assert manager.find_element(By.ID, "s-canvas").get_attribute("value") == "12"
    assert not by_css(manager, "#s-currency-error")
    # Saved: the shopper's open page follows at once, in euros.
    submit("16", "EUR", "Europe/Paris")
    wait_for(manager, lambda d: by_css(d, "#specials-settings-notice"))
    wait_for(
        shopper,
        lambda d: any("€" in e.text for e in by_css(d, ".special-price")[:1]),
        timeout=3,
        message="prices in euros",
    )
    assert tile_boxes(shopper)["tiles"][0]["label"] == (
        "Noodle Dish with Roasted Black Bean Sauce, was €2.00, now €1.00, save €1.00 (50%)"
    )


def preview_text(driver, selector: str) -> str | None:
    """The text of a part of the manager's preview tile (None when the tile lacks it)."""
    return driver.execute_script(
        "const e = document.querySelector('#preview-cell ' + arguments[0]); return e && e.textContent", selector
    )
