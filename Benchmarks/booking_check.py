#!/usr/bin/env python3
"""Check Quad's database after the booking storm: no room overbooked.

usage: booking_check.py DB_FILE [--prefix storm-]

Run it after Quad has stopped. For every room whose id starts with PREFIX it
checks, with the stdlib sqlite3 module, that spots >= 0 and that
spots == capacity - (its rows in room_bookings). Prints "overbooked: N" (rooms
that break either rule) and the details of each such room on stderr, and one
JSON object on stdout: rooms, full_rooms, capacity, stored (bookings held),
overbooked, violations. Exit status 1 if any room breaks a rule or there is no
such room at all.
"""

import argparse
import json
import sqlite3
import sys


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("db")
    p.add_argument("--prefix", default="storm-")
    a = p.parse_args(argv[1:])

    # Read-only, so a missing file is an error rather than a new empty database.
    db = sqlite3.connect(f"file:{a.db}?mode=ro", uri=True)
    rows = db.execute(
        "SELECT r.id, r.capacity, r.spots,"
        " (SELECT COUNT(*) FROM room_bookings b WHERE b.room_id = r.id) AS booked"
        " FROM rooms r WHERE substr(r.id, 1, ?) = ? ORDER BY r.id",
        (len(a.prefix), a.prefix),
    ).fetchall()
    db.close()

    violations = []
    for room_id, capacity, spots, booked in rows:
        if spots < 0 or spots != capacity - booked:
            violations.append({"id": room_id, "capacity": capacity, "spots": spots, "bookings": booked})
    print(f"overbooked: {len(violations)}", file=sys.stderr)
    for v in violations:
        print(f"  {v['id']}: capacity {v['capacity']}, spots {v['spots']}, bookings {v['bookings']}", file=sys.stderr)
    if not rows:
        print(f"no room with an id starting {a.prefix!r} in {a.db}", file=sys.stderr)
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
