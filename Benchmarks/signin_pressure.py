"""Sign-ins that keep Quad hashing passwords: CLIENTS threads, each from a loopback address of its own (so that the
per-address sign-in limit, 30 failures in 15 minutes, does not stop them before the hashing does), each sending
POST /api/sessions with an unknown username (it costs the same bcrypt work as a wrong password) again and again,
for SECONDS, on a kept-alive connection; told to come back later (503, 429), it does, after `Retry-After`, as a
client should. Prints one line: SIGNIN clients=N s401=… s429=… s503=… other=…

usage: signin_pressure.py URL --seconds 14 [--clients 50]
"""

from __future__ import annotations

import argparse
import http.client
import ipaddress
import json
import threading
import time
import urllib.parse
from collections import Counter

FIRST = int(ipaddress.IPv4Address("127.0.3.1"))  # away from the addresses the other scenarios use


def client(url: str, index: int, until: float, counts: Counter, lock: threading.Lock) -> None:
    parsed = urllib.parse.urlparse(url)
    source = (str(ipaddress.IPv4Address(FIRST + index)), 0)
    connection = None
    n = 0
    while time.monotonic() < until:
        n += 1
        body = json.dumps({"username": f"nobody-{index}-{n}", "password": "not-a-password"})
        wait = 0.0
        try:
            if connection is None:
                connection = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=30, source_address=source)
            connection.request("POST", "/api/sessions", body, {"Content-Type": "application/json"})
            response = connection.getresponse()
            response.read()
            status = response.status
            # As a client should (QuadKit does): a 503 or 429 says when to come back.
            if status in (429, 503):
                wait = float(response.getheader("Retry-After") or 1)
        except (OSError, http.client.HTTPException):
            status = "error"
            connection = None
        with lock:
            counts[status] += 1
        if wait:
            time.sleep(min(wait, max(0.0, until - time.monotonic())))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("--seconds", type=float, required=True)
    parser.add_argument("--clients", type=int, default=50)
    args = parser.parse_args()
    until = time.monotonic() + args.seconds
    counts: Counter = Counter()
    lock = threading.Lock()
    threads = [
        threading.Thread(target=client, args=(args.url, i, until, counts, lock), daemon=True)
        for i in range(args.clients)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=args.seconds + 60)
    other = sum(n for status, n in counts.items() if status not in (401, 429, 503))
    print(
        f"SIGNIN clients={args.clients} s401={counts[401]} s429={counts[429]} s503={counts[503]} other={other}",
        flush=True,
    )


if __name__ == "__main__":
    main()
