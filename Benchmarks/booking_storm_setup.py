#!/usr/bin/env python3
"""Prepare Quad for the booking storm: rooms, people and their API sessions.

usage: booking_storm_setup.py URL ADMIN_TOKEN TOKENS_FILE [--rooms 250] [--capacity 16] [--people 20]

Through Quad's API, with the admin token:
  POST /api/rooms   {"name": "Storm k", "building": "Bench", "capacity": C}  -> ids storm-1..storm-R
  POST /api/people  {"username": "storm-pN", "displayName": "Storm person N", "password": ...}
and, as each person, POST /api/sessions {"username", "password"} -> a bearer token.
Writes the tokens to TOKENS_FILE, one per line ("username token"), in person order.

Bookings belong to the signed-in person and a person holds at most one spot per room,
so the storm needs people x rooms >= rooms x capacity, i.e. more people than a room has
spots. Creating a person and signing in each cost a bcrypt hash (cost 12), which is why
the default is few people and many small rooms. Standard library only.
"""

import argparse
import concurrent.futures
import http.client
import json
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


def make_person(base, admin, n):
    username = f"storm-p{n}"
    password = secrets.token_urlsafe(12)
    status, data = call(
        base,
        "POST",
        "/api/people",
        {"username": username, "displayName": f"Storm person {n}", "password": password},
        admin,
    )
    expect(status, data, 201, "creating person " + username)
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
    a = p.parse_args(argv[1:])
    if a.people < a.capacity:
        p.error(f"--people ({a.people}) must be at least --capacity ({a.capacity}): one spot per person per room")

    t0 = time.monotonic()
    for k in range(1, a.rooms + 1):
        status, data = call(
            a.url,
            "POST",
            "/api/rooms",
            {"name": f"Storm {k}", "building": "Bench", "capacity": a.capacity},
            a.admin_token,
        )
        room = expect(status, data, 201, f"creating room Storm {k}")
        if room.get("id") != f"storm-{k}":
            sys.exit(f"room Storm {k} got id {room.get('id')!r}, expected storm-{k}")
    t1 = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(a.workers) as pool:
        people = list(pool.map(lambda n: make_person(a.url, a.admin_token, n), range(1, a.people + 1)))
    t2 = time.monotonic()
    with open(a.tokens_file, "w") as f:
        for username, token in people:
            f.write(f"{username} {token}\n")
    print(
        f"created {a.rooms} rooms x {a.capacity} spots in {t1 - t0:.1f} s; "
        f"{len(people)} people signed in in {t2 - t1:.1f} s",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
