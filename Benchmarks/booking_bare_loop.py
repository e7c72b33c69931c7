#!/usr/bin/env python3
"""The limit for the booking storm: Quad's booking transaction in a bare loop, no HTTP.

usage: booking_bare_loop.py DB_FILE [--rooms 250] [--capacity 16] [--people 20]
                            [--bookings N] [--seconds 10] [--compare-schema QUAD_DB] [--mail]

Creates DB_FILE (it must not exist) with Quad's rooms schema, in WAL mode with
synchronous=FULL and foreign_keys=ON (as Quad opens its SQLite file), adds the
rooms storm-1..storm-R with CAPACITY seats each, then books one seat per
transaction with exactly the statements Quad's ReservationStore.reserveAll runs
for a batch of one signed-in person's booking (the room's row with its free seats
now and whether anyone waits for it, the bookings overlapping the range, the
person's untimed booking there, the insert),
until N bookings (default: every seat) or SECONDS, whichever comes first.
People storm-p1..storm-pP each sweep all rooms in turn, as the storm's wrk
script does, with the same time ranges: an hour from tomorrow 10:00 UTC plus
(pass mod 4) quarter hours. One connection, one booking per transaction: the
issue's limit. (Quad writes concurrent bookings several to a transaction, one
flush for all, in these four statements whatever their number: see
BookingBatcher and ReservationStore.reserveAll.)

Not included (Quad does them per booking request, outside the transaction): the
session lookup, the building's rules and the campus's time zone (a SELECT
each), and publishing the event.

--mail: each transaction also queues the booking's message as Quad does with mail
on (booking-storm-mail-on): one row in the mail outbox, its letter's input being
the booking's note (Outbox.insert, which Quad runs just before the commit).

--compare-schema QUAD_DB compares the rooms tables' schema (and with --mail the
outbox's) with Quad's database file and reports whether they match (the copy
below can drift).

Prints one JSON object: bookings, seconds, bookings_per_s, p50_us, p99_us (per
transaction, BEGIN..COMMIT), sqlite version, schema_matches. Standard library only.
"""

import argparse
import base64
import datetime
import json
import os
import re
import sqlite3
import sys
import time

SCHEMA = [
    "CREATE TABLE rooms (id TEXT PRIMARY KEY, name TEXT NOT NULL, name_key TEXT NOT NULL UNIQUE,"
    " building TEXT NOT NULL, capacity INTEGER NOT NULL CHECK (capacity > 0),"
    " spots INTEGER NOT NULL CHECK (spots >= 0 AND spots <= capacity), photo TEXT, created_at TEXT NOT NULL)",
    "CREATE TABLE room_bookings (id TEXT PRIMARY KEY, room_id TEXT NOT NULL REFERENCES rooms (id) ON DELETE CASCADE,"
    " person TEXT NOT NULL, person_key TEXT, created_at TEXT NOT NULL, UNIQUE (room_id, person_key))",
    "CREATE INDEX room_bookings_room ON room_bookings (room_id)",
    # Quad's migrations 101-103 (rooms in time) and 501 (accounts: bookings belong to someone)
    "CREATE TABLE room_reservations (id TEXT PRIMARY KEY,"
    " room_id TEXT NOT NULL REFERENCES rooms (id) ON DELETE CASCADE,"
    " owner TEXT NOT NULL, person TEXT NOT NULL, hold TEXT NOT NULL CHECK (hold IN ('seat', 'room')),"
    " first_slot INTEGER NOT NULL, end_slot INTEGER NOT NULL CHECK (end_slot > first_slot),"
    " series_id TEXT, created_at TEXT NOT NULL)",
    "CREATE INDEX room_reservations_room_time ON room_reservations (room_id, end_slot)",
    "CREATE INDEX room_reservations_owner ON room_reservations (owner)",
    "CREATE TABLE room_buildings (name_key TEXT PRIMARY KEY, name TEXT NOT NULL, hours TEXT NOT NULL,"
    " horizon_days INTEGER NOT NULL CHECK (horizon_days BETWEEN 1 AND 365),"
    " max_minutes INTEGER NOT NULL CHECK (max_minutes BETWEEN 15 AND 1440),"
    " check_in_minutes INTEGER CHECK (check_in_minutes BETWEEN 5 AND 240))",
    "ALTER TABLE rooms ADD COLUMN hours TEXT",
    "ALTER TABLE room_reservations ADD COLUMN check_in_by INTEGER",
    "ALTER TABLE room_reservations ADD COLUMN checked_in_at TEXT",
    "CREATE INDEX room_reservations_check_in ON room_reservations (check_in_by)",
    "ALTER TABLE room_bookings ADD COLUMN owner TEXT",
    # Quad's migration 105: a booking for a group holds its number of seats
    "ALTER TABLE room_reservations ADD COLUMN seats INTEGER NOT NULL DEFAULT 1 CHECK (seats >= 1)",
    # The platform's migration 6: waiting lines (Quad reads a room's before deciding a booking; empty in the storm)
    "CREATE TABLE waiting_places (id TEXT PRIMARY KEY, kind TEXT NOT NULL, thing TEXT NOT NULL, detail TEXT NOT NULL,"
    " owner TEXT NOT NULL, name TEXT NOT NULL, label TEXT NOT NULL, seq INTEGER NOT NULL, joined_at TEXT NOT NULL,"
    " offered_until BIGINT)",
    "CREATE UNIQUE INDEX waiting_places_person ON waiting_places (kind, thing, detail, owner)",
]

