"""Fixtures for Quad's browser (end-to-end) tests.

Servers
    quad_binary          path of the `quad` executable (env QUAD_BIN, else .build/debug/quad,
                         built with `swift build --product quad` if missing)
    quad_server          one server for the whole session: empty SQLite database, no demo data
    quad_server_factory  start(*extra_args, env=..., demo=..., database=...) for a test that
                         needs a server of its own (Postgres, demo data, other settings)
    postgres_url         QUAD_TEST_POSTGRES_URL (skipped when unset, failure in CI)

Browsers (Debian's /usr/bin/chromium + /usr/bin/chromedriver, headless)
    browser              a desktop (1280 px wide) browser asking for English
    new_browser          new_browser(width=390, lang="fr", font_size=32) for other set-ups
    set_color_scheme     set_color_scheme(driver, "dark" | "light") via CDP
    axe                  axe.serious_violations(driver) -> list; axe.assert_clean(driver)

Missing Chromium or Python packages skip the browser tests locally; with CI=true they fail.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")

ADMIN_TOKEN = "e2e-admin-token-0123456789"  # quad serve wants at least 16 characters
STARTUP_TIMEOUT = 60.0
SHUTDOWN_TIMEOUT = 10.0

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"

# Widths the web shell must work at.
PHONE, TABLET, DESKTOP = 390, 768, 1280
WINDOW_HEIGHT = 900


def missing(message: str) -> None:
    """Skips the test locally; fails it in CI, where every tool must be installed."""
    if IN_CI:
        pytest.fail(f"{message} (required when CI=true)", pytrace=False)
    pytest.skip(message)


# --- HTTP ---------------------------------------------------------------------------


@dataclass
class Response:
    status: int
    headers: dict[str, str]
    body: bytes

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "")

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")

    def json(self):
        return json.loads(self.body)


def http_request(url: str, method: str = "GET", headers: dict | None = None, data: bytes | None = None,
                 timeout: float = 10.0) -> Response:
    """One HTTP request with urllib; 4xx/5xx answers are returned, not raised."""
    request = urllib.request.Request(url, method=method, headers=headers or {}, data=data)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return Response(response.status, {k.lower(): v for k, v in response.headers.items()}, response.read())
    except urllib.error.HTTPError as error:
        return Response(error.code, {k.lower(): v for k, v in error.headers.items()}, error.read())


# --- Quad server ----------------------------------------------------------------------


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class QuadServer:
    """A running `quad serve`; `.url` has no trailing slash."""

    url: str
    port: int
    admin_token: str
    workdir: Path
    args: list[str]
    process: subprocess.Popen = field(repr=False)
    log_path: Path = field(repr=False)

    def log(self) -> str:
        """Everything the server printed so far (stdout and stderr)."""
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def request(self, path: str, method: str = "GET", headers: dict | None = None, data: bytes | None = None,
                admin: bool = False) -> Response:
        headers = dict(headers or {})
        if admin:
            headers.setdefault("Authorization", f"Bearer {self.admin_token}")
        return http_request(self.url + path, method=method, headers=headers, data=data)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=SHUTDOWN_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        RUNNING_SERVERS.discard(self)

    __hash__ = object.__hash__


RUNNING_SERVERS: set[QuadServer] = set()


def start_server(binary: Path, workdir: Path, extra_args=(), env: dict | None = None, demo: bool = False,
                 database: str | None = None) -> QuadServer:
    """Starts `quad serve` on a free loopback port and waits until GET /health answers 200."""
    workdir.mkdir(parents=True, exist_ok=True)
    database = database or str(workdir / "quad.sqlite")
    # The per-client rate limit is off unless the environment or `env` sets it: every browser
    # test comes from 127.0.0.1, and a 429 there would be noise, not a finding.
    process_env = {"QUAD_RATE_LIMIT": "0", **os.environ, "QUAD_ADMIN_TOKEN": ADMIN_TOKEN, "QUAD_LOG_LEVEL": "info",
                   **(env or {})}

    for attempt in range(3):  # another process may grab the free port before the server binds it
        port = free_port()
        args = [str(binary), "serve", "--hostname", "127.0.0.1", "--port", str(port), "--database", database]
        if not demo:
            args.append("--no-demo")
        args += [str(a) for a in extra_args]
        log_path = workdir / f"server-{port}.log"
        log_file = open(log_path, "wb")
        process = subprocess.Popen(args, cwd=workdir, env=process_env, stdout=log_file, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL)
        log_file.close()
        server = QuadServer(f"http://127.0.0.1:{port}", port, process_env["QUAD_ADMIN_TOKEN"], workdir, args,
                            process, log_path)
        RUNNING_SERVERS.add(server)

        deadline = time.monotonic() + STARTUP_TIMEOUT
        last_error = "no answer"
        while time.monotonic() < deadline:
            if process.poll() is not None:
                break
            try:
                response = http_request(server.url + "/health", timeout=2)
                if response.status == 200:
                    return server
                last_error = f"HTTP {response.status}"
            except OSError as error:
                last_error = str(error)
            time.sleep(0.1)

        exited_early = process.poll() is not None
        server.stop()
        output = server.log()
        if exited_early and "in use" in output.lower() and attempt < 2:
            continue
        why = (f"exited with code {process.returncode} before answering GET /health" if exited_early else
               f"did not answer GET /health with 200 within {STARTUP_TIMEOUT:.0f}s (last: {last_error})")
        pytest.fail(
            f"quad server {why}\n"
            f"command: {' '.join(args)}\n--- server output ---\n{output[-8000:]}",
            pytrace=False,
        )
    raise AssertionError("unreachable")


@pytest.fixture(scope="session")
def quad_binary() -> Path:
    binary = Path(os.environ.get("QUAD_BIN") or REPO_ROOT / ".build" / "debug" / "quad")
    if not binary.exists():
        if "QUAD_BIN" in os.environ:
            pytest.fail(f"QUAD_BIN={binary} does not exist", pytrace=False)
        print(f"{binary} is missing: running swift build --product quad")
        subprocess.run(["swift", "build", "--product", "quad"], cwd=REPO_ROOT, check=True)
    if not binary.exists():
        pytest.fail(f"{binary} still missing after swift build", pytrace=False)
    return binary


@pytest.fixture(scope="session")
def quad_server(quad_binary, tmp_path_factory) -> QuadServer:
    """The session's shared server: empty SQLite database, no demo data."""
    server = start_server(quad_binary, tmp_path_factory.mktemp("quad-session"))
    yield server
    server.stop()


