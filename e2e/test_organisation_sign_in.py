"""Sign-in with the organisation's accounts (issue 38), in a real browser against a real OpenID provider
(`oidc-provider-mock`, through e2e/oidc_provider.py): someone with no Quad account signs in on the provider's page and
lands on Today with their name; a groups claim makes another an admin; a third is refused a page their role lacks;
signing out signs out at the provider too. The sign-in page with its button fits phones, tablets and desktops in
English and French, and axe finds nothing serious.

Quad's clock starts at the real time here: the provider dates its tokens by the world's clock.
"""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from conftest import DESKTOP, PHONE, TABLET, free_port
from helpers import by_css, one, wait_for

HERE = Path(__file__).parent


class Provider:
    """The provider, on a free port, stopped at the end."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(HERE / "oidc_provider.py")],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        line = self.process.stdout.readline()
        if not line.startswith("listening on "):
            self.process.kill()
            raise RuntimeError(f"the OpenID provider did not start: {line!r}")
        self.issuer = f"http://localhost:{int(line.split()[-1])}"

    def set_person(self, subject: str, claims: dict) -> None:
        request = urllib.request.Request(
            f"{self.issuer}/users/{subject}",
            data=json.dumps(claims).encode(),
            method="PUT",
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=10) as answer:
            assert answer.status == 204

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


@pytest.fixture
def provider():
    started = Provider()
    yield started
    started.stop()


@pytest.fixture
def server(quad_server_factory, provider):
    port = free_port()
    return quad_server_factory(
        demo=True,
        port=port,
        now=dt.datetime.now(dt.UTC).replace(microsecond=0),
        env={
            "QUAD_PUBLIC_URL": f"http://127.0.0.1:{port}",
            "QUAD_OIDC_ISSUER": provider.issuer,
            "QUAD_OIDC_CLIENT_ID": "quad-browser-test",
            "QUAD_OIDC_CLIENT_SECRET": "a secret of this test",
            "QUAD_OIDC_LABEL": "Campus ID",
            "QUAD_OIDC_ADMIN_GROUP": "quad-admins",
        },
    )


def sign_in_with_the_organisation(driver, server, subject: str, next_path: str = "/") -> None:
    """From Quad's sign-in page: the organisation's button, the provider's page (the subject, Authorize), and back."""
    driver.get(f"{server.url}/signin?next={next_path}")
    one(driver, "#signin-organisation").click()
    wait_for(driver, lambda d: by_css(d, "input[name=sub]"), message="the provider's sign-in page")
    one(driver, "input[name=sub]").send_keys(subject)
    one(driver, "form button[type=submit]").click()
    wait_for(
        driver,
        lambda d: d.current_url.startswith(server.url) and d.execute_script("return document.readyState") == "complete",
        timeout=15,
        message=f"the browser did not come back to Quad (at {driver.current_url})",
    )


def test_someone_new_signs_in_with_the_organisation_lands_on_today_and_signs_out_there_too(
    server, provider, new_browser
):
    provider.set_person(
        "maya-0042", {"name": "Maya Patel", "preferred_username": "maya", "email": "maya@campus.example"}
    )
    driver = new_browser(PHONE)
    sign_in_with_the_organisation(driver, server, "maya-0042")
    assert driver.current_url == f"{server.url}/"
    assert "Maya Patel" in one(driver, "h1").text

    # On a phone, signing out is on the account page.
    driver.get(f"{server.url}/account")
    button = next(button for button in by_css(driver, "form.sign-out button") if button.is_displayed())
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", button)
    button.click()
    # The provider's own sign-out page (RP-initiated logout), then back to Quad, signed out.
    wait_for(driver, lambda d: d.current_url.startswith(provider.issuer), message="the provider's sign-out page")
    assert "/oauth2/end_session" in driver.current_url
    one(driver, "form button[type=submit]").click()
    wait_for(driver, lambda d: d.current_url == f"{server.url}/", message="back at Quad after signing out")
    assert by_css(driver, "form.sign-out") == []


def test_a_groups_claim_makes_an_admin_and_a_member_is_refused_what_their_role_lacks(server, provider, new_browser):
    provider.set_person(
        "ines-7", {"name": "Inès Moreau", "preferred_username": "ines", "groups": ["staff", "quad-admins"]}
    )
    provider.set_person("tom-8", {"name": "Tom Baker", "preferred_username": "tom", "groups": ["students"]})

    admin = new_browser(DESKTOP)
    sign_in_with_the_organisation(admin, server, "ines-7", "/admin/people")
    assert admin.current_url == f"{server.url}/admin/people"
    assert one(admin, "h1").text == "People"
    assert one(admin, "#organisation-ines").text == "Signs in with the organisation"
    assert by_css(admin, "#organisation-ada") == [], "a demo person signs in with a Quad password"

    member = new_browser(DESKTOP)
    sign_in_with_the_organisation(member, server, "tom-8", "/admin/people")
    member.get(f"{server.url}/admin/people")
    assert one(member, "h1").text != "People"
    status = member.execute_script("return fetch('/admin/people', {credentials: 'same-origin'}).then(r => r.status)")
    assert status == 403


@pytest.mark.parametrize("width", [PHONE, TABLET, DESKTOP])
@pytest.mark.parametrize("lang", ["en", "fr"])
def test_the_sign_in_page_with_the_organisation_fits_and_is_accessible(server, new_browser, axe, width, lang):
    driver = new_browser(width, lang=lang)
    driver.get(f"{server.url}/signin")
    button = one(driver, "#signin-organisation")
    assert button.text == ("Sign in with Campus ID" if lang == "en" else "Se connecter avec Campus ID")
    assert button.size["height"] >= 44
    assert driver.execute_script("return document.documentElement.scrollWidth <= window.innerWidth")
    axe.assert_clean(driver, f"/signin with the organisation at {width} px, {lang}")
    # A sign-in that cannot finish (here: an answer for no sign-in under way) says why, and offers to start again.
    driver.get(f"{server.url}/signin/sso/callback?state=none&code=none")
    assert one(driver, "#sso-problem").text
    assert one(driver, "#sso-again").get_attribute("href") == f"{server.url}/signin/sso"
    assert driver.execute_script("return document.documentElement.scrollWidth <= window.innerWidth")
    axe.assert_clean(driver, f"a sign-in that did not finish at {width} px, {lang}")
