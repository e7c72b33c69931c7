#!/usr/bin/env python3
"""What a hostile client can still cost Quad: server CPU time per request for the most expensive requests a
client may send (each within the limits Quad keeps), measured on a running `quad serve` from the server
process's own CPU counters (/proc/<pid>/stat), not from the client's clock.

Usage:  QUAD_BIN=.build/release/quad python3 Benchmarks/hostile_cost.py   (prints a Markdown table)

Each row sends its request N times, one after another, and reports the server's CPU milliseconds per request
(user + system, all threads) and the wall milliseconds per request the client saw. A demo database on a
temporary SQLite file; rate limiting off (it would turn most rows into cheap 429s, which is the point of it,
but here the cost of the request itself is measured); open sign-up.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import socket
import struct
import subprocess
import sys
import tempfile
import time
import zlib

ADMIN = "hostile-cost-admin-token-0123456789"
TICK = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def cpu_seconds(pid: int) -> float:
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime, stime


def png(size_bytes: int, seed: int) -> bytes:
    """A whole PNG (IHDR 2000 x 2000, one IDAT of `size_bytes` bytes, IEND): Quad reads its structure,
    not its pixels."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    data = (seed.to_bytes(8, "big") * (size_bytes // 8 + 1))[:size_bytes]
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", 2000, 2000, 8, 2, 0, 0, 0))
        + chunk(b"IDAT", data)
        + chunk(b"IEND", b"")
    )


class Server:
    def __init__(self, binary: str, workdir: str):
        self.port = free_port()
        env = {
            **os.environ,
            "QUAD_ADMIN_TOKEN": ADMIN,
            "QUAD_RATE_LIMIT": "0",
            "QUAD_SIGNUP": "open",
            "QUAD_LOG_LEVEL": "warning",
        }
        self.log = open(os.path.join(workdir, "quad.log"), "w+")
        self.process = subprocess.Popen(
            [binary, "serve", "--port", str(self.port), "--database", os.path.join(workdir, "quad.sqlite")],
            cwd=workdir,
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if self.request("GET", "/health")[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.1)
        raise SystemExit("quad serve did not start")

    def password(self, username: str) -> str:
        self.log.flush()
        text = open(self.log.name).read()
        match = re.search(rf"^\s*{re.escape(username)} \(\w+\): (\S+)$", text, re.MULTILINE)
        assert match, f"no demo password for {username}"
        return match.group(1)

    def request(
        self, method: str, path: str, headers: dict | None = None, body: bytes | None = None, chunked: bool = False
    ) -> tuple[int, bytes]:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            if chunked:
                connection.request(
                    method,
                    path,
                    body=iter([body[i : i + 65536] for i in range(0, len(body), 65536)]),
                    headers=headers or {},
                    encode_chunked=True,
                )
            else:
                connection.request(method, path, body=body, headers=headers or {})
            response = connection.getresponse()
            return response.status, response.read()
        except (ConnectionError, http.client.HTTPException):
            return 0, b""
        finally:
            connection.close()

    def token(self, username: str) -> str:
        status, body = self.request(
            "POST",
            "/api/sessions",
            {"Content-Type": "application/json"},
            json.dumps({"username": username, "password": self.password(username)}).encode(),
        )
        assert status == 201, (status, body)
        return json.loads(body)["token"]

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=15)


def main() -> None:
    binary = os.path.abspath(os.environ.get("QUAD_BIN", ".build/release/quad"))
    with tempfile.TemporaryDirectory() as workdir:
        server = Server(binary, workdir)
        try:
            kier = {"Authorization": f"Bearer {server.token('kier')}"}
            ada = {"Authorization": f"Bearer {server.token('ada')}", "Content-Type": "application/json"}
            admin = {"Authorization": f"Bearer {ADMIN}", "Content-Type": "application/json"}
            counter = iter(range(10**9))
            mib = 1024 * 1024
            rows = [
                (
                    "sign-in, wrong password, a new name each time (bcrypt cost 12)",
                    10,
                    lambda: server.request(
                        "POST",
                        "/api/sessions",
                        {"Content-Type": "application/json"},
                        json.dumps({"username": f"nobody{next(counter)}", "password": "guess-guess-guess"}).encode(),
                    ),
                ),
                (
                    "open sign-up (bcrypt hash; 5 an hour per address)",
                    5,
                    lambda: server.request(
                        "POST",
                        "/signup",
                        {"Content-Type": "application/x-www-form-urlencoded", "Cookie": "quad_csrf=" + "c" * 43},
                        f"csrf={'c' * 43}&username=new{next(counter)}&displayName=New&password=long-enough-pw".encode(),
                    ),
                ),
                (
                    "a book with a 1 MiB title, refused (member)",
                    20,
                    lambda: server.request(
                        "POST", "/api/books", ada, json.dumps({"title": "a" * (mib - 100), "author": "x"}).encode()
                    ),
                ),
                (
                    "1 MiB of nested arrays (member)",
                    20,
                    lambda: server.request("POST", "/api/books", ada, b"[" * (mib - 1)),
                ),
                (
                    "2 MiB chunked body, refused at 1 MiB",
                    10,
                    lambda: server.request("POST", "/api/books", ada, b"a" * (2 * mib), chunked=True),
                ),
                (
                    "delete 100 books that do not exist (member)",
                    20,
                    lambda: server.request(
                        "POST", "/api/books/delete", ada, json.dumps({"ids": list(range(10**6, 10**6 + 100))}).encode()
                    ),
                ),
                (
                    "search the library for 200 characters",
                    50,
                    lambda: server.request("GET", "/api/books?q=" + "qz" * 100, ada),
                ),
                ("kier's week (GET /api/schedules)", 50, lambda: server.request("GET", "/api/schedules", kier)),
                ("kier's timetable page", 50, lambda: server.request("GET", "/timetable", kier)),
                (
                    "a 5 MiB image stored (admin)",
                    5,
                    lambda: server.request(
                        "POST", "/api/images", {**admin, "Content-Type": "image/png"}, png(5 * mib - 200, next(counter))
                    ),
                ),
                (
                    "a 100 KiB header, refused by the parser",
                    20,
                    lambda: server.request("GET", "/api/rooms", {"X-Junk": "a" * 102400}),
                ),
            ]
            print("| request (each within Quad's limits) | n | server CPU ms / request | wall ms / request | status |")
            print("|---|---:|---:|---:|---|")
            for name, count, send in rows:
                before, started = cpu_seconds(server.process.pid), time.monotonic()
                statuses = [send()[0] for _ in range(count)]
                cpu = (cpu_seconds(server.process.pid) - before) / count * 1000
                wall = (time.monotonic() - started) / count * 1000
                print(
                    f"| {name} | {count} | {cpu:.1f} | {wall:.1f} | {', '.join(sorted({str(s) for s in statuses}))} |"
                )
            sys.stdout.flush()
        finally:
            server.stop()


if __name__ == "__main__":
    main()
