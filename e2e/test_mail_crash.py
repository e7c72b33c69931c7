"""Mail survives a crash: while the relay is down, 100 loans' reminders and 100 books held for the next in line
wait in the outbox; Quad is killed (`kill -9`), then started again with the relay (aiosmtpd, e2e/smtp_sink.py) up.
Every message arrives, none twice, and no reminder comes for a book that was brought back."""

from __future__ import annotations

import collections
import datetime as dt
import json
import signal
import sqlite3
from pathlib import Path

from conftest import Sink, free_port, mail_settings, melbourne, wait_until
from helpers import account_token, give_address, person_username

PEOPLE = 10
LENT = 100  # lent, and reminded of the next day's due date
HELD = 100  # lent, waited for, brought back: each held for the one waiting


def pending(database: Path) -> collections.Counter:
    """The outbox's messages not yet sent, by kind, read from the database file as the server writes it (WAL)."""
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=10) as connection:
        rows = connection.execute("SELECT kind, COUNT(*) FROM mail_outbox WHERE state = 'pending' GROUP BY kind")
        return collections.Counter(dict(rows.fetchall()))


def test_kill_9_with_200_messages_waiting_for_a_relay_that_is_down_loses_none_and_sends_none_twice(
    quad_server_factory, tmp_path
):
    port = free_port()  # the relay's, not listening yet
    # Thirty seconds before a minute mark: the loans' reminders are queued on it (or the next, on a slow machine).
    server = quad_server_factory(
        demo=True,
        now=melbourne("10:00:30", "weekday"),
        env={**mail_settings(port), "QUAD_LOAN_DAYS": "1"},
    )
    database = server.workdir / "quad.sqlite"

    def post(path: str, token: str, body: dict | None = None):
        headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        return server.request(path, "POST", headers, json.dumps(body or {}).encode())

    readers = [account_token(server, f"Reader {n}") for n in range(PEOPLE)]
    waiters = [account_token(server, f"Waiter {n}") for n in range(PEOPLE)]
    for name in [f"Reader {n}" for n in range(PEOPLE)] + [f"Waiter {n}" for n in range(PEOPLE)]:
        give_address(server, person_username(name))

    books = []
    for n in range(LENT + HELD):
        created = server.request(
            "/api/books",
            "POST",
            {"Content-Type": "application/json"},
            json.dumps({"title": f"Volume {n}", "author": "A. Writer"}).encode(),
            admin=True,
        )
        assert created.status == 201, created.text
        books.append(created.json()["id"])
    for n, book in enumerate(books):
        reader = readers[n % PEOPLE]
        assert post(f"/api/books/{book}/checkout", reader).status == 200
        if n >= LENT:
            # Someone waits for it; it comes back at once: held for them, a message queued in the return's transaction.
            assert post(f"/api/books/{book}/holds", waiters[n % PEOPLE]).status == 201
            assert post(f"/api/books/{book}/return", reader).status == 200

    # The minute's keeper queues a reminder for each loan still out; none for those brought back.
    wait_until(
        lambda: pending(database) == {"offer": HELD, "dueSoon": LENT},
        timeout=150,
        message=f"200 messages waiting, by kind (now {dict(pending(database))})",
    )

    server.process.send_signal(signal.SIGKILL)
    server.process.wait(timeout=10)
    assert pending(database) == {"offer": HELD, "dueSoon": LENT}

    # The relay comes back on its address; Quad starts again ten minutes on: what it put off is due, and the claims
    # the killed instance held have lapsed.
    sink = Sink(tmp_path / "mail", port=port)
    try:
        server.restart(now=server.now() + dt.timedelta(minutes=10))
        wait_until(lambda: len(sink.messages()) >= LENT + HELD, timeout=120, message="every message arrived")
        wait_until(lambda: not pending(database), timeout=30, message="nothing left in the outbox")
        messages = sink.messages()
        ids = [message["message_id"] for message in messages]
        assert len(messages) == LENT + HELD
        assert len(set(ids)) == len(ids), "a message was sent twice"
        reminded = {
            m["subject"].removeprefix("Due back in two days: ") for m in messages if m["subject"].startswith("Due")
        }
        held = {m["subject"].rsplit(": ", 1)[1] for m in messages if m["subject"].startswith("Held for you until ")}
        assert reminded == {f"Volume {n}" for n in range(LENT)}
        assert held == {f"Volume {n}" for n in range(LENT, LENT + HELD)}
    finally:
        sink.stop()
