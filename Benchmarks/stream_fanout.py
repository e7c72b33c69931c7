#!/usr/bin/env python3
"""Open many Server-Sent Events streams to Quad, then time a booking's event reaching each of them, in two rounds.

usage: stream_fanout.py URL ADMIN_TOKEN --pid QUAD_PID [--streams 10000] [--per-address 8] [--workers 2]
                        [--path /api/events] [--inflight 64] [--setup-timeout 180] [--wait 10] [--quiet 0.8]

1. Setup, with the admin token: a room of one spot for each round (POST /api/rooms, "Fanout <pid> <round>") and a
   person (POST /api/people, then POST /api/sessions for a bearer token). All before any stream opens, so a room's
   own "created" event is not mistaken for a booking's.
2. Opens --streams streams (GET --path). Quad lets one client (an anonymous one is an IP address)
   hold at most 8 streams, so stream i binds its socket to the loopback address 127.0.0.2 + i // 8
   before connecting: all of 127.0.0.0/8 is loopback on Linux. A stream is ready once its headers
   (200) and its first body bytes ("retry: 2000", sent once the server subscribed it) have arrived.
   At most --inflight streams per worker are being opened at once, so the connects never overflow
   Quad's listen backlog (NIO's default, 256).
3. Once every stream is ready: Quad's VmRSS from /proc/PID/status (and its open descriptors).
4. The rounds (ROUNDS), each one booking, POST /api/rooms/<its room>/bookings (bearer, body {}), on a connection
   opened beforehand, once a stream of the coordinator's own has had bytes and then none for --quiet seconds: a
   burst of the demo's events (or a heartbeat) was written to every stream, and read; the next is furthest away.
   For each stream: the time from just before the request is sent to that stream receiving the room's event
   ("event: room", data with the room's id). Reports p50, p99, max (the last stream) and the deciles, for each
   round; the top-level figures are the idle round's.
5. Closes every stream, and reads Quad's VmRSS again 2 s later.

The client is cheap: the streams are shared among --workers processes (fork),
each a plain epoll loop over raw non-blocking sockets (no asyncio layers: a read costs a few
microseconds). Receive times are time.monotonic() taken as poll() returns with the bytes, which is
system-wide, so the workers' times and the booking's send time compare directly. Every socket also asks the
kernel for its receive timestamps (SO_TIMESTAMPNS, wall clock): "kernel" figures are when the bytes reached the
client's socket, whatever the client was doing then. Cheap is not free: on two cores, the clients' reading takes
CPU that Quad's event loops want during the fan-out, which is why the idle round runs them at idle priority and
takes the kernel's times.

Prints one JSON object on stdout (the figures, "error" when the run failed, and why) and progress on
stderr. Exit status 1 when a stream could not be opened or did not receive the event. Standard library
only.
"""

import argparse
import collections
import errno
import http.client
import ipaddress
import json
import math
import multiprocessing
import os
import resource
import select
import socket
import struct
import sys
import time
import urllib.parse

from booking_storm_setup import call, expect, make_person

# Linux: SO_TIMESTAMPNS (and its control message, SCM_TIMESTAMPNS) has the value 35; Python does not name it.
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)
FIRST_ADDRESS = int(ipaddress.IPv4Address("127.0.0.2"))  # 127.0.0.1 is the coordinator's (setup, booking)
MARK = b"\nevent: room\ndata: "  # a room event's type line, then its data line

CONNECTING, HEADERS, FIRST_BYTES, OPEN = "connecting", "awaiting headers", "awaiting first bytes", "open"
# The rounds, in this order, each one booking of a room of its own. "live": the clients read as the bytes come, at the
# same priority as Quad, on the same two cores. "idle": the clients run at idle priority (SCHED_IDLE), so they read
# only while Quad leaves a core unused, as clients on machines of their own would take none of Quad's; each stream's
# time is then the kernel's receive timestamp. The targets' figures are the idle round's.
ROUNDS = ("live", "idle")


def log(msg):
    print(f"[fanout] {msg}", file=sys.stderr, flush=True)