# The platform's migrations 8-10: the mail outbox (--mail).
MAIL_SCHEMA = [
    "CREATE TABLE mail_outbox (id TEXT PRIMARY KEY, owner TEXT, kind TEXT NOT NULL, recipient TEXT NOT NULL,"
    " sender TEXT NOT NULL, subject TEXT NOT NULL, message TEXT NOT NULL, created_at TEXT NOT NULL,"
    " due_at BIGINT NOT NULL, tries INTEGER NOT NULL DEFAULT 0,"
    " state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'sent', 'failed')),"
    " claimed_until BIGINT, sent_at TEXT, error TEXT)",
    "CREATE INDEX mail_outbox_due ON mail_outbox (state, due_at)",
    "CREATE INDEX mail_outbox_owner ON mail_outbox (owner, created_at)",
    "ALTER TABLE mail_outbox ADD COLUMN about TEXT",
    "CREATE INDEX mail_outbox_about ON mail_outbox (about) WHERE about IS NOT NULL",
    "ALTER TABLE mail_outbox ADD COLUMN letter TEXT",
    "ALTER TABLE mail_outbox ADD COLUMN input TEXT",
]
# Outbox.insert, for a transaction that queued one message.
QUEUE_MAIL = (
    "INSERT INTO mail_outbox (id, owner, kind, recipient, sender, subject, message, created_at, due_at, about,"
    " letter, input) VALUES (?, ?, ?, '', '', '', '', ?, ?, ?, ?, ?)"
)


def booking_note(room_name, first_slot, minutes):
    """A booking's note as Quad's BookingMail encodes it (JSONEncoder: its keys unordered, `/` escaped)."""
    day = datetime.datetime.fromtimestamp(first_slot * 900, datetime.UTC)
    entry = {
        "location": f"{room_name}, Bench",
        "uid": booking_id(),
        "minutes": minutes,
        "summary": room_name,
        "first": day.strftime("%Y-%m-%d"),
        "start": {"minutes": day.hour * 60 + day.minute},
        "excluded": [],
    }
    note = {
        "entry": entry,
        "cancel": False,
        "stamp": time.time() - 978307200,  # Foundation's reference date, 2001
        "rest": False,
        "timeZone": "Australia/Melbourne",
        "news": "booked",
        "sequence": 0,
    }
    return json.dumps(note, separators=(",", ":")).replace("/", "\\/")


