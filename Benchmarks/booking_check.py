#!/usr/bin/env python3
"""Check Quad's database after the booking storm: no room overbooked.

usage: booking_check.py DATABASE [--prefix storm-]

DATABASE is Quad's SQLite file, or a postgres:// URL. For every room whose id
starts with PREFIX it checks that spots >= 0 and that
spots == capacity - (its rows in room_bookings). Prints "overbooked: N" (rooms
that break either rule) and the details of each such room on stderr, and one
JSON object on stdout: rooms, full_rooms, capacity, stored (bookings held),
overbooked, violations. Exit status 1 if any room breaks a rule or there is no
such room at all.

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

QUERY = (
    "SELECT r.id, r.capacity, r.spots,"
    " (SELECT COUNT(*) FROM room_bookings b WHERE b.room_id = r.id) AS booked"
    " FROM rooms r WHERE substr(r.id, 1, {n}) = {prefix} ORDER BY r.id"
)


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
    rows = db.execute(QUERY.format(n="?", prefix="?"), (len(prefix), prefix)).fetchall()
    db.close()
    return rows


def rows_postgres(url, prefix):
    # The query goes on stdin, where psql interpolates :'prefix' as a quoted literal (-c would not).
    # Quad-only query items (?pool=, ?schema=) are not libpq's: the URL is used without them.
    psql = ["psql", "-X", "-q", "-A", "-t", "-F", "\t", "-v", "ON_ERROR_STOP=1", "-v", f"prefix={prefix}"]
    out = subprocess.run(
        psql + [url.split("?")[0]],
        input=QUERY.format(n=len(prefix), prefix=":'prefix'") + ";\n",
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        sys.exit(f"psql failed (exit {out.returncode}): {out.stderr.strip()}")
    rows = []
    for line in out.stdout.splitlines():
        if line:
            room_id, capacity, spots, booked = line.split("\t")
            rows.append((room_id, int(capacity), int(spots), int(booked)))
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

    violations = []
    for room_id, capacity, spots, booked in rows:
        if spots < 0 or spots != capacity - booked:
            violations.append({"id": room_id, "capacity": capacity, "spots": spots, "bookings": booked})
    print(f"overbooked: {len(violations)}", file=sys.stderr)
    for v in violations:
        print(f"  {v['id']}: capacity {v['capacity']}, spots {v['spots']}, bookings {v['bookings']}", file=sys.stderr)
    if not rows:
        print(f"no room with an id starting {a.prefix!r} in {shown(a.db)}", file=sys.stderr)
    print(
        json.dumps(
            {
                "rooms": len(rows),
                "full_rooms": sum(1 for r in rows if r[2] == 0),
                "capacity": sum(r[1] for r in rows),
                "stored": sum(r[3] for r in rows),
                "overbooked": len(violations),
                "violations": violations,
            }
        )
    )
    return 1 if violations or not rows else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
