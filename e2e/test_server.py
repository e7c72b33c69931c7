"""The server as an operator and an API client meet it: start-up, secrets, event streams, shutdown."""

from __future__ import annotations

import datetime as dt
import email.utils
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from conftest import wait_until
from helpers import png

PNG = png()


def open_stream(server, path="/api/events", headers=None) -> socket.socket:
    """Opens a raw HTTP/1.1 event stream and returns the socket, positioned after the response head."""
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n{extra}\r\n".encode())
    return sock


def read_until(sock: socket.socket, marker: bytes, limit: float = 10) -> bytes:
    data = b""
    deadline = time.monotonic() + limit
    while marker not in data and time.monotonic() < deadline:
        chunk = sock.recv(4096)
        if not chunk:
            break
        data += chunk
    return data


def server_has_read(server, sock: socket.socket) -> bool:
    """True once the server has taken in everything sent on `sock`: the server side acknowledged every byte
    and read them all, so nothing waits in the kernel for it (Linux: the send and receive queues of
    /proc/net/tcp)."""
    tcp = Path("/proc/net/tcp")
    if not tcp.exists():
        pytest.skip("needs /proc/net/tcp (Linux) to see what the server has read")
    client_port = sock.getsockname()[1]
    queues = {}  # (local port, remote port) -> (send queue, receive queue)
    for line in tcp.read_text().splitlines()[1:]:
        fields = line.split()
        local, remote = (int(address.split(":")[1], 16) for address in fields[1:3])
        queues[local, remote] = tuple(int(n, 16) for n in fields[4].split(":"))
    sent = queues.get((client_port, server.port))
    received = queues.get((server.port, client_port))
    return sent is not None and received is not None and sent[0] == 0 and received[1] == 0


def test_an_invalid_setting_stops_start_up_with_one_line(quad_binary, tmp_path):
    result = subprocess.run(
        [str(quad_binary), "serve", "--port", "eighty"], cwd=tmp_path, capture_output=True, text=True, timeout=30
    )
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert lines == ['quad: Invalid --port: "eighty" is not a port number (0–65535).']
    assert not (tmp_path / "quad.sqlite").exists()