# Quad's RoomStore.rows as ReservationStore.reserveAll reads it for a batch's rooms (here one): each room's free
# seats at a quarter hour, and whether anyone waits in its lines.
ROOM_NOW = (
    "SELECT r.id, r.name, r.building, r.capacity, r.spots, r.photo, r.hours AS room_hours,"
    " b.hours AS building_hours,"
    " (SELECT COUNT(*) FROM room_bookings k WHERE k.room_id = r.id) AS standing,"
    " (SELECT COALESCE(SUM(v.seats), 0) FROM room_reservations v WHERE v.room_id = r.id AND v.hold = ?"
    "  AND v.first_slot <= ? AND v.end_slot > ?) AS seats_held,"
    " (SELECT COALESCE(SUM(v.seats), 0) FROM room_reservations v WHERE v.room_id = r.id AND v.hold = ?"
    "  AND v.first_slot <= ? AND v.end_slot > ?) AS whole,"
    ' CASE WHEN EXISTS (SELECT 1 FROM waiting_places WHERE kind = ? AND thing = "r"."id") THEN 1 ELSE 0 END'
    " AS lines"
    " FROM rooms r LEFT JOIN room_buildings b ON b.name_key = LOWER(r.building) WHERE r.id IN (?)"
)
# reserveAll's read of the bookings overlapping the times asked in each room (here one room, one range).
OVERLAPPING = (
    "SELECT id, room_id, owner, person, hold, seats, first_slot, end_slot, series_id, created_at, check_in_by,"
    " checked_in_at FROM room_reservations WHERE (room_id = ? AND end_slot > ? AND first_slot < ?)"
    " ORDER BY first_slot, id"
)
# reserveAll's read of the batch's people's untimed bookings in the rooms they ask for.
STANDING = "SELECT room_id, owner FROM room_bookings WHERE room_id IN (?) AND owner IN (?)"


def schema_of(db, mail=False):
    """The rooms tables' schema (and the outbox's), whitespace-normalized, for comparing two databases."""
    tables = ["rooms", "room_bookings", "room_reservations", "room_buildings"] + (["mail_outbox"] if mail else [])
    rows = db.execute(
        "SELECT type, name, sql FROM sqlite_master"
        f" WHERE tbl_name IN ({', '.join('?' * len(tables))}) AND sql IS NOT NULL ORDER BY type, name",
        tables,
    ).fetchall()
    norm = []
    for kind, name, sql in rows:
        sql = re.sub(r"\s+", " ", sql)
        sql = re.sub(r"\s*([(),])\s*", r"\1", sql).strip()
        norm.append((kind, name, sql))
    return norm


def now_iso():
    # Quad: ISO8601DateFormatter().string(from: Date()), e.g. 2025-01-31T12:00:00Z
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def booking_id():
    # Quad: SecureRandom.base64url(byteCount: 16), without padding
    return base64.urlsafe_b64encode(os.urandom(16)).rstrip(b"=").decode()