def source_address(i, per_address):
    return str(ipaddress.IPv4Address(FIRST_ADDRESS + i // per_address))


def raise_nofile(needed):
    """Soft limit of open files up to the hard one; an error (str) when even that is below `needed`."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < needed:
        return f"needs {needed} open files, but the hard limit (ulimit -Hn) is {hard}"
    if soft != resource.RLIM_INFINITY and soft < needed:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard if hard != resource.RLIM_INFINITY else needed, hard))
    return None


class Stream:
    __slots__ = ("i", "sock", "state", "buf", "got")

    def __init__(self, i, sock):
        self.i, self.sock, self.state, self.buf, self.got = i, sock, CONNECTING, b"", None


def worker(conn, host, port, indices, per_address, path, inflight, setup_timeout):
    """One client process: opens its share of the streams, reports, then records each round's booking event.

    Messages to the coordinator: ("ready", opened, failures, examples, last_ready_s). Then, for each round:
    on ("round", room, label) it forgets the last round's events, listens for this room's (at idle priority from
    the "idle" round on) and answers ("set",); on ("collect", deadline), once every stream has the event or at the
    deadline, ("results", [(i, monotonic, kernel wall time) or (i, None, why)], closed_later). On ("close",) it exits.
    """
    err = raise_nofile(len(indices) + 64)
    request = f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nAccept: text/event-stream\r\n\r\n".encode()
    key = None  # the round's room, as its events' data has it; nothing is recorded before the first round
    ep = select.epoll()
    cfd = conn.fileno()
    ep.register(cfd, select.EPOLLIN)
    todo = collections.deque(indices)
    streams = {}  # fd -> Stream
    opening = 0
    failures = collections.Counter()  # reason -> count
    examples = {}  # reason -> one detail
    closed_later = collections.Counter()  # after being ready, without the event: why
    finished = []  # (i, monotonic, kernel) of streams that got the event and were closed since
    start = time.monotonic()
    last_ready = 0.0
    phase, deadline = "setup", None
    if err:  # nothing can be opened: report every stream as failed
        failures[err] = len(todo)
        todo.clear()

    def fail(st, reason, detail=""):
        nonlocal opening
        if st.state == OPEN and st.got:
            finished.append((st.i, *st.got))
        elif st.state == OPEN:
            closed_later[reason] += 1
        else:
            opening -= 1
            failures[reason] += 1
            examples.setdefault(reason, f"stream {st.i} from {source_address(st.i, per_address)}: {detail}"[:300])
        ep.unregister(st.sock.fileno())
        del streams[st.sock.fileno()]
        st.sock.close()

    while True:
        # Open more while few are being opened (Quad's listen backlog, and its accept loop, stay ahead).
        while todo and opening < inflight:
            i = todo.popleft()
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                s.setblocking(False)
                s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
                s.bind((source_address(i, per_address), 0))
                rc = s.connect_ex((host, port))
            except OSError as e:
                s.close()
                reason = f"socket: {errno.errorcode.get(e.errno, e.errno)}"
                failures[reason] += 1
                examples.setdefault(reason, f"stream {i}: {e}")
                continue
            if rc not in (0, errno.EINPROGRESS):
                s.close()
                reason = f"connect: {errno.errorcode.get(rc, rc)}"
                failures[reason] += 1
                examples.setdefault(reason, f"stream {i}: {os.strerror(rc)}")
                continue
            st = Stream(i, s)
            streams[s.fileno()] = st
            opening += 1
            ep.register(s.fileno(), select.EPOLLOUT)

        if phase == "setup" and not todo and opening == 0:
            ready = sum(1 for st in streams.values() if st.state == OPEN)
            conn.send(("ready", ready, dict(failures), examples, last_ready))
            phase = "open"
        if phase == "setup" and time.monotonic() - start > setup_timeout:
            for st in [st for st in streams.values() if st.state != OPEN]:
                fail(st, f"not ready after {setup_timeout:g} s ({st.state})")
            n = len(todo)
            if n:
                failures[f"not started within {setup_timeout:g} s"] += n
                todo.clear()
            continue
        if phase == "collect":
            waiting = [st for st in streams.values() if st.got is None]
            if not waiting or time.monotonic() > deadline:
                results = finished + [(st.i, *st.got) for st in streams.values() if st.got]
                results += [(st.i, None, "still open, no event by the deadline") for st in waiting]
                conn.send(("results", results, dict(closed_later)))
                phase = "done"

        events = ep.poll(0.2)
        now = time.monotonic()  # when these bytes were seen: one clock read per wake-up, taken first
        for fd, _ in events:
            if fd == cfd:
                msg = conn.recv()
                if msg[0] == "round":
                    key, phase = b'"id":"' + msg[1].encode() + b'"', "open"
                    for st in streams.values():
                        st.got = None
                    finished.clear()
                    closed_later.clear()
                    if msg[2] == "idle":
                        # From now on this process runs only while no other wants a core (for good: no later round).
                        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
                    conn.send(("set",))
                if msg[0] == "collect":
                    phase, deadline = "collect", msg[1]
                elif msg[0] == "close":
                    for st in list(streams.values()):
                        st.sock.close()
                    return
                continue
            st = streams.get(fd)
            if st is None:
                continue
            if st.state == CONNECTING:
                so_error = st.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                if so_error:
                    fail(st, f"connect: {errno.errorcode.get(so_error, so_error)}", os.strerror(so_error))
                    continue
                st.sock.send(request)  # a hundred bytes into an empty socket buffer: sent whole
                st.state = HEADERS
                ep.modify(fd, select.EPOLLIN)
                continue
            try:
                data, anc, _, _ = st.sock.recvmsg(65536, 64)
            except (BlockingIOError, InterruptedError):
                continue
            except OSError as e:
                fail(st, f"read: {errno.errorcode.get(e.errno, e.errno)}", str(e))
                continue
            if not data:
                fail(
                    st,
                    "closed by Quad" + ("" if st.state == OPEN else f" ({st.state})"),
                    st.buf[:200].decode("latin-1"),
                )
                continue
            if st.state == OPEN:
                buf = st.buf + data
                at = 0
                while (m := buf.find(MARK, at)) >= 0:
                    end = buf.find(b"\n", m + len(MARK))
                    if end < 0:  # the data line is not complete yet: keep it for the next read
                        buf, at = buf[m:], None
                        break
                    if st.got is None and key and key in buf[m + len(MARK) : end]:
                        kernel = None
                        for level, kind, value in anc:
                            if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
                                sec, nsec = struct.unpack("qq", value[:16])
                                kernel = sec + nsec / 1e9
                        st.got = (now, kernel)
                    at = end
                # Keep what could be the start of a mark split between two reads.
                st.buf = buf if at is None else buf[-(len(MARK) - 1) :]
                continue
            st.buf += data
            if st.state == HEADERS:
                head, sep, rest = st.buf.partition(b"\r\n\r\n")
                if not sep:
                    continue
                status = head.split(b" ", 2)
                if len(status) < 2 or status[1] != b"200":
                    fail(
                        st,
                        f"HTTP {status[1].decode('latin-1') if len(status) > 1 else '?'}",
                        rest[:200].decode("latin-1"),
                    )
                    continue
                st.state, st.buf = FIRST_BYTES, rest
            if st.state == FIRST_BYTES and b"retry:" in st.buf:
                st.state, st.buf = OPEN, b""
                opening -= 1
                last_ready = now - start


def wait_for_quiet(host, port, path, quiet, longest):
    """Once a stream of the coordinator's own has had bytes (after its opening ones) and then none for `quiet` seconds:
    (seconds waited, True, the stream); after `longest` seconds without that: (seconds waited, False, the stream). The
    stream stays open for `events_before` (the caller closes it).

    Why: the demo's car parks and shuttles publish a burst of about 16 events every 3 s, each written to every
    stream of every type, and a booking sent while a burst is being written waits behind it (up to 150 ms at 10,000
    streams). Any bytes on this stream (an event, a heartbeat) mean the event loops were writing to every stream;
    just after a burst has ended, the next is furthest away.
    """
    start = time.monotonic()
    s = socket.create_connection((host, port), timeout=longest)
    s.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nAccept: text/event-stream\r\n\r\n".encode())
    opening = b""
    while b"retry:" not in opening:  # the answer's head and the stream's first bytes
        got = s.recv(65536)
        if not got:
            return time.monotonic() - start, False, s
        opening += got
    heard = False
    while time.monotonic() - start < longest:
        s.settimeout(quiet if heard else max(0.01, longest - (time.monotonic() - start)))
        try:
            if not s.recv(65536):
                break  # closed by Quad: no quiet to be had from it
            heard = True
        except TimeoutError:
            if heard:
                return time.monotonic() - start, True, s
    return time.monotonic() - start, False, s


def events_before(s, room, wait):
    """How many other events the quiet stream `s` was written after the quiet and before the booking of `room`'s own
    (in the same writes, or in earlier ones): each went to every stream too, and the booking's waited for it. None when
    the booking's event did not come within `wait` seconds."""
    key = b'"id":"' + room.encode() + b'"'
    got, deadline = b"", time.monotonic() + wait
    while key not in got:
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        s.settimeout(left)
        try:
            more = s.recv(65536)
        except TimeoutError:
            return None
        if not more:
            return None
        got += more
    at = got.find(key)
    return got[:at].count(b"\nevent: ") - 1  # the booking's own "event:" line precedes its data


def proc_status(pid):
    """{VmRSS, VmHWM, Threads, ...} of a process, in kB where /proc says kB."""
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            out[k] = int(v.split()[0]) if v.split() and v.split()[0].isdigit() else v.strip()
    return out


def cpu_seconds(pid):
    """User + system CPU time of a process so far (all its threads)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def machine_seconds():
    """(busy, steal): CPU time all cores spent busy in processes so far (/proc/stat: user, nice, system), and the
    time they waited while the hypervisor ran other machines (steal, nobody's work here).

    Interrupt time is left out: the loopback traffic of thousands of streams is counted there (softirq),
    not in Quad's or the client's time, and would look like other processes' work.
    """
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:9]]
    hz = os.sysconf("SC_CLK_TCK")
    return (v[0] + v[1] + v[2]) / hz, v[7] / hz


def open_files(pid):
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None


def nofile_limit(pid):
    """The process's soft limit of open files, from /proc/PID/limits."""
    try:
        with open(f"/proc/{pid}/limits") as f:
            for line in f:
                if line.startswith("Max open files"):
                    return int(line.split()[3])
    except (OSError, ValueError, IndexError):
        pass
    return None


def listen_counters():
    """TcpExt ListenOverflows / ListenDrops: connections the kernel dropped because a listen queue was full."""
    try:
        lines = [line.split() for line in open("/proc/net/netstat") if line.startswith("TcpExt:")]
        table = dict(zip(lines[0][1:], map(int, lines[1][1:]), strict=True))
        return {k: table.get(k, 0) for k in ("ListenOverflows", "ListenDrops")}
    except (OSError, IndexError, ValueError):
        return {}


def percentile(sorted_values, p):
    """Nearest rank: the smallest value with at least p % of the values at or below it."""
    return sorted_values[max(0, math.ceil(p / 100 * len(sorted_values)) - 1)]


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("url")
    p.add_argument("admin_token")
    p.add_argument("--pid", type=int, required=True, help="Quad's process id, for its VmRSS")
    p.add_argument("--streams", type=int, default=10000)
    p.add_argument("--per-address", type=int, default=8, help="streams per source address (Quad's per-client cap)")
    p.add_argument("--workers", type=int, default=2, help="client processes sharing the streams")
    p.add_argument("--path", default="/api/events")
    p.add_argument("--inflight", type=int, default=64, help="streams being opened at once, per worker")
    p.add_argument("--setup-timeout", type=float, default=180, help="seconds for every stream to be ready")
    p.add_argument("--settle", type=float, default=3, help="seconds with every stream open before the RSS is read")
    p.add_argument("--wait", type=float, default=10, help="seconds after the booking for every stream to get it")
    p.add_argument(
        "--quiet", type=float, default=0.8, help="seconds without bytes on the streams before a booking (0: none)"
    )
    a = p.parse_args(argv[1:])
    u = urllib.parse.urlsplit(a.url)
    host, port = u.hostname, u.port
    result = {"streams": a.streams, "workers": a.workers, "per_address": a.per_address, "path": a.path}

    def finish(error=None):
        if error:
            result["error"] = error
            log("FAILED: " + error)
        print(json.dumps(result))
        return 1 if error else 0

    # 1. A room for each round and the person, before any stream is open.
    rooms = {}
    for label in ROUNDS:
        status, data = call(
            a.url,
            "POST",
            "/api/rooms",
            {"name": f"Fanout {os.getpid()} {label}", "building": "Bench", "capacity": 1},
            a.admin_token,
        )
        rooms[label] = expect(status, data, 201, f"creating the {label} round's room")["id"]
    _, token = make_person(a.url, a.admin_token, os.getpid(), prefix="fanout")  # a new name on every run
    result["rooms"] = rooms
    result["nofile_quad"] = nofile_limit(a.pid)
    result["rss_kb_before"] = proc_status(a.pid)["VmRSS"]
    listen0 = listen_counters()

    # 2. The streams, shared among the workers.
    ctx = multiprocessing.get_context("fork")
    workers = []
    t_start = time.monotonic()
    for w in range(a.workers):
        parent, child = ctx.Pipe()
        indices = range(w, a.streams, a.workers)
        proc = ctx.Process(
            target=worker,
            args=(child, host, port, indices, a.per_address, a.path, a.inflight, a.setup_timeout),
            daemon=True,
        )
        proc.start()
        workers.append((proc, parent))
    log(f"opening {a.streams} streams to {a.path} from {a.workers} processes, {a.per_address} per source address")
    ready, failures, examples = 0, collections.Counter(), {}
    for _, pipe in workers:
        if not pipe.poll(a.setup_timeout + 30):
            return finish(f"a client process gave no answer within {a.setup_timeout + 30:g} s")
        _, n, fails, ex, _ = pipe.recv()
        ready += n
        failures.update(fails)
        for k, v in ex.items():
            examples.setdefault(k, v)
    result["setup_s"] = round(time.monotonic() - t_start, 2)
    result["ready"] = ready
    result["failures"] = dict(failures)
    result["failure_examples"] = examples
    listen1 = listen_counters()
    result["listen_queue"] = {k: listen1[k] - listen0.get(k, 0) for k in listen1}
    log(f"{ready} of {a.streams} streams ready in {result['setup_s']} s")

    # 3. Quad's memory with the streams open, once their setup has settled; and the CPU it spends meanwhile
    # on the open streams (the demo's live car parks and shuttles publish events every few seconds).
    c0, w0 = cpu_seconds(a.pid), time.monotonic()
    time.sleep(a.settle)
    result["quad_cpu_pct_open"] = round(100 * (cpu_seconds(a.pid) - c0) / (time.monotonic() - w0), 1)
    st = proc_status(a.pid)
    result.update(rss_kb=st["VmRSS"], hwm_kb=st["VmHWM"], threads=st["Threads"], quad_fds=open_files(a.pid))

    def close_all():
        for _, pipe in workers:
            try:
                pipe.send(("close",))
            except OSError:
                pass
        for proc, _ in workers:
            proc.join(30)
            if proc.is_alive():
                proc.kill()

    if ready < a.streams:
        why = "; ".join(f"{k}: {v}" for k, v in failures.most_common())
        close_all()
        return finish(f"only {ready} of {a.streams} streams opened ({why})")

    # 4. A booking a round; each stream's time to its event.
    headers = {"Authorization": "Bearer " + token, "Content-Type": "application/json"}

    def cpu_snapshot():  # (machine busy, Quad, this client's processes) CPU seconds, the time, and the steal
        own = os.times()
        clients = own.user + own.system + sum(cpu_seconds(proc.pid) for proc, _ in workers)
        busy, steal = machine_seconds()
        return busy, cpu_seconds(a.pid), clients, time.monotonic(), steal

    def fanout(label):
        """One booking of the round's room; its figures (a dict), or an error (str)."""
        for _, pipe in workers:
            pipe.send(("round", rooms[label], label))
        for _, pipe in workers:
            if not pipe.poll(30) or pipe.recv() != ("set",):
                return "a client process did not start the round"
        r, watch = {}, None
        if a.quiet > 0:
            waited, found, watch = wait_for_quiet(host, port, a.path, a.quiet, longest=30)
            r.update(quiet_wait_s=round(waited, 2), quiet_found=found)
        try:
            conn = http.client.HTTPConnection(host, port, timeout=30)
            conn.connect()  # beforehand, so the time below starts with the request itself
            cpu0 = cpu_snapshot()
            t0, t0_wall = time.monotonic(), time.time()
            conn.request("POST", f"/api/rooms/{rooms[label]}/bookings", b"{}", headers)
            resp = conn.getresponse()
            body = resp.read()
            r.update(booking_ms=round((time.monotonic() - t0) * 1000, 2), booking_status=resp.status)
            conn.close()
            if resp.status != 201:
                return f"the booking answered HTTP {resp.status}: {body[:200].decode('utf-8', 'replace')}"
            for _, pipe in workers:
                pipe.send(("collect", t0 + a.wait))
            got, missing = [], collections.Counter()
            for _, pipe in workers:
                if not pipe.poll(a.wait + 30):
                    return "a client process gave no results"
                _, results, closed = pipe.recv()
                missing.update(closed)
                for _i, mono, kernel in results:
                    if mono is None:  # then `kernel` holds why
                        missing[kernel] += 1
                    else:
                        got.append((mono - t0, None if kernel is None else kernel - t0_wall))
            # What the fan-out cost Quad and the clients, and how much of the machine went to anything else meanwhile.
            cpu1 = cpu_snapshot()
            if watch is not None:
                r["events_before"] = events_before(watch, rooms[label], 2)
            other = (cpu1[0] - cpu0[0]) - (cpu1[1] - cpu0[1]) - (cpu1[2] - cpu0[2])
            r["quad_cpu_s"] = round(cpu1[1] - cpu0[1], 3)
            r["clients_cpu_s"] = round(cpu1[2] - cpu0[2], 3)
            r["other_cpu_pct"] = round(max(0.0, 100 * other / ((cpu1[3] - cpu0[3]) * os.cpu_count())))
            r["steal_pct"] = round(100 * (cpu1[4] - cpu0[4]) / ((cpu1[3] - cpu0[3]) * os.cpu_count()), 1)
            r["received"], r["missed"], r["missed_why"] = len(got), a.streams - len(got), dict(missing)
            if got:
                mono = sorted(g[0] * 1000 for g in got)
                kern = sorted((g[0] if g[1] is None else g[1]) * 1000 for g in got)
                # At idle priority the clients read late by design: when the bytes came is the kernel's timestamp.
                times = mono if label == "live" else kern
                r.update(p50_ms=percentile(times, 50), p99_ms=percentile(times, 99), max_ms=times[-1], min_ms=times[0])
                r.update(client_p99_ms=percentile(mono, 99), kernel_p50_ms=percentile(kern, 50))
                r.update(kernel_p99_ms=percentile(kern, 99), kernel_max_ms=kern[-1])
                for k in list(r):
                    if k.endswith("_ms"):
                        r[k] = round(r[k], 2)
                # The shape: when each tenth of the streams had it (an event loop late shows as a step).
                r["deciles"] = [round(percentile(times, p), 1) for p in range(10, 100, 10)]
            log(
                f"{label} round: received by {len(got)} of {a.streams}; p50 {r.get('p50_ms')} ms, "
                f"p99 {r.get('p99_ms')} ms, max {r.get('max_ms')} ms (kernel receive times: p99 "
                f"{r.get('kernel_p99_ms')} ms; Quad "
                f"{r['quad_cpu_s']} s of CPU, the clients {r['clients_cpu_s']} s)"
            )
            return r
        finally:
            if watch is not None:
                watch.close()  # on every way out, a failed round too

    for label in ROUNDS:
        r = fanout(label)
        if isinstance(r, str):
            close_all()
            return finish(f"{label} round: {r}")
        result[label] = r
    # The targets' figures are the idle round's (see ROUNDS); every round must reach every stream.
    result.update({k: v for k, v in result["idle"].items() if k.endswith("_ms") or k == "deciles"})
    result["missed"] = sum(result[label]["missed"] for label in ROUNDS)
    result["received"] = min(result[label]["received"] for label in ROUNDS)
    # 5. Close every stream; Quad's memory once it has let them go.
    close_all()
    time.sleep(2)
    result["rss_kb_after_close"] = proc_status(a.pid)["VmRSS"]

    for label in ROUNDS:
        r = result[label]
        if r["missed"]:
            why = "; ".join(f"{k}: {v}" for k, v in collections.Counter(r["missed_why"]).most_common())
            return finish(f"{label} round: {r['missed']} of {a.streams} streams did not receive its event ({why})")
    return finish()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
