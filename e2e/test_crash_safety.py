"""Crash safety: a `kill -9` in the middle of a booking storm loses no acknowledged booking.

On SQLite (a file of the test's own) and on PostgreSQL (a schema of the test's own in QUAD_TEST_POSTGRES_URL:
skipped locally when it is unset, required in CI):

1. A server with rooms made by the admin (some smaller than the crowd, so that they fill up) and members made by
   the admin, each signed in through the API.
2. Threads book concurrently, each (member, room) once, in a shuffled order. Every 201 is an acknowledged booking
   (its id and the spots it left); every 409 a refusal. Once a third of the storm is acknowledged, the server gets
   SIGKILL: the requests still in flight get no answer.
3. A new server opens the same database. Every acknowledged booking is there, as its owner sees it
   (GET /api/me/bookings), with the id it was given; nothing refused was kept; anything kept but not acknowledged
   was a request that got no answer; each room's spots are its capacity less its bookings (no spot taken without
   its booking, nor a booking without its spot); a room that answered "full" is still full; and booking still works.
"""

from __future__ import annotations

import collections
import json
import os
import random
import signal
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest

from conftest import http_request
from helpers import add_person, session_token

MEMBERS = 16  # each account costs two bcrypt runs (cost 12, not configurable): about 0.7 s in a debug build
# Room capacities: below, at and above the crowd, so some rooms fill up during the storm and others never do.
CAPACITIES = [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 16, 17, 20, 25, 40] * 2
STORM_THREADS = 16
KILL_AFTER = 1 / 3  # of the storm's requests acknowledged
PASSWORD = "correct horse battery staple"
JSON = {"Content-Type": "application/json"}


def bearer(token: str) -> dict:
    return {"Authorization": f"Bearer {token}"}


def rooms_of(server) -> dict:
    response = server.request("/api/rooms")
    assert response.status == 200, response.text
    return {room["id"]: room for room in response.json()["rooms"]}


def bookings_of(server, token: str) -> dict:
    """The member's bookings as they see them: room id -> booking id."""
    response = server.request("/api/me/bookings", headers=bearer(token))
    assert response.status == 200, f"GET /api/me/bookings: {response.status} {response.text}"
    mine = collections.defaultdict(list)
    for booking in response.json()["bookings"]:
        mine[booking["roomId"]].append(booking["id"])
    doubled = {room: ids for room, ids in mine.items() if len(ids) > 1}
    assert not doubled, f"one person holds several spots in a room: {doubled}"
    return {room: ids[0] for room, ids in mine.items()}


class Storm:
    """Books every (member, room) once from a pool of threads and keeps what each request got."""

    def __init__(self, server, intents: list[tuple[str, str]], tokens: dict[str, str]):
        self.server = server
        self.tokens = tokens
        self.queue = collections.deque(intents)
        self.lock = threading.Condition()
        self.stopping = threading.Event()
        self.acknowledged: dict[tuple[str, str], dict] = {}  # intent -> {"id", "spots"}
        self.refused: dict[tuple[str, str], str] = {}  # intent -> problem type
        self.cut_off: dict[tuple[str, str], str] = {}  # intent -> what the client saw: sent, never answered
        self.not_sent: set[tuple[str, str]] = set()  # the connection was refused: the server was gone
        self.unexpected: list[str] = []
        self.finished_workers = 0
        self.workers = STORM_THREADS

    def next_intent(self):
        with self.lock:
            if self.stopping.is_set() or not self.queue:
                return None
            return self.queue.popleft()

    def work(self) -> None:
        try:
            while (intent := self.next_intent()) is not None:
                self.send(intent)
        finally:
            with self.lock:
                self.finished_workers += 1
                self.lock.notify_all()

    def send(self, intent: tuple[str, str]) -> None:
        member, room = intent
        try:
            response = http_request(
                f"{self.server.url}/api/rooms/{room}/bookings",
                "POST",
                {**JSON, **bearer(self.tokens[member])},
                b"{}",
                timeout=20,
            )
        except Exception as error:  # reset, cut short, refused: the server died before answering
            with self.lock:
                if isinstance(getattr(error, "reason", error), ConnectionRefusedError):
                    self.not_sent.add(intent)
                else:
                    self.cut_off[intent] = f"{type(error).__name__}: {error}"
                self.lock.notify_all()
            return
        with self.lock:
            if response.status == 201:
                body = response.json()
                booking = body["booking"]
                if booking["roomId"] != room:
                    self.unexpected.append(f"{intent}: booked {booking['roomId']}")
                self.acknowledged[intent] = {"id": booking["id"], "spots": body["spots"]}
            elif response.status == 409:
                self.refused[intent] = response.json().get("type", "")
            else:
                self.unexpected.append(f"{intent}: {response.status} {response.text[:300]}")
            self.lock.notify_all()

    @property
    def done(self) -> bool:
        return self.finished_workers == self.workers


