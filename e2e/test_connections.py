"""No client can exhaust Quad's connections: idle and half-sent connections beyond what the process may open
(run under a low `ulimit -n`) never stop `/health` from answering, each address gets a share of the slots, and
the ones that hold a slot without sending a whole request head are closed by their deadline."""

from __future__ import annotations

import http.client
import re
import resource
import select
import socket
import threading
import time
import urllib.request

from conftest import wait_until
from helpers import session_token

NOFILE = 512  # the server's limit: 384 connections after the 128 it keeps for itself
HEAD_TIMEOUT = 3
ATTACKER = "127.0.0.2"  # all of 127.0.0.0/8 is loopback on Linux; /health is asked from 127.0.0.1
SILENCE = 3.0  # seconds without an answer to /health that count as Quad silenced


def open_idle(port: int, count: int, half_sent: bool) -> list[socket.socket]:
    sockets = []
    for _ in range(count):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.bind((ATTACKER, 0))
        s.settimeout(5)
        s.connect(("127.0.0.1", port))
        if half_sent:
            s.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        sockets.append(s)
    return sockets


def closed_by_server(s: socket.socket) -> bool:
    """Whether the server ended the connection (after any answer it wrote first)."""
    s.settimeout(0.05)
    try:
        while True:
            chunk = s.recv(4096)
            if not chunk:
                return True
    except TimeoutError:
        return False
    except OSError:
        return True


def test_idle_and_half_sent_connections_never_silence_quad(quad_server_factory):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 4096)), hard))
    server = quad_server_factory(env={"QUAD_HEAD_TIMEOUT": str(HEAD_TIMEOUT)}, nofile=NOFILE)
    health_times: list[float] = []
    failures: list[str] = []
    stop = threading.Event()

    def ask_health():
        while not stop.is_set():
            started = time.monotonic()
            try:
                # Silenced means no answer at all (the old server trapped, or held every descriptor): three seconds,
                # as the suite runs in two processes and the other one's Chromium may hold a core meanwhile.
                with urllib.request.urlopen(server.url + "/health", timeout=SILENCE) as answer:
                    if answer.status != 200:
                        failures.append(f"status {answer.status}")
            except Exception as error:  # noqa: BLE001 - every way of not answering counts
                failures.append(repr(error))
            health_times.append(time.monotonic() - started)
            time.sleep(0.05)

    def keep_busy():
        # Kept-alive connections asking again and again: Swift tasks waiting for a worker, the moment libdispatch
        # looks at its threads (it opens a file of /proc for that); with no descriptor left, the old server trapped
        # there within seconds.
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
        while not stop.is_set():
            try:
                connection.request("GET", "/health")
                connection.getresponse().read()
            except (OSError, http.client.HTTPException):
                connection.close()
                connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
        connection.close()

    watcher = threading.Thread(target=ask_health, daemon=True)
    watcher.start()
    busy = [threading.Thread(target=keep_busy, daemon=True) for _ in range(4)]
    for thread in busy:
        thread.start()
    attack: list[socket.socket] = []
    try:
        # More than the server's 512 descriptors, from one address: half idle, half with a head never finished.
        started = time.monotonic()
        attack += open_idle(server.port, 350, half_sent=False)
        attack += open_idle(server.port, 350, half_sent=True)
        # Past this address's share (256) the server answers at once and closes: the client learns why.
        held = [s for s in attack if not closed_by_server(s)]
        assert 0 < len(held) <= 256, f"{len(held)} of 700 held"
        # The ones it held are closed once their head's deadline passes.
        wait_until(
            lambda: all(closed_by_server(s) for s in held),
            timeout=HEAD_TIMEOUT + 5,
            message="the server to close every connection that sent no whole head",
        )
        closed_after = time.monotonic() - started
        assert closed_after >= HEAD_TIMEOUT - 0.5, f"closed after {closed_after:.1f}s, before the deadline"
        time.sleep(0.5)
    finally:
        stop.set()
        watcher.join(timeout=5)
        for thread in busy:
            thread.join(timeout=5)
        for s in attack:
            s.close()
    assert not failures, f"/health failed {len(failures)} times: {failures[:3]}"
    assert health_times and max(health_times) < SILENCE, f"/health took up to {max(health_times):.2f}s"
    assert server.process.poll() is None, "the server died"
    with urllib.request.urlopen(server.url + "/health", timeout=2) as answer:
        assert answer.status == 200


def test_a_refused_connection_is_told_why(quad_server_factory):
    server = quad_server_factory(env={"QUAD_MAX_CONNECTIONS_PER_CLIENT": "2"})
    # Three at once: which of them is the one too many depends on the order the server sets them up in.
    opened = open_idle(server.port, 3, half_sent=False)
    try:
        readable, _, _ = select.select(opened, [], [], 5)
        assert len(readable) == 1, f"{len(readable)} of 3 were answered at once"
        refused = readable[0]
        refused.settimeout(5)
        answer = b""
        while chunk := refused.recv(4096):
            answer += chunk
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 429"), head
        assert b"Retry-After: 5" in head
        assert b"too-many-connections" in body
    finally:
        for s in opened:
            s.close()
    # Another address is not held back.
    with urllib.request.urlopen(server.url + "/health", timeout=2) as answer:
        assert answer.status == 200


