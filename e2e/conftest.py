"""Fixtures for Quad's browser (end-to-end) tests.

Time
    Every server runs on a testing clock (QUAD_TESTING=on, QUAD_NOW=...): it starts at the test's
    chosen instant, else QUAD_TEST_NOW (an ISO 8601 instant such as 2026-11-24T16:00:00Z), else the
    real time, and runs on at the real rate. `server.now()` reads it: tests work out "today" from
    it, never from this machine's clock. `melbourne("12:58:30", day="monday")` is the first instant
    at or after the test's time that reads so on the demo campus's wall clock, for a test that
    needs a time of day (the date still follows QUAD_TEST_NOW). helpers.follow_clock sets a
    browser's clock to a server's.

Servers
    quad_binary          path of the `quad` executable (env QUAD_BIN, else .build/debug/quad,
                         built with `swift build --product quad` if missing)
    quad_server          one server for the whole session: empty SQLite database, no demo data
    quad_server_factory  start(*extra_args, env=..., demo=..., database=..., now=...) for a test
                         that needs a server of its own (Postgres, demo data, other settings, a time)
    postgres_url         QUAD_TEST_POSTGRES_URL (skipped when unset, failure in CI)

Mail
    sink                 a real SMTP server (aiosmtpd, e2e/smtp_sink.py) keeping what it accepts: sink.messages();
                         mail_settings(sink.port) are a server's settings to send it mail

Browsers (Debian's /usr/bin/chromium + /usr/bin/chromedriver, headless)
    browser              a desktop (1280 px wide) browser asking for English
    new_browser          new_browser(width=390, lang="fr", font_size=32) for other set-ups
    set_color_scheme     set_color_scheme(driver, "dark" | "light") via CDP
    axe                  axe.serious_violations(driver) -> list; axe.assert_clean(driver)

Missing Chromium or Python packages skip the browser tests locally; with CI=true they fail.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import resource
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from zoneinfo import ZoneInfo

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


# --- Waiting -------------------------------------------------------------------------


def wait_until(condition: Callable[[], object], timeout: float = 10.0, interval: float = 0.1, message: str = ""):
    """Calls `condition` until it returns something truthy (returned) or `timeout` seconds pass (AssertionError).
    For conditions outside a browser (a process, a socket); in a browser, use helpers.wait_for."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise AssertionError(message or f"condition not met within {timeout:g} s")
        time.sleep(min(interval, remaining))


# --- Time ------------------------------------------------------------------------------

TEST_NOW_VARIABLE = "QUAD_TEST_NOW"
MELBOURNE = ZoneInfo("Australia/Melbourne")  # the demo campus's time zone
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


def parse_instant(text: str, what: str = TEST_NOW_VARIABLE) -> dt.datetime:
    """An ISO 8601 instant with its offset (2026-11-24T16:30:00Z) as an aware UTC datetime."""
    try:
        instant = dt.datetime.fromisoformat(text.strip())
    except ValueError:
        instant = None
    if instant is None or instant.tzinfo is None:
        raise pytest.UsageError(
            f"{what}={text!r} is not an ISO 8601 instant with an offset, such as 2026-11-24T16:00:00Z"
        )
    return instant.astimezone(dt.UTC)


def test_now() -> dt.datetime:
    """The instant the tests run at: QUAD_TEST_NOW when set, else the real time now (aware, UTC)."""
    text = os.environ.get(TEST_NOW_VARIABLE, "").strip()
    if text:
        return parse_instant(text)
    return dt.datetime.now(dt.UTC)


test_now.__test__ = False  # not a test, whatever its name


def quad_instant(instant: dt.datetime) -> str:
    """`instant` as QUAD_NOW takes it: UTC, whole seconds (2026-11-24T16:30:00Z)."""
    if instant.tzinfo is None:
        raise ValueError(f"{instant!r} has no time zone: give the instant, e.g. with tzinfo=dt.timezone.utc")
    return instant.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def melbourne(
    wall_clock: str, day: str | Callable[[dt.date], bool] | None = None, after: dt.datetime | None = None
) -> dt.datetime:
    """The first instant at or after `after` (the tests' time, test_now()) that reads `wall_clock` ("12:58:30",
    "09:00") in Melbourne, on a day for which `day` holds: a weekday name ("tuesday"), "weekday" (Monday to
    Friday), a function of the date, or any day. The date still follows QUAD_TEST_NOW; only the time of day,
    and the day of the week if asked, are chosen. An instant the clocks skip (daylight saving) is never chosen."""
    after = after or test_now()
    hour, minute, *rest = (int(part) for part in wall_clock.split(":"))
    second = rest[0] if rest else 0
    if day is None:
        matches = lambda date: True  # noqa: E731
    elif callable(day):
        matches = day
    elif day == "weekday":
        matches = lambda date: date.weekday() < 5  # noqa: E731
    else:
        weekday = WEEKDAYS.index(day.lower())
        matches = lambda date: date.weekday() == weekday  # noqa: E731
    date = after.astimezone(MELBOURNE).date()
    for _ in range(400):
        local = dt.datetime.combine(date, dt.time(hour, minute, second), tzinfo=MELBOURNE)
        instant = local.astimezone(dt.UTC)
        real = instant.astimezone(MELBOURNE)  # a time in the spring-forward gap reads otherwise
        if instant >= after and matches(date) and (real.hour, real.minute, real.second) == (hour, minute, second):
            return instant
        date += dt.timedelta(days=1)
    raise ValueError(f"no day after {after} matches {day!r}")


