"""The contract is the API: schemathesis generates requests from openapi.yaml (valid and invalid, one by one
and as sequences that create and then use resources, following the contract's links) against a live
`quad serve`, once as a member and once as the admin, and checks every answer against the contract: its
status is documented, its body matches the schema, no 5xx, valid data accepted, invalid data refused,
`Allow` right on 405. It must finish with no failure.

The settings (e2e/schemathesis/schemathesis.toml) list only the answers no schema can predict (an image's
bytes, a stale If-Match, rules over stored state); the hook gives each generated Idempotency-Key one intent.
"""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import session_token

HERE = Path(__file__).parent / "schemathesis"


def schemathesis_command() -> str:
    found = shutil.which("schemathesis") or str(Path(sys.executable).parent / "schemathesis")
    if not Path(found).exists():
        pytest.fail("schemathesis is missing: pip install -r e2e/requirements.txt", pytrace=False)
    return found


def run_schemathesis(server, workdir: Path, token: str, *exclusions: str) -> str:
    args = [
        schemathesis_command(),
        "--config-file",
        str(HERE / "schemathesis.toml"),
        "run",
        f"{server.url}/api/openapi.yaml",
        "--url",
        server.url,
        "--checks",
        "all",
        "-H",
        f"Authorization: Bearer {token}",
        "--exclude-path",
        "/api/events",
        "--max-examples",
        "30",
        "--seed",
        "1",
        "--workers",
        "1",
        "--no-color",
    ]
    for operation in exclusions:
        args += ["--exclude-operation-id", operation]
    env = {**os.environ, "PYTHONPATH": str(HERE)}
    # Its caches go to the test's own folder, not the checkout.
    result = subprocess.run(args, cwd=workdir, env=env, capture_output=True, text=True, timeout=600)
    output = result.stdout + result.stderr
    summary = [line for line in output.splitlines() if re.search(r"generated|failures?|passed|Tested|Selected", line)]
    print("\n".join(summary))
    assert result.returncode == 0, output[-6000:]
    return output


def test_the_server_keeps_its_contract_for_a_member_and_the_admin(quad_server_factory, tmp_path):
    """Every operation, as ada (a member) and then as the admin, with generated data: no failure of any check."""
    # Rate limits would turn thousands of generated requests into 429s: they are tested on their own.
    server = quad_server_factory(demo=True, env={"QUAD_RATE_LIMIT": "0"})
    member = session_token(server, "ada")
    # The member run keeps ada signed in; the admin run may remove people, so it comes second.
    run_schemathesis(server, tmp_path, member, "endSession")
    run_schemathesis(server, tmp_path, server.admin_token)


def test_every_event_on_the_stream_matches_its_schema_in_the_contract(quad_server_factory):
    """The event stream cannot be checked by schemathesis (it never ends): a listener reads it while rooms,
    specials, books, car parks and shuttles change, and each event's data matches the schema the contract
    names for its type (`x-quad-events`), with no person's name in it."""
    import datetime as dt
    import json
    import socket
    import threading

    import jsonschema
    import yaml

    from conftest import melbourne, wait_until

    server = quad_server_factory(demo=True, now=melbourne("10:00", day="tuesday"), env={"QUAD_RATE_LIMIT": "0"})
    contract = yaml.safe_load(server.request("/api/openapi.yaml").text)
    schemas = contract["components"]["schemas"]
    events = contract["paths"]["/api/events"]["get"]["x-quad-events"]
    wanted = {kind: schemas[ref["$ref"].rsplit("/", 1)[-1]] for kind, ref in events.items()}

    # Ada's own stream: her private events (`waiting`, `notice`) come on it too.
    token = session_token(server, "ada")
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=30)
    sock.sendall(
        b"GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n"
        + f"Authorization: Bearer {token}\r\n\r\n".encode()
    )
    received = bytearray()

    def listen():
        try:
            while chunk := sock.recv(65536):
                received.extend(chunk)
        except OSError:
            pass

    threading.Thread(target=listen, daemon=True).start()
    wait_until(lambda: b"retry: " in received, message="the stream did not start")

    ada = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    admin = {"Content-Type": "application/json"}

    def call(path, method, body, headers=admin, as_admin=True):
        answer = server.request(
            path, method, headers, json.dumps(body).encode() if body is not None else None, admin=as_admin
        )
        assert answer.status < 300, f"{method} {path}: {answer.status} {answer.text}"
        return answer

    call("/api/rooms", "POST", {"name": "Events Room", "building": "North", "capacity": 3})
    call("/api/rooms/events-room/bookings", "POST", {}, ada, as_admin=False)
    call(
        "/api/specials", "POST", {"display_name": "Kale", "width": 4, "height": 4, "original_price": "2", "price": "1"}
    )
    book = call("/api/books", "POST", {"title": "Events", "author": "A. Writer"}, ada, as_admin=False).json()
    call(f"/api/books/{book['id']}/checkout", "POST", None, ada, as_admin=False)
    # Ada waits for a book someone else has; it comes back and is held for her.
    waited = call("/api/books", "POST", {"title": "Waited", "author": "B. Writer"}).json()
    call(f"/api/books/{waited['id']}/checkout", "POST", {"name": "Someone Else"})
    call(f"/api/books/{waited['id']}/holds", "POST", None, ada, as_admin=False)
    call(f"/api/books/{waited['id']}/return", "POST", None)
    parking = call("/api/parkings", "GET", None).json()["parkings"][0]
    call(f"/api/parkings/{parking['id']}", "PUT", {"free": max(0, parking["capacity"] // 2)})
    departure = call("/api/departures", "GET", None).json()["departures"][0]
    expected = dt.datetime.fromisoformat(departure["expectedAt"].replace("Z", "+00:00")) + dt.timedelta(minutes=2)
    call(f"/api/departures/{departure['id']}", "PUT", {"predicted": expected.strftime("%Y-%m-%dT%H:%M:%SZ")})
    # The room Ada booked is removed: she is told (`notice`, on her own stream).
    call("/api/rooms/events-room", "DELETE", None)

    def frames() -> list[tuple[str, str]]:
        return re.findall(r"event: (\w+)\ndata: (.*)\n", bytes(received).decode("utf-8", "replace"))

    wait_until(
        lambda: set(wanted) <= {kind for kind, _ in frames()},
        timeout=15,
        message=f"not every kind of event came: {sorted({kind for kind, _ in frames()})}",
    )
    sock.close()
    for kind, data in frames():
        assert kind in wanted or kind == "reset", f"an event the contract does not name: {kind}"
        if kind in wanted:
            jsonschema.validate(json.loads(data), wanted[kind])
        assert "Ada" not in data and "ada" not in data, f"a name in a {kind} event: {data}"