def test_each_connection_deadline_closes_what_it_should_and_nothing_else(quad_server_factory):
    """A kept-alive connection is closed after the idle timeout of silence, and one that keeps asking is not; a head
    sent a byte at a time is closed at the head timeout from its first byte, however it trickles; a body that stops
    coming is closed after the idle timeout; an event stream, being answered, outlives them all."""
    head, idle = 1, 2
    server = quad_server_factory(env={"QUAD_HEAD_TIMEOUT": str(head), "QUAD_IDLE_TIMEOUT": str(idle)})
    request = f"GET /health HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n\r\n".encode()
    lasting = 2 * idle + 1.5  # how long the ones that must stay are watched
    results: dict[str, object] = {}

    def connect() -> socket.socket:
        return socket.create_connection(("127.0.0.1", server.port), timeout=5)

    def answered(s: socket.socket) -> None:
        """Reads one whole answer (its head, then Content-Length bytes of body)."""
        got = b""
        while b"\r\n\r\n" not in got:
            got += s.recv(4096)
        head, _, body = got.partition(b"\r\n\r\n")
        length = next(
            int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")
        )
        while len(body) < length:
            body += s.recv(4096)

    def open_for(s: socket.socket, seconds: float) -> bool:
        """Whether the server leaves `s` open for `seconds` (reading whatever it sends meanwhile)."""
        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0:
            readable, _, _ = select.select([s], [], [], left)
            if readable and not s.recv(4096):
                return False
        return True

    def closed_after(s: socket.socket, since: float) -> float | None:
        """Seconds from `since` to the server closing `s` (None: still open after `lasting`)."""
        s.settimeout(lasting)
        try:
            while s.recv(4096):
                pass
        except TimeoutError:
            return None
        except OSError:
            pass
        return time.monotonic() - since

    def idle_after_an_answer():
        s = connect()
        s.sendall(request)
        answered(s)
        results["idle"] = closed_after(s, time.monotonic())
        s.close()

    def idle_after_kept_answers(name: str, path: str, headers: str):
        # Answered before the router and written whole, past the HTTP encoder (where the deadlines see no end go by):
        # asked three times, so that the last is answered from what was kept.
        s = connect()
        for _ in range(3):
            s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n{headers}\r\n".encode())
            answered(s)
        results[name] = closed_after(s, time.monotonic())
        s.close()

    def keeps_asking():
        s = connect()
        end = time.monotonic() + lasting
        alive = True
        while alive and time.monotonic() < end:
            s.sendall(request)
            alive = open_for(s, idle * 0.6)
        results["asking"] = alive
        s.close()

    def trickled_head():
        s = connect()
        first = time.monotonic()
        line = b"GET /health HTTP/1.1\r\nX-Slow: " + b"a" * 200
        try:
            for byte in line:
                s.send(bytes([byte]))
                if not open_for(s, 0.2):
                    break
        except OSError:
            pass
        results["trickle"] = closed_after(s, first)
        s.close()

    def body_that_stops():
        s = connect()
        s.sendall(
            f"POST /api/sessions HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nContent-Type: application/json\r\n"
            'Content-Length: 100\r\n\r\n{"username":'.encode()
        )
        results["body"] = closed_after(s, time.monotonic())
        s.close()

    def stream():
        s = connect()
        s.sendall(
            f"GET /api/events HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nAccept: text/event-stream\r\n\r\n".encode()
        )
        results["stream"] = open_for(s, lasting)
        s.close()

    # A browser's cookies: with its CSRF cookie, else the page sets one (and a page that sets a cookie is not kept).
    csrf = "abcdefghijklmnopqrstuvwxyz0123456789ABCD"
    cookie = f"Cookie: quad_csrf={csrf}; quad_session={session_token(server, 'admin')}; quad_lang=en\r\n"
    kept = [
        lambda: idle_after_kept_answers("kept answer", "/api/rooms", ""),
        lambda: idle_after_kept_answers("kept page", "/notifications", cookie),
    ]
    threads = [
        threading.Thread(target=f, daemon=True)
        for f in (idle_after_an_answer, *kept, keeps_asking, trickled_head, body_that_stops, stream)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=lasting + 10)
    # Closed at their deadline: not before, and not much after (the machine may be busy).
    for name in ("idle", "kept answer", "kept page"):
        assert results[name] is not None and idle - 0.3 <= results[name] <= idle + 1.5, (name, results)
    # The last of those two was answered from what was kept, as the log says.
    log = server.log()
    assert re.search(r" answer=kept .*\] GET /api/rooms 200$", log, re.M), log
    assert re.search(r" page=kept .*\] GET /notifications 200$", log, re.M), log
    assert results["trickle"] is not None and head - 0.3 <= results["trickle"] <= head + 1.5, results
    assert results["body"] is not None and idle - 0.3 <= results["body"] <= idle + 1.5, results
    assert results["asking"] is True, results
    assert results["stream"] is True, results