@pytest.fixture
def quad_server_factory(quad_binary, tmp_path_factory):
    """start(*extra_args, env={...}, demo=False, database=None) -> a server of the test's own.

    demo=True leaves out --no-demo; database= replaces the temporary SQLite file, e.g. with
    a PostgreSQL URL. Every server started is stopped when the test ends.
    """
    started: list[QuadServer] = []

    def start(*extra_args, env: dict | None = None, demo: bool = False, database: str | None = None) -> QuadServer:
        server = start_server(quad_binary, tmp_path_factory.mktemp("quad"), extra_args, env, demo, database)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture
def postgres_url() -> str:
    url = os.environ.get("QUAD_TEST_POSTGRES_URL")
    if not url:
        missing("QUAD_TEST_POSTGRES_URL is not set (bash .ci/run postgres sets up a local database)")
    return url


# --- Browser -----------------------------------------------------------------------------

RUNNING_BROWSERS: list = []


def _accept_languages(lang: str) -> str:
    """'en' -> 'en-US,en'; anything with a comma is used as given."""
    if "," in lang:
        return lang
    return "en-US,en" if lang == "en" else lang


def make_browser(width: int = DESKTOP, lang: str = "en", font_size: int | None = None, height: int = WINDOW_HEIGHT):
    """A new headless Chromium with a viewport `width` px wide, asking for `lang` first.

    lang: "en", "fr", or a whole Accept-Language list such as "de,fr;q=0.8".
    font_size: the browser's default font size in px (Chromium's default is 16).
    """
    for path in (CHROMIUM, CHROMEDRIVER):
        if not os.access(path, os.X_OK):
            missing(f"Chromium not installed ({path} missing): apt-get install -y chromium chromium-driver")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        missing("selenium not installed: pip install -r e2e/requirements.txt")

    languages = _accept_languages(lang)
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                     f"--window-size={max(width, 500)},{height}",
                     f"--lang={languages.split(',')[0]}", "--disable-search-engine-choice-screen"):
        options.add_argument(argument)
    prefs = {"intl.accept_languages": languages}
    if font_size is not None:
        prefs["webkit.webprefs.default_font_size"] = font_size
    options.add_experimental_option("prefs", prefs)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})

    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(30)
    # Chromium will not make a window narrower than 500 px, so the viewport is emulated;
    # phone widths also get mobile behaviour (the page's <meta name=viewport> applies).
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600})
    RUNNING_BROWSERS.append(driver)
    return driver


def _quit(driver) -> None:
    if driver in RUNNING_BROWSERS:
        RUNNING_BROWSERS.remove(driver)
    try:
        driver.quit()
    except Exception:  # a crashed browser must not hide the test's own result
        pass