# --- HTTP ---------------------------------------------------------------------------------


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


def http_request(
    url: str, method: str = "GET", headers: dict | None = None, data: bytes | None = None, timeout: float = 10.0
) -> Response:
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
    """A running `quad serve`; `.url` has no trailing slash.

    Its clock started at `started_at` (QUAD_NOW) and runs at the real rate: `now()` reads it."""

    url: str
    port: int
    admin_token: str
    workdir: Path
    args: list[str]
    process: subprocess.Popen = field(repr=False)
    log_path: Path = field(repr=False)
    env: dict = field(repr=False)  # the process's environment
    started_at: dt.datetime  # QUAD_NOW: the instant its clock started at
    # time.monotonic() when the process started; this machine's clock then (for a browser that follows the server's).
    started_monotonic: float = field(repr=False)
    started_wall: float = field(repr=False)

    def now(self) -> dt.datetime:
        """The server's clock: its start instant plus the (monotonic) time since it started."""
        return self.started_at + dt.timedelta(seconds=time.monotonic() - self.started_monotonic)

    def clock_offset(self) -> float:
        """Seconds the server's clock is ahead of this machine's."""
        return self.started_at.timestamp() - self.started_wall

    def log(self) -> str:
        """Everything the server printed so far (stdout and stderr)."""
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def request(
        self,
        path: str,
        method: str = "GET",
        headers: dict | None = None,
        data: bytes | None = None,
        admin: bool = False,
    ) -> Response:
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

    def restart(self, now: dt.datetime | None = None) -> None:
        """Stops the server and starts it again on the same port and database. Its clock runs on from where it
        was, or starts at `now` (a server moved in time: the data stays as laid out before)."""
        self.stop()
        self.env["QUAD_NOW"] = quad_instant(self.now() if now is None else now)
        self.started_at = parse_instant(self.env["QUAD_NOW"], "QUAD_NOW")
        with open(self.log_path, "ab") as log:
            self.started_monotonic, self.started_wall = time.monotonic(), time.time()
            self.process = subprocess.Popen(
                self.args,
                cwd=self.workdir,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
        RUNNING_SERVERS.add(self)
        why = _wait_healthy(self)
        if why:
            output = self.log()
            self.stop()
            pytest.fail(
                f"quad server {why} after a restart\ncommand: {' '.join(self.args)}\n"
                f"--- server output ---\n{output[-8000:]}",
                pytrace=False,
            )

    __hash__ = object.__hash__


RUNNING_SERVERS: set[QuadServer] = set()


def _wait_healthy(server: QuadServer) -> str | None:
    """Waits until GET /health answers 200: None, or why not (the process ended, or the deadline passed)."""
    last_error = ["no answer"]

    def healthy_or_ended():
        if server.process.poll() is not None:
            return "ended"
        try:
            response = http_request(server.url + "/health", timeout=2)
            if response.status == 200:
                return "healthy"
            last_error[0] = f"HTTP {response.status}"
        except OSError as error:
            last_error[0] = str(error)
        return None

    try:
        state = wait_until(healthy_or_ended, timeout=STARTUP_TIMEOUT, interval=0.1)
    except AssertionError:
        return f"did not answer GET /health with 200 within {STARTUP_TIMEOUT:.0f}s (last: {last_error[0]})"
    if state == "ended":
        return f"exited with code {server.process.returncode} before answering GET /health"
    return None


def start_server(
    binary: Path,
    workdir: Path,
    extra_args=(),
    env: dict | None = None,
    demo: bool = False,
    database: str | None = None,
    now: dt.datetime | None = None,
    nofile: int | None = None,
    port: int | None = None,
) -> QuadServer:
    """Starts `quad serve` on a free loopback port (or `port`: a test that must name the address beforehand, as
    QUAD_PUBLIC_URL does) and waits until GET /health answers 200.

    Its clock starts at `now` (an aware datetime), else at QUAD_TEST_NOW, else at the real time (whole seconds).
    `nofile` runs it under that limit of open files (soft and hard, as `ulimit -n` would)."""
    workdir.mkdir(parents=True, exist_ok=True)
    database = database or str(workdir / "quad.sqlite")
    start_at = quad_instant(test_now() if now is None else now)
    # The per-client rate limit is off unless the environment or `env` sets it: every browser
    # test comes from 127.0.0.1, and a 429 there would be noise, not a finding.
    process_env = {
        "QUAD_RATE_LIMIT": "0",
        **os.environ,
        "QUAD_ADMIN_TOKEN": ADMIN_TOKEN,
        "QUAD_LOG_LEVEL": "info",
        **(env or {}),
        "QUAD_TESTING": "on",
        "QUAD_NOW": start_at,
    }

    chosen = port
    for attempt in range(3):  # another process may grab the free port before the server binds it
        port = chosen or free_port()
        args = [str(binary), "serve", "--hostname", "127.0.0.1", "--port", str(port), "--database", database]
        if not demo:
            args.append("--no-demo")
        args += [str(a) for a in extra_args]
        log_path = workdir / f"server-{port}.log"
        log_file = open(log_path, "wb")
        started_monotonic, started_wall = time.monotonic(), time.time()
        process = subprocess.Popen(
            args,
            cwd=workdir,
            env=process_env,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            preexec_fn=None if nofile is None else lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile)),
        )
        log_file.close()
        server = QuadServer(
            f"http://127.0.0.1:{port}",
            port,
            process_env["QUAD_ADMIN_TOKEN"],
            workdir,
            args,
            process,
            log_path,
            env=process_env,
            started_at=parse_instant(start_at, "QUAD_NOW"),
            started_monotonic=started_monotonic,
            started_wall=started_wall,
        )
        RUNNING_SERVERS.add(server)

        why = _wait_healthy(server)
        if why is None:
            return server
        exited_early = process.poll() is not None
        server.stop()
        output = server.log()
        if exited_early and "in use" in output.lower() and attempt < 2 and chosen is None:
            continue
        pytest.fail(
            f"quad server {why}\ncommand: {' '.join(args)}\n--- server output ---\n{output[-8000:]}",
            pytrace=False,
        )
    raise AssertionError("unreachable")


