#!/usr/bin/env python3
"""Check Quad's database after the booking storm: no room overbooked at any instant.

usage: booking_check.py DATABASE [--prefix storm-]

DATABASE is Quad's SQLite file, or a postgres:// URL. For every room whose id
starts with PREFIX it counts, quarter hour by quarter hour, the seats its
bookings in time hold (room_reservations; a whole-room booking holds them all)
plus the bookings made before rooms had time (room_bookings, held at every
instant), and checks that they never exceed the seats the room offers (spots)
and that a whole-room booking shares its time with no other. Prints
"overbooked: N" (rooms that break a rule) and the details of each such room on
stderr, and one JSON object on stdout: rooms, full_rooms (whose busiest quarter
hour is full), capacity, stored (bookings held), overbooked, violations. Exit
status 1 if any room breaks a rule or there is no such room at all.

SQLite: read-only with the stdlib sqlite3 module, after Quad has stopped.
PostgreSQL: through psql (no Python driver needed), while Quad may still run:
the query is one statement, so it sees one consistent snapshot of every room.
"""

import argparse
import json
import sqlite3
import subprocess
import sys
import urllib.parse

# One row per room, with its bookings in time as "first:end:hold" items joined by spaces (one statement,
# so PostgreSQL reads every room in one snapshot).
QUERY = (
    "SELECT r.id, r.spots,"
    " (SELECT COUNT(*) FROM room_bookings b WHERE b.room_id = r.id) AS standing,"
    " COALESCE((SELECT {concat} FROM room_reservations v WHERE v.room_id = r.id), '') AS held"
    " FROM rooms r WHERE substr(r.id, 1, {n}) = {prefix} ORDER BY r.id"
)
SQLITE_CONCAT = "group_concat(v.first_slot || ':' || v.end_slot || ':' || v.hold, ' ')"
POSTGRES_CONCAT = "string_agg(v.first_slot || ':' || v.end_slot || ':' || v.hold, ' ')"


def shown(db):
    """The database as it may be printed: a URL without its password and query."""
    u = urllib.parse.urlsplit(db)
    if not u.scheme.startswith("postgres"):
        return db
    host = u.hostname or ""
    host += f":{u.port}" if u.port else ""
    return f"{u.scheme}://{u.username + '@' if u.username else ''}{host}{u.path}"


def rows_sqlite(path, prefix):
    # Read-only, so a missing file is an error rather than a new empty database.
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    rows = db.execute(QUERY.format(concat=SQLITE_CONCAT, n="?", prefix="?"), (len(prefix), prefix)).fetchall()
    db.close()
    return rows


def rows_postgres(url, prefix):
    # The query goes on stdin, where psql interpolates :'prefix' as a quoted literal (-c would not).
    # Quad-only query items (?pool=, ?schema=) are not libpq's: the URL is used without them.
    psql = ["psql", "-X", "-q", "-A", "-t", "-F", "\t", "-v", "ON_ERROR_STOP=1", "-v", f"prefix={prefix}"]
    out = subprocess.run(
        psql + [url.split("?")[0]],
        input=QUERY.format(concat=POSTGRES_CONCAT, n=len(prefix), prefix=":'prefix'") + ";\n",
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        sys.exit(f"psql failed (exit {out.returncode}): {out.stderr.strip()}")
    rows = []
    for line in out.stdout.splitlines():
        if line:
            room_id, spots, standing, held = line.split("\t")
            rows.append((room_id, int(spots), int(standing), held))
    return rows


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("db", help="Quad's SQLite file or a postgres:// URL")
    p.add_argument("--prefix", default="storm-")
    a = p.parse_args(argv[1:])

    if a.db.startswith(("postgres://", "postgresql://")):
        rows = rows_postgres(a.db, a.prefix)
    else:
        rows = rows_sqlite(a.db, a.prefix)

    violations, full, stored = [], 0, 0
    for room_id, spots, standing, held in rows:
        seats, whole = {}, {}
        items = [item.split(":") for item in (held or "").split()]
        for first, end, hold in items:
            for slot in range(int(first), int(end)):
                table = whole if hold == "room" else seats
                table[slot] = table.get(slot, 0) + 1
        slots = set(seats) | set(whole)
        peak = max((seats.get(s, 0) + standing for s in slots), default=standing)
        shared = [s for s in whole if whole[s] > 1 or seats.get(s, 0) > 0]
        stored += len(items) + standing
        full += peak >= spots
        if peak > spots or shared:
            violations.append({"id": room_id, "spots": spots, "peak": peak, "whole_room_shared": len(shared)})
    print(f"overbooked: {len(violations)}", file=sys.stderr)
    for v in violations:
        print(
            f"  {v['id']}: spots {v['spots']}, at most {v['peak']} held at once,"
            f" {v['whole_room_shared']} quarter hours of a whole-room booking shared",
            file=sys.stderr,
        )
    if not rows:
        print(f"no room with an id starting {a.prefix!r} in {shown(a.db)}", file=sys.stderr)
    print(
        json.dumps(
            {
                "rooms": len(rows),
                "full_rooms": full,
                "capacity": sum(r[1] for r in rows),
                "stored": stored,
                "overbooked": len(violations),
                "violations": violations,
            }
        )
    )
    return 1 if violations or not rows else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
