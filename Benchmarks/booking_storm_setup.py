#!/usr/bin/env python3
"""Prepare Quad for the booking storm (and mixed-200-people): rooms, people and their API sessions.

usage: booking_storm_setup.py URL ADMIN_TOKEN TOKENS_FILE [--rooms 250] [--capacity 16] [--people 20]
                              [--prefix storm] [--budget-seconds S] [--rooms-only] [--email]

Through Quad's API, with the admin token (PREFIX "storm" below; mixed-200-people uses "mixed"):
  POST /api/rooms   {"name": "Storm k", "building": "Bench", "capacity": C}  -> ids storm-1..storm-R
  POST /api/people  {"username": "storm-pN", "displayName": "Storm person N", "password": ...}
  PATCH /api/people/storm-pN {"email": "storm-pN@bench.example"}   (--email: Quad mails each booking)
and, as each person, POST /api/sessions {"username", "password"} -> a bearer token.
Writes the tokens to TOKENS_FILE, one per line ("username token"), in person order.
With --budget-seconds, no new person is started once that many seconds have passed since the
people began: the file then holds fewer people than asked, and the summary line says so.

Bookings belong to the signed-in person and a person holds at most one spot per room,
so the storm needs people x rooms >= rooms x capacity, i.e. more people than a room has
spots. Creating a person and signing in each cost a bcrypt hash (cost 12), which is why
the default is few people and many small rooms. Standard library only.

--rooms-only makes the rooms and no people (booking-pgbench: its bookings are rows written by
pgbench, whose people need no account), and leaves TOKENS_FILE empty.
"""

import argparse
import concurrent.futures
import http.client
import json
import re
import secrets
import sys
import threading
import time
import urllib.parse

_local = threading.local()


def connection(base):
    conn = getattr(_local, "conn", None)
    if conn is None:
        u = urllib.parse.urlsplit(base)
        conn = _local.conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
    return conn


def call(base, method, path, body, token=None):
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = "Bearer " + token
    for attempt in (1, 2):  # one retry on a dropped keep-alive connection
        conn = connection(base)
        try:
            conn.request(method, path, json.dumps(body), headers)
            resp = conn.getresponse()
            data = resp.read()
            return resp.status, data
        except (http.client.HTTPException, OSError):
            conn.close()
            _local.conn = None
            if attempt == 2:
                raise


def expect(status, data, want, what):
    if status != want:
        sys.exit(f"{what}: HTTP {status} {data[:300].decode('utf-8', 'replace')}")
    return json.loads(data) if data else None


def make_person(base, admin, n, prefix="storm", email=False):
    username = f"{prefix}-p{n}"
    password = secrets.token_urlsafe(12)
    status, data = call(
        base,
        "POST",
        "/api/people",
        {"username": username, "displayName": f"{prefix.capitalize()} person {n}", "password": password},
        admin,
    )
    expect(status, data, 201, "creating person " + username)
    if email:
        status, data = call(base, "PATCH", f"/api/people/{username}", {"email": f"{username}@bench.example"}, admin)
        expect(status, data, 200, "giving " + username + " an address")
    status, data = call(base, "POST", "/api/sessions", {"username": username, "password": password})
    session = expect(status, data, 201, "signing in " + username)
    return username, session["token"]


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("url")
    p.add_argument("admin_token")
    p.add_argument("tokens_file")
    p.add_argument("--rooms", type=int, default=250)
    p.add_argument("--capacity", type=int, default=16)
    p.add_argument("--people", type=int, default=20)
    p.add_argument("--workers", type=int, default=4, help="concurrent people (bcrypt runs on Quad's thread pool)")
    p.add_argument("--prefix", default="storm", help="rooms '<Prefix> k' (ids <prefix>-k), people <prefix>-pN")
    p.add_argument("--budget-seconds", type=float, help="start no new person after this long (default: no limit)")
    p.add_argument("--allow-few-people", action="store_true", help="allow --people below --capacity")
    p.add_argument("--rooms-only", action="store_true", help="create the rooms only, no people")
    p.add_argument("--email", action="store_true", help="give each person an address (booking-storm-mail)")
    a = p.parse_args(argv[1:])
    if a.people < a.capacity and not a.allow_few_people and not a.rooms_only:
        p.error(f"--people ({a.people}) must be at least --capacity ({a.capacity}): one spot per person per room")
    if not re.fullmatch(r"[a-z][a-z0-9]*", a.prefix):
        p.error("--prefix: lowercase letters and digits, starting with a letter")

    title = a.prefix.capitalize()
    t0 = time.monotonic()
    for k in range(1, a.rooms + 1):
        status, data = call(
            a.url,
            "POST",
            "/api/rooms",
            {"name": f"{title} {k}", "building": "Bench", "capacity": a.capacity},
            a.admin_token,
        )
        room = expect(status, data, 201, f"creating room {title} {k}")
        if room.get("id") != f"{a.prefix}-{k}":
            sys.exit(f"room {title} {k} got id {room.get('id')!r}, expected {a.prefix}-{k}")
    t1 = time.monotonic()
    if a.rooms_only:
        open(a.tokens_file, "w").close()
        print(f"created {a.rooms} rooms x {a.capacity} spots in {t1 - t0:.1f} s (no people)", file=sys.stderr)
        return 0
    deadline = t1 + a.budget_seconds if a.budget_seconds is not None else None

    def person(n):
        if deadline is not None and time.monotonic() >= deadline:
            return None  # out of time: this one is not made
        return make_person(a.url, a.admin_token, n, a.prefix, a.email)

    with concurrent.futures.ThreadPoolExecutor(a.workers) as pool:
        people = [p for p in pool.map(person, range(1, a.people + 1)) if p]
    t2 = time.monotonic()
    if not people:
        sys.exit(f"no person signed in within {a.budget_seconds} s")
    with open(a.tokens_file, "w") as f:
        for username, token in people:
            f.write(f"{username} {token}\n")
    short = ""
    if len(people) < a.people:
        short = f" (of {a.people} asked: stopped starting new ones at the {a.budget_seconds:g} s budget)"
    print(
        f"created {a.rooms} rooms x {a.capacity} spots in {t1 - t0:.1f} s; "
        f"{len(people)} people signed in in {t2 - t1:.1f} s{short}",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