@pytest.fixture
def new_browser():
    """new_browser(width=PHONE, lang="fr", font_size=32) -> a fresh Chromium, quit after the test."""
    drivers = []

    def create(width: int = DESKTOP, lang: str = "en", font_size: int | None = None, height: int = WINDOW_HEIGHT):
        driver = make_browser(width=width, lang=lang, font_size=font_size, height=height)
        drivers.append(driver)
        return driver

    yield create
    for driver in drivers:
        _quit(driver)


@pytest.fixture
def browser(new_browser):
    """A fresh desktop-width Chromium asking for English."""
    return new_browser()


def emulate_color_scheme(driver, scheme: str) -> None:
    """Makes the page see `prefers-color-scheme: scheme` ("light" or "dark")."""
    assert scheme in ("light", "dark"), scheme
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia",
                           {"features": [{"name": "prefers-color-scheme", "value": scheme}]})


@pytest.fixture
def set_color_scheme():
    return emulate_color_scheme


# --- axe ---------------------------------------------------------------------------------


def _axe_script() -> str | None:
    """axe-core bundled by axe-core-python (4.4.3) when installed: newer rules than the
    axe-core 3.1 inside axe-selenium-python 2.1.6. None means axe-selenium-python's own."""
    import importlib.util

    spec = importlib.util.find_spec("axe_core_python")
    if spec and spec.submodule_search_locations:
        script = Path(list(spec.submodule_search_locations)[0]) / "axe.min.js"
        if script.exists():
            return str(script)
    return None


def format_violations(violations: list[dict]) -> str:
    lines = []
    for violation in violations:
        lines.append(f"[{violation.get('impact')}] {violation['id']}: {violation.get('help') or violation.get('description')}")
        lines.append(f"    {violation.get('helpUrl', '')}")
        for node in violation.get("nodes", [])[:10]:
            target = " ".join(str(t) for t in node.get("target", []))
            lines.append(f"    - {target}")
            summary = node.get("failureSummary") or ""
            for line in summary.splitlines():
                lines.append(f"        {line.strip()}")
            if node.get("html"):
                lines.append(f"        {node['html'][:200]}")
    return "\n".join(lines)


class AxeChecker:
    """Runs axe-core on the browser's current page."""

    BLOCKING = ("serious", "critical")

    def results(self, driver, context=None, options=None) -> dict:
        try:
            from axe_selenium_python import Axe
        except ImportError:
            missing("axe-selenium-python not installed: pip install -r e2e/requirements.txt")
        script = _axe_script()
        axe = Axe(driver, script) if script else Axe(driver)
        axe.inject()
        driver.set_script_timeout(30)
        return axe.run(context=context, options=options)

    def serious_violations(self, driver, context=None, options=None) -> list[dict]:
        results = self.results(driver, context, options)
        return [v for v in results["violations"] if v.get("impact") in self.BLOCKING]

    def assert_clean(self, driver, label: str = "") -> None:
        violations = self.serious_violations(driver)
        where = f" ({label})" if label else ""
        assert not violations, (
            f"axe found {len(violations)} serious/critical accessibility violation(s) on "
            f"{driver.current_url}{where}:\n{format_violations(violations)}"
        )


@pytest.fixture
def axe() -> AxeChecker:
    return AxeChecker()


# --- Reporting -------------------------------------------------------------------------


def pytest_report_header(config):
    lines = []
    try:
        import selenium

        lines.append(f"selenium {selenium.__version__}")
    except ImportError:
        lines.append("selenium: not installed")
    if os.access(CHROMIUM, os.X_OK):
        try:
            version = subprocess.run([CHROMIUM, "--version"], capture_output=True, text=True, timeout=20).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            version = "?"
        lines.append(f"browser: {version or CHROMIUM}")
    else:
        lines.append("browser: chromium not installed")
    script = _axe_script()
    if script:
        first_line = Path(script).read_text(encoding="utf-8", errors="replace")[:200].splitlines()[0]
        version = first_line.replace("/*!", "").strip() or "axe"
        lines.append(f"axe-core: {version} from axe-core-python")
    else:
        lines.append("axe-core: the copy bundled with axe-selenium-python")
    lines.append(f"quad: {os.environ.get('QUAD_BIN') or REPO_ROOT / '.build' / 'debug' / 'quad'}")
    return lines


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """On a failure, attaches the browser console and the server output to the report."""
    outcome = yield
    report = outcome.get_result()
    if report.when != "call" or not report.failed:
        return
    for driver in list(RUNNING_BROWSERS):
        try:
            entries = driver.get_log("browser")
        except Exception:
            continue
        if entries:
            text = "\n".join(f"{e.get('level')}: {e.get('message')}" for e in entries[-50:])
            report.sections.append((f"browser console ({driver.current_url})", text))
    for server in list(RUNNING_SERVERS):
        report.sections.append((f"quad server output ({server.url})", server.log()[-6000:]))
