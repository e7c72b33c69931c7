"""Backups (issue 39): `quad backup` copies a SQLite database while a server books into it, and `quad restore` puts a
copy back. A booking storm runs while the copy is made; the copy is whole (`PRAGMA integrity_check`, read by Python's
own sqlite3), and restored into a new server it answers with every booking acknowledged before the backup began.
"""

from __future__ import annotations

import datetime as dt
import http.client
import json
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.parse
from pathlib import Path

from conftest import REPO_ROOT, wait_until

SETUP = REPO_ROOT / "Benchmarks" / "booking_storm_setup.py"


def storm(server, people: list[tuple[str, str]], rooms: int, stop: threading.Event, acked: list, lock) -> None:
    """Books as each person in turn into storm-1..storm-ROOMS (a person holds one spot per room), until `stop`;
    each acknowledged booking goes into `acked` with the monotonic time its 201 arrived."""
    start = (server.now().astimezone(dt.UTC) + dt.timedelta(days=1)).replace(hour=10, minute=0, second=0)
    body = json.dumps({"start": start.strftime("%Y-%m-%dT%H:%M:%SZ"), "minutes": 60})
    address = urllib.parse.urlsplit(server.url)
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=30)
    for _, token in people:
        for room in range(1, rooms + 1):
            if stop.is_set():
                return
            headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
            connection.request("POST", f"/api/rooms/storm-{room}/bookings", body, headers)
            answer = connection.getresponse()
            data = answer.read()
            if answer.status == 201:
                with lock:
                    acked.append((time.monotonic(), json.loads(data)["booking"]["id"], token))


def quad(binary: Path, *arguments) -> subprocess.CompletedProcess:
    return subprocess.run([str(binary), *map(str, arguments)], capture_output=True, text=True, timeout=120)


def test_a_backup_made_during_a_booking_storm_is_whole_and_keeps_every_booking_acknowledged_before_it(
    quad_server_factory, quad_binary, tmp_path
):
    server = quad_server_factory()
    database = server.workdir / "quad.sqlite"
    tokens = tmp_path / "tokens"
    made = subprocess.run(
        [sys.executable, SETUP, server.url, server.admin_token, tokens, "--rooms", "40", "--capacity", "12"]
        + ["--people", "12"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert made.returncode == 0, made.stderr
    people = [tuple(line.split()) for line in tokens.read_text().splitlines()]
    groups = [people[i::4] for i in range(4)]

    acked: list = []
    lock = threading.Lock()
    stop = threading.Event()
    threads = [threading.Thread(target=storm, args=(server, group, 40, stop, acked, lock)) for group in groups]
    for thread in threads:
        thread.start()
    try:
        deadline = time.monotonic() + 60
        while len(acked) < 100 and time.monotonic() < deadline:
            time.sleep(0.05)
        copy = tmp_path / "copy.sqlite"
        began = time.monotonic()
        backup = quad(quad_binary, "backup", "--database", database, copy)
        ended = time.monotonic()
        assert backup.returncode == 0, backup.stderr
        assert backup.stdout.startswith(f"Backed up {database} to {copy} ("), backup.stdout
        # The storm went on through the copy and after it.
        while len([a for a in acked if a[0] > ended]) < 20 and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    before = {(booking, token) for at, booking, token in acked if at < began}
    assert len(before) >= 100
    assert any(at > ended for at, _, _ in acked), "bookings were acknowledged after the copy, so it ran under load"

    with sqlite3.connect(f"file:{copy}?mode=ro", uri=True) as opened:
        assert opened.execute("PRAGMA integrity_check").fetchone() == ("ok",)

    # A server uses the database: no restore over it.
    refused = quad(quad_binary, "restore", "--database", database, copy)
    assert refused.returncode == 1
    assert refused.stderr == f"quad: a server is using {database}: stop it first\n"

    # Into a new place, then a new server on it: every booking acknowledged before the copy began is there.
    restored_at = tmp_path / "restored" / "quad.sqlite"
    restored_at.parent.mkdir()
    restore = quad(quad_binary, "restore", "--database", restored_at, copy)
    assert restore.returncode == 0, restore.stderr
    restored = quad_server_factory(database=str(restored_at))
    kept = set()
    for _, token in people:
        answer = restored.request("/api/me/bookings", headers={"Authorization": f"Bearer {token}"})
        assert answer.status == 200, answer.text
        kept |= {(booking["id"], token) for booking in answer.json()["bookings"]}
    assert before - kept == set(), f"{len(before - kept)} bookings acknowledged before the backup are missing"


def test_quad_keeps_rotating_copies_by_itself_and_the_admin_page_says_the_last_one(quad_server_factory, tmp_path):
    folder = tmp_path / "backups"
    folder.mkdir()
    server = quad_server_factory(env={"QUAD_BACKUP_DIR": str(folder), "QUAD_BACKUP_KEEP": "2"})
    wait_until(lambda: list(folder.glob("quad-*Z.sqlite")), message="the first copy, made at start")
    (copy,) = folder.glob("quad-*Z.sqlite")
    with sqlite3.connect(f"file:{copy}?mode=ro", uri=True) as opened:
        assert opened.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    page = server.request("/admin", admin=True)
    assert page.status == 200
    assert f'<div id="status-backup"><dt>Last backup</dt><dd>{copy.name}, ' in page.text
    assert '<div id="status-outbox"><dt>Mail waiting to go</dt><dd>0 messages</dd></div>' in page.text
    assert '<div id="status-sign-in"><dt>Sign-in</dt><dd>Quad passwords</dd></div>' in page.text