def percentile(sorted_values, pct):
    if not sorted_values:
        return None
    k = min(len(sorted_values) - 1, max(0, int(round(pct / 100.0 * len(sorted_values))) - 1))
    return sorted_values[k]


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("db")
    p.add_argument("--rooms", type=int, default=250)
    p.add_argument("--capacity", type=int, default=16)
    p.add_argument("--people", type=int, default=20)
    p.add_argument("--compare-schema", metavar="QUAD_DB")
    p.add_argument("--bookings", type=int, default=0, help="default: rooms x capacity")
    p.add_argument("--seconds", type=float, default=10.0)
    p.add_argument("--mail", action="store_true", help="queue each booking's message in the outbox, as Quad with mail")
    a = p.parse_args(argv[1:])
    target = a.bookings or a.rooms * a.capacity
    if os.path.exists(a.db):
        p.error(f"{a.db} exists; give a fresh file")

    db = sqlite3.connect(a.db, isolation_level=None)  # autocommit: we write BEGIN/COMMIT ourselves
    mode = db.execute("PRAGMA journal_mode = WAL").fetchone()[0]
    if mode.lower() != "wal":
        sys.exit(f"could not switch {a.db} to WAL (got {mode})")
    db.execute("PRAGMA synchronous = FULL")
    db.execute("PRAGMA foreign_keys = ON")
    db.execute("BEGIN IMMEDIATE")
    for statement in SCHEMA + (MAIL_SCHEMA if a.mail else []):
        db.execute(statement)
    rooms = []
    for k in range(1, a.rooms + 1):
        room_id, name = f"storm-{k}", f"Storm {k}"
        db.execute(
            "INSERT INTO rooms (id, name, name_key, building, capacity, spots, photo, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (room_id, name, name.lower(), "Bench", a.capacity, a.capacity, None, now_iso()),
        )
        rooms.append(room_id)
    db.execute("COMMIT")

    # Tomorrow 10:00 UTC, in quarter hours since 1970: the storm's ranges start there (see lua/booking-storm.lua).
    base = (int(time.time()) // 86400 + 1) * 96 + 40
    durations = []
    booked = full = 0
    i = 0
    start = time.perf_counter()
    deadline = start + a.seconds
    clock = time.perf_counter
    while booked < target:
        t0 = clock()
        if t0 >= deadline:
            break
        room_id = rooms[i % len(rooms)]
        # Quad: person = display name, person_key = owner = username, lowercased
        n = (i // len(rooms)) % a.people + 1
        person, person_key = f"Storm person {n}", f"storm-p{n}"
        i += 1
        first = base + ((i - 1) // len(rooms)) % 4  # this person's pass over the rooms
        db.execute("BEGIN IMMEDIATE")
        try:
            now_slot = int(time.time()) // 900
            args = ("seat", now_slot, now_slot, "room", now_slot, now_slot, "room", room_id)
            room = db.execute(ROOM_NOW, args).fetchone()
            seats = room[4]  # spots, less the untimed bookings (none here)
            held = db.execute(OVERLAPPING, (room_id, first, first + 4)).fetchall()
            standing = db.execute(STANDING, (room_id, person_key)).fetchone()
            # Quad's Occupancy: a seat is free in every quarter hour of the range.
            peak = max(sum(h[5] for h in held if h[6] <= slot < h[7]) for slot in range(first, first + 4))
            if standing is not None or any(h[2] == person_key for h in held) or peak >= seats:
                db.execute("ROLLBACK")
                full += 1
                if full > len(rooms):  # every room full (only when --bookings exceeds the seats)
                    break
                continue
            full = 0
            db.execute(
                "INSERT INTO room_reservations"
                " (id, room_id, owner, person, hold, seats, first_slot, end_slot, series_id, created_at, check_in_by)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (booking_id(), room_id, person_key, person, "seat", 1, first, first + 4, None, now_iso(), None),
            )
            if a.mail:
                queued = (booking_id(), person_key, "booked", now_iso(), int(time.time()), None, "booking")
                db.execute(QUEUE_MAIL, (*queued, booking_note(room[1], first, 60)))
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
        durations.append(clock() - t0)
        booked += 1
    elapsed = clock() - start
    stored = db.execute("SELECT COUNT(*) FROM room_reservations").fetchone()[0]
    schema_matches = None
    if a.compare_schema:
        quad = sqlite3.connect(f"file:{a.compare_schema}?mode=ro", uri=True)
        schema_matches = schema_of(quad, a.mail) == schema_of(db, a.mail)
        if not schema_matches:
            print(
                f"schema differs from {a.compare_schema}:\n  ours: {schema_of(db, a.mail)}\n"
                f"  Quad: {schema_of(quad, a.mail)}",
                file=sys.stderr,
            )
        quad.close()
    db.close()

    durations.sort()
    p50, p99 = percentile(durations, 50), percentile(durations, 99)
    print(
        json.dumps(
            {
                "bookings": booked,
                "stored": stored,
                "seconds": round(elapsed, 6),
                "bookings_per_s": round(booked / elapsed, 1) if elapsed > 0 else None,
                "stopped_by": "count" if booked >= target else "time" if elapsed >= a.seconds else "full",
                "p50_us": None if p50 is None else round(p50 * 1e6, 1),
                "p99_us": None if p99 is None else round(p99 * 1e6, 1),
                "sqlite": sqlite3.sqlite_version,
                "journal_mode": mode,
                "schema_matches": schema_matches,
                "mail": a.mail,
            }
        )
    )
    return 0 if stored == booked else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