@pytest.mark.parametrize("engine", ["sqlite", "postgresql"])
def test_kill_9_during_a_booking_storm_loses_no_acknowledged_booking(engine, request, quad_server_factory, tmp_path):
    if engine == "sqlite":
        database = str(tmp_path / "crash.sqlite")
    else:
        postgres_url = request.getfixturevalue("postgres_url")
        separator = "&" if "?" in postgres_url else "?"
        database = f"{postgres_url}{separator}schema=e2e_crash_{uuid.uuid4().hex[:12]}"
    seed = int(os.environ.get("QUAD_CRASH_SEED") or time.time_ns() % 1_000_000)
    shuffle = random.Random(seed)
    print(f"seed {seed} (QUAD_CRASH_SEED={seed} replays this order)")

    server = quad_server_factory(database=database, env={"QUAD_RATE_LIMIT": "0"})

    # --- 1. Rooms and members ---------------------------------------------------------------------
    capacity = {f"storm-{i:02d}": c for i, c in enumerate(CAPACITIES)}
    for room, seats in capacity.items():
        made = server.request(
            "/api/rooms",
            "POST",
            JSON,
            json.dumps(
                {"id": room, "name": room.replace("-", " ").title(), "building": "Crash", "capacity": seats}
            ).encode(),
            admin=True,
        )
        assert made.status == 201, f"creating {room}: {made.status} {made.text}"

    def enrol(member: str) -> tuple[str, str]:
        add_person(server, member, PASSWORD)
        return member, session_token(server, member, PASSWORD)

    members = [f"storm-m{i:02d}" for i in range(MEMBERS)]
    with ThreadPoolExecutor(max_workers=4) as pool:
        tokens = dict(pool.map(enrol, members))

    # --- 2. The storm, and the kill --------------------------------------------------------------
    intents = [(member, room) for member in members for room in capacity]
    shuffle.shuffle(intents)
    storm = Storm(server, intents, tokens)
    threads = [threading.Thread(target=storm.work, name=f"storm-{i}", daemon=True) for i in range(STORM_THREADS)]
    kill_after = int(len(intents) * KILL_AFTER)
    started = time.monotonic()
    for thread in threads:
        thread.start()
    try:
        with storm.lock:
            reached = storm.lock.wait_for(lambda: len(storm.acknowledged) >= kill_after or storm.done, timeout=60)
            assert reached, f"only {len(storm.acknowledged)} of {kill_after} bookings acknowledged within 60 s"
            assert not storm.done, "the storm ended before the kill: nothing was in flight"
            acknowledged_at_kill = len(storm.acknowledged)
        server.process.send_signal(signal.SIGKILL)
        killed_at = time.monotonic()
        storm.stopping.set()
        assert server.process.wait(timeout=10) == -signal.SIGKILL, "the server did not die of SIGKILL"
    finally:
        storm.stopping.set()  # no new requests: what is left was never sent
        for thread in threads:
            thread.join(timeout=30)
    assert not any(thread.is_alive() for thread in threads), "storm threads still running 30 s after the kill"
    print(
        f"{engine}: {len(intents)} intents; killed {killed_at - started:.2f} s into the storm, with "
        f"{acknowledged_at_kill} acknowledged; at the end {len(storm.acknowledged)} acknowledged, "
        f"{len(storm.refused)} refused, {len(storm.cut_off)} cut off in flight, "
        f"{len(storm.not_sent) + len(storm.queue)} never reached the server"
    )
    assert not storm.unexpected, "answers other than 201 and 409 during the storm:\n" + "\n".join(storm.unexpected)
    assert all(kind.endswith("room-full") for kind in storm.refused.values()), (
        "refusals other than a full room (each person books each room once): "
        f"{collections.Counter(storm.refused.values())}"
    )
    assert storm.cut_off, "no request was in flight when the server was killed"

    # --- 3. A new server on the same database ----------------------------------------------------
    # (A new port: the dead server's may still be held by its connections' TIME_WAIT. Its clock runs on.)
    after = quad_server_factory(database=database, env={"QUAD_RATE_LIMIT": "0"}, now=server.now())
    kept: dict[tuple[str, str], str] = {}
    for member in members:
        for room, booking_id in bookings_of(after, tokens[member]).items():
            kept[(member, room)] = booking_id

    lost = {intent: ack["id"] for intent, ack in storm.acknowledged.items() if kept.get(intent) != ack["id"]}
    assert not lost, f"{len(lost)} acknowledged booking(s) lost or changed after kill -9 (seed {seed}): " + ", ".join(
        f"{m} in {r} ({i!r}, now {kept.get((m, r))!r})" for (m, r), i in sorted(lost.items())
    )
    kept_refused = sorted(set(storm.refused) & set(kept))
    assert not kept_refused, f"refused bookings were kept: {kept_refused}"
    unacknowledged = set(kept) - set(storm.acknowledged)
    assert unacknowledged <= set(storm.cut_off), (
        f"bookings kept that no request in flight made: {sorted(unacknowledged - set(storm.cut_off))}"
    )
    print(
        f"{engine}: {len(kept)} bookings kept: {len(storm.acknowledged)} acknowledged, "
        f"{len(unacknowledged)} committed without an answer (of {len(storm.cut_off)} cut off)"
    )

    # No half states: each room's free spots are its capacity less the bookings it holds.
    rooms = rooms_of(after)
    assert set(rooms) == set(capacity)
    held = collections.Counter(room for _, room in kept)
    mismatched = {
        room: (capacity[room], held[room], rooms[room]["spots"])
        for room in capacity
        if rooms[room]["capacity"] != capacity[room] or capacity[room] - held[room] != rooms[room]["spots"]
    }
    assert not mismatched, f"capacity - bookings != spots (room: capacity, bookings, spots): {mismatched}"
    # The storm's answers agree: spots only went down, each acknowledged booking left its own count, and a
    # room that answered "full" is still full.
    for room in capacity:
        left = [ack["spots"] for (_, r), ack in storm.acknowledged.items() if r == room]
        assert len(left) == len(set(left)), f"{room}: two bookings answered the same spots left: {sorted(left)}"
        assert all(rooms[room]["spots"] <= n < capacity[room] for n in left), (
            f"{room}: answered spots {sorted(left)} vs {rooms[room]['spots']} now (capacity {capacity[room]})"
        )
    full = {r for (_, r) in storm.refused}
    assert all(rooms[room]["spots"] == 0 for room in full), (
        f"rooms answered full but with spots now: { {r: rooms[r]['spots'] for r in full if rooms[r]['spots']} }"
    )

    # The database still takes bookings: one spot, exactly.
    untried = [(m, r) for (m, r) in [*storm.queue, *storm.not_sent] if rooms[r]["spots"] > 0]
    if untried:
        member, room = untried[0]
        booked = after.request(f"/api/rooms/{room}/bookings", "POST", {**JSON, **bearer(tokens[member])}, b"{}")
        assert booked.status == 201, f"booking after the restart: {booked.status} {booked.text}"
        assert booked.json()["spots"] == rooms[room]["spots"] - 1
        assert rooms_of(after)[room]["spots"] == rooms[room]["spots"] - 1
        assert bookings_of(after, tokens[member])[room] == booked.json()["booking"]["id"]