@pytest.fixture(scope="session")
def quad_binary() -> Path:
    # Absolute: each server runs in a directory of its own (QUAD_BIN=.build/debug/quad is from here).
    binary = Path(os.environ.get("QUAD_BIN") or REPO_ROOT / ".build" / "debug" / "quad").absolute()
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
    """start(*extra_args, env={...}, demo=False, database=None, now=None, nofile=None, port=None) -> a server of the
    test's own.

    demo=True leaves out --no-demo; database= replaces the temporary SQLite file, e.g. with
    a PostgreSQL URL; now= (an aware datetime, e.g. from melbourne()) is the instant its clock
    starts at, else QUAD_TEST_NOW, else the real time. Every server started is stopped when the
    test ends.
    """
    started: list[QuadServer] = []

    def start(
        *extra_args,
        env: dict | None = None,
        demo: bool = False,
        database: str | None = None,
        now: dt.datetime | None = None,
        nofile: int | None = None,
        port: int | None = None,
    ) -> QuadServer:
        server = start_server(
            quad_binary, tmp_path_factory.mktemp("quad"), extra_args, env, demo, database, now, nofile, port
        )
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


# --- Mail --------------------------------------------------------------------------------

MAIL_PUBLIC_URL = "https://quad.campus.example"


def mail_settings(port: int) -> dict[str, str]:
    """A server's settings to mail through the SMTP server on `port`, its links made for MAIL_PUBLIC_URL."""
    return {
        "QUAD_SMTP_URL": f"smtp://127.0.0.1:{port}",
        "QUAD_MAIL_FROM": "Quad <quad@campus.example>",
        "QUAD_PUBLIC_URL": MAIL_PUBLIC_URL,
    }


class Sink:
    """e2e/smtp_sink.py on a free port (or `port`), keeping each message it accepts as JSON in a folder."""

    def __init__(self, folder: Path, port: int = 0):
        self.folder = folder
        self.process = subprocess.Popen(
            [sys.executable, str(Path(__file__).parent / "smtp_sink.py"), "--dir", str(folder), "--port", str(port)],
            stdout=subprocess.PIPE,
            text=True,
        )
        line = self.process.stdout.readline()
        if not line.startswith("listening on "):
            self.process.kill()
            pytest.fail(f"the SMTP sink did not start: {line!r}", pytrace=False)
        self.port = int(line.split()[-1])

    def messages(self) -> list[dict]:
        return [json.loads(path.read_text(encoding="utf-8")) for path in sorted(self.folder.glob("*.json"))]

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=10)


@pytest.fixture
def sink(tmp_path):
    started = Sink(tmp_path / "mail")
    yield started
    started.stop()


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
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        f"--window-size={max(width, 500)},{height}",
        f"--lang={languages.split(',')[0]}",
        "--disable-search-engine-choice-screen",
    ):
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
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600},
    )
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
    driver.execute_cdp_cmd(
        "Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": scheme}]}
    )


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
        lines.append(
            f"[{violation.get('impact')}] {violation['id']}: {violation.get('help') or violation.get('description')}"
        )
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


def pytest_configure(config):
    test_now()  # a QUAD_TEST_NOW that is not an instant stops the run at once, with why


def pytest_report_header(config):
    lines = []
    if os.environ.get(TEST_NOW_VARIABLE, "").strip():
        instant = test_now()
        lines.append(
            f"time: {TEST_NOW_VARIABLE}={quad_instant(instant)} "
            f"({instant.astimezone(MELBOURNE):%A %H:%M:%S} in Melbourne)"
        )
    else:
        lines.append(f"time: the real time ({TEST_NOW_VARIABLE} is not set)")
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