def test_a_testing_clock_is_refused_outside_testing_mode_and_dates_every_answer_inside(
    quad_binary, tmp_path, quad_server_factory
):
    environment = {k: v for k, v in os.environ.items() if k != "QUAD_TESTING"}
    environment["QUAD_NOW"] = "2026-11-24T16:30:00Z"
    result = subprocess.run(
        [str(quad_binary), "serve", "--port", "0", "--no-demo"],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode != 0
    assert result.stderr.strip().splitlines() == [
        "quad: Invalid QUAD_NOW: it is a testing setting, refused unless QUAD_TESTING=on."
    ]
    assert not (tmp_path / "quad.sqlite").exists()

    # In testing mode the server's one clock starts at QUAD_NOW and runs on: its answers are dated by it.
    start = dt.datetime(2031, 2, 3, 4, 5, 6, tzinfo=dt.UTC)
    server = quad_server_factory(now=start)
    dated = email.utils.parsedate_to_datetime(server.request("/health").headers["date"])
    assert start <= dated <= server.now(), (dated, server.now())


def test_a_generated_admin_token_is_printed_once_and_never_logged(quad_server_factory, tmp_path):
    database = str(tmp_path / "admin.sqlite")
    first = quad_server_factory(env={"QUAD_ADMIN_TOKEN": ""}, database=database)
    # Waited for: the log writer writes it on a thread of its own, maybe after the server answers GET /health.
    line = wait_until(
        lambda: next((line for line in first.log().splitlines() if "Admin token" in line), None),
        message="the generated admin token was not announced",
    )
    token = line.split()[-1]
    assert len(token) >= 43
    uploaded = first.request(
        "/api/images", "POST", {"Content-Type": "image/png", "Authorization": f"Bearer {token}"}, PNG
    )
    assert uploaded.status == 201
    refused = first.request("/api/images", "POST", {"Content-Type": "image/png"}, PNG)
    assert refused.status == 401
    first.stop()
    assert first.log().count(token) == 1, "the token appears only where it was announced"

    second = quad_server_factory(env={"QUAD_ADMIN_TOKEN": ""}, database=database)
    assert "Admin token" not in second.log()
    again = second.request(
        "/api/images", "POST", {"Content-Type": "image/png", "Authorization": f"Bearer {token}"}, PNG
    )
    assert again.status == 201
    second.stop()
    assert token not in second.log()


def test_an_event_stream_sets_retry_and_keeps_alive(quad_server_factory):
    server = quad_server_factory(env={"QUAD_EVENT_HEARTBEAT": "1"})
    sock = open_stream(server)
    try:
        data = read_until(sock, b": heartbeat", limit=5)
        head, _, body = data.partition(b"\r\n\r\n")
        assert b"200 OK" in head.split(b"\r\n")[0]
        assert b"content-type: text/event-stream" in head.lower()
        assert b"cache-control: no-cache" in head.lower()
        assert b"retry: " in body
        assert b": heartbeat" in body
    finally:
        sock.close()


def test_event_streams_per_client_are_capped(quad_server_factory):
    server = quad_server_factory()
    streams = [open_stream(server) for _ in range(8)]
    try:
        for sock in streams:
            assert b"200 OK" in read_until(sock, b"retry:")
        refused = server.request("/api/events")
        assert refused.status == 429
        assert refused.content_type == "application/problem+json"
        assert "retry-after" in refused.headers
    finally:
        for sock in streams:
            sock.close()


def test_sigterm_ends_event_streams_and_stops_cleanly(quad_server_factory):
    server = quad_server_factory()
    sock = open_stream(server)
    assert b"retry:" in read_until(sock, b"retry:")
    server.process.send_signal(signal.SIGTERM)
    assert server.process.wait(timeout=10) == 0
    rest = read_until(sock, b"never", limit=5)
    assert rest == b"" or rest.endswith(b"0\r\n\r\n"), "the stream was closed"
    sock.close()


def test_a_second_signal_stops_at_once(quad_server_factory):
    server = quad_server_factory()
    # A request whose body never finishes keeps the first, graceful, shutdown waiting.
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    # (As the admin: the access layer answers anyone else before reading the body.)
    sock.sendall(
        b"POST /api/images HTTP/1.1\r\nHost: x\r\nContent-Type: image/png\r\nContent-Length: 1000\r\n"
        + f"Authorization: Bearer {server.admin_token}\r\n\r\n".encode()
        + PNG[:8]
    )
    wait_until(lambda: server_has_read(server, sock), timeout=10, message="the server did not read the request's head")
    server.process.send_signal(signal.SIGTERM)
    with pytest.raises(subprocess.TimeoutExpired):
        server.process.wait(timeout=2)
    server.process.send_signal(signal.SIGTERM)
    assert server.process.wait(timeout=5) != 0
    sock.close()


def test_two_instances_on_postgresql_deliver_each_others_events(quad_server_factory, postgres_url):
    import json
    import uuid

    schema = "e2e_" + uuid.uuid4().hex[:12]
    separator = "&" if "?" in postgres_url else "?"
    database = f"{postgres_url}{separator}schema={schema}"
    first = quad_server_factory(demo=True, database=database)
    second = quad_server_factory(database=database)
    stream = open_stream(second, "/api/events?types=room")
    try:
        assert b"retry:" in read_until(stream, b"retry:")
        # LISTEN starts in the background: book until the other instance's stream hears it.
        heard = b""
        for attempt in range(20):
            person = {
                "username": f"walker{attempt}",
                "displayName": f"Walker {attempt}",
                "password": "correct horse battery",
            }
            first.request(
                "/api/people", "POST", {"Content-Type": "application/json"}, json.dumps(person).encode(), admin=True
            )
            token = first.request(
                "/api/sessions",
                "POST",
                {"Content-Type": "application/json"},
                json.dumps({"username": person["username"], "password": person["password"]}).encode(),
            ).json()["token"]
            booked = first.request(
                "/api/rooms/ljerka/bookings",
                "POST",
                {"Content-Type": "application/json", "Authorization": f"Bearer {token}"},
                b"{}",
            )
            assert booked.status == 201
            stream.settimeout(0.5)
            try:
                heard += stream.recv(65536)
            except TimeoutError:
                pass
            if b"event: room" in heard:
                break
        assert b"event: room" in heard and b'"ljerka"' in heard
        assert b"id: " in heard
        # The second instance's list reflects the first one's bookings (its snapshot was dropped by the event).
        spots = next(r["spots"] for r in second.request("/api/rooms").json()["rooms"] if r["id"] == "ljerka")
        assert spots < 43
    finally:
        stream.close()


def test_a_reconnecting_client_gets_what_it_missed(quad_server_factory):
    import json
    import re

    server = quad_server_factory(demo=True)
    admin = {"Content-Type": "application/json", "Authorization": f"Bearer {server.admin_token}"}

    def set_spots(spots: int) -> None:
        # Ljerka, in North Hall, open around the clock: its seats free now follow what it offers at any hour.
        assert server.request("/api/rooms/ljerka", "PATCH", admin, json.dumps({"spots": spots}).encode()).status == 200

    stream = open_stream(server, "/api/events?types=room")
    assert b"retry:" in read_until(stream, b"retry:")
    set_spots(30)
    seen = read_until(stream, b'"spots":30')
    last_id = re.findall(rb"id: (\d+)", seen)[-1].decode()
    stream.close()

    set_spots(20)  # missed while disconnected
    set_spots(10)
    again = open_stream(server, "/api/events?types=room", {"Last-Event-ID": last_id})
    try:
        replay = read_until(again, b'"spots":10')
        assert replay.index(b'"spots":20') < replay.index(b'"spots":10')
        assert b'"spots":30' not in replay, "nothing already seen is sent again"
    finally:
        again.close()
