"""A real SMTP server for the tests (aiosmtpd, someone else's implementation), keeping what it accepts.

    python3 e2e/smtp_sink.py --dir DIR [--port N] [--starttls CERT KEY | --tls CERT KEY] [--auth USER:PASSWORD]
                             [--refuse ADDRESS]... [--defer N] [--per-connection N]

It prints "listening on PORT" once it accepts connections and serves until it is stopped. Each message it accepts is
DIR/NNNN.json: the envelope (mail_from, rcpt_tos), whether the session was encrypted and as whom it signed in, the
raw message, and the message as Python's `email` package reads it (subject and addresses decoded, each part's type
and decoded body; a calendar part also as the `icalendar` package reads it), so a test checks what a mail client
would show. `--starttls` offers STARTTLS (and, with `--auth`,
takes a password only after it); `--tls` is TLS from the first byte; `--refuse` answers 550 to that recipient;
`--defer N` answers 451 to the first N messages; `--per-connection N` takes at most N messages on one connection, then
answers 421 to the next MAIL FROM (as relays that limit a connection's messages do). Each record says which connection
it came on (the client's port, `peer_port`). `--spool` keeps each message as received, DIR/NNNN.eml, unread (as a
relay's queue does), for the benchmark: reading every message with `email` and `icalendar` would make the sink, not
Quad, what sets the pace.
"""

from __future__ import annotations

import argparse
import email
import email.policy
import json
import pathlib
import signal
import socket
import ssl
import sys
import threading

import icalendar
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def calendar(text: str) -> dict:
    """A calendar part as a calendar reads it: its method, and each event's fields (dates as ISO text with their
    time zone, RRULE and EXDATE as iCalendar writes them, people as their mailto: and parameters)."""
    parsed = icalendar.Calendar.from_ical(text)
    events = []
    for event in parsed.walk("VEVENT"):
        exdates = event.get("EXDATE") or []
        if not isinstance(exdates, list):
            exdates = [exdates]
        events.append(
            {
                "uid": str(event.get("UID")),
                "sequence": int(event.get("SEQUENCE", 0)),
                "status": str(event.get("STATUS", "")),
                "summary": str(event.get("SUMMARY", "")),
                "location": str(event.get("LOCATION", "")),
                "start": event.decoded("DTSTART").isoformat(),
                "tzid": event["DTSTART"].params.get("TZID", ""),
                "duration_minutes": int(event.decoded("DURATION").total_seconds() // 60) if "DURATION" in event else 0,
                "rrule": event["RRULE"].to_ical().decode() if "RRULE" in event else "",
                "exdates": [d.dt.isoformat() for group in exdates for d in group.dts],
                "organizer": str(event.get("ORGANIZER", "")),
                "attendees": [
                    {"address": str(a), "params": {k: str(v) for k, v in a.params.items()}}
                    for a in (
                        event.get("ATTENDEE", [])
                        if isinstance(event.get("ATTENDEE", []), list)
                        else [event.get("ATTENDEE")]
                    )
                ],
            }
        )
    return {"method": str(parsed.get("METHOD", "")), "events": events}


def parsed(raw: bytes) -> dict:
    message = email.message_from_bytes(raw, policy=email.policy.default)
    parts = []
    for part in message.walk():
        if part.is_multipart():
            continue
        body = part.get_content()
        text = body if isinstance(body, str) else body.decode("utf-8", "replace")
        parts.append(
            {
                "type": part.get_content_type(),
                "params": dict((part.get_params() or [])[1:]),
                # Line ends as a mail client shows them (on the wire they are CRLF).
                "body": text.replace("\r\n", "\n"),
            }
            | ({"calendar": calendar(text)} if part.get_content_type() == "text/calendar" else {})
        )
    return {
        "subject": str(message["subject"] or ""),
        "from": str(message["from"] or ""),
        "to": str(message["to"] or ""),
        "message_id": str(message["message-id"] or ""),
        "headers": {name: str(value) for name, value in message.items()},
        "content_type": message.get_content_type(),
        "parts": parts,
        "defects": [type(defect).__name__ for defect in message.defects],
    }


class Sink:
    def __init__(
        self, folder: pathlib.Path, refuse: set[str], defer: int, spool: bool = False, per_connection: int = 0
    ):
        self.folder = folder
        self.per_connection = per_connection
        self.taken = {}  # a connection's peer -> messages it took
        self.spool = spool
        self.refuse = refuse
        self.defer = defer
        self.count = 0
        self.lock = threading.Lock()

    async def handle_MAIL(self, server, session, envelope, address, mail_options):  # noqa: N802 (aiosmtpd's name)
        if self.per_connection and self.taken.get(session.peer, 0) >= self.per_connection:
            return "421 4.7.0 Too many messages on this connection"
        envelope.mail_from = address
        envelope.mail_options.extend(mail_options)
        return "250 OK"

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):  # noqa: N802 (aiosmtpd's name)
        if address.lower() in self.refuse:
            return "550 5.1.1 No such mailbox here"
        envelope.rcpt_tos.append(address)
        return "250 2.1.5 OK"

    async def handle_DATA(self, server, session, envelope):  # noqa: N802 (aiosmtpd's name)
        with self.lock:
            if self.defer > 0:
                self.defer -= 1
                return "451 4.3.0 Try again later"
            self.count += 1
            number = self.count
            self.taken[session.peer] = self.taken.get(session.peer, 0) + 1
        raw = envelope.original_content or envelope.content
        if self.spool:
            path = self.folder / f"{number:04d}.eml"
            path.with_suffix(".tmp").write_bytes(raw)
            path.with_suffix(".tmp").rename(path)
            return "250 2.0.0 Accepted"
        record = {
            "mail_from": envelope.mail_from,
            "peer_port": session.peer[1],
            "rcpt_tos": envelope.rcpt_tos,
            "mail_options": envelope.mail_options,
            "tls": session.ssl is not None or server.transport.get_extra_info("ssl_object") is not None,
            "auth_user": session.auth_data.login.decode() if isinstance(session.auth_data, LoginPassword) else None,
            "raw": raw.decode("utf-8", "replace"),
            **parsed(raw),
        }
        path = self.folder / f"{number:04d}.json"
        temporary = path.with_suffix(".tmp")
        temporary.write_text(json.dumps(record, ensure_ascii=False, indent=1), encoding="utf-8")
        temporary.rename(path)  # whole or not there: a test reading the folder never sees half a message
        return "250 2.0.0 Accepted"


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    options.add_argument("--dir", required=True, type=pathlib.Path)
    options.add_argument("--port", type=int, default=0)
    options.add_argument("--starttls", nargs=2, metavar=("CERT", "KEY"))
    options.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"))
    options.add_argument("--auth", metavar="USER:PASSWORD")
    options.add_argument("--refuse", action="append", default=[])
    options.add_argument("--defer", type=int, default=0)
    options.add_argument("--spool", action="store_true")
    options.add_argument("--per-connection", type=int, default=0)
    args = options.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)

    def context(pair):
        tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        tls.load_cert_chain(*pair)
        return tls

    def authenticate(server, session, envelope, mechanism, data):
        if not args.auth or not isinstance(data, LoginPassword):
            return AuthResult(success=False, handled=False)
        user, _, password = args.auth.partition(":")
        ok = data.login.decode() == user and data.password.decode() == password
        return AuthResult(success=ok, handled=False, auth_data=data)

    port = args.port or free_port()
    controller = Controller(
        Sink(args.dir, {address.lower() for address in args.refuse}, args.defer, args.spool, args.per_connection),
        hostname="127.0.0.1",
        port=port,
        server_hostname="localhost",
        ready_timeout=10,
        enable_SMTPUTF8=True,
        tls_context=context(args.starttls) if args.starttls else None,
        require_starttls=False,
        ssl_context=context(args.tls) if args.tls else None,
        authenticator=authenticate if args.auth else None,
        auth_required=bool(args.auth),
        auth_require_tls=bool(args.starttls),
    )
    # A test process may have set SIGTERM aside (blocked or ignored, for a Swift server's graceful shutdown), and its
    # children inherit that: take it back, and stop on it.
    signal.pthread_sigmask(signal.SIG_SETMASK, set())
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    signal.signal(signal.SIGINT, lambda *_: sys.exit(0))
    controller.start()
    print(f"listening on {port}", flush=True)
    try:
        threading.Event().wait()
    finally:
        controller.stop()


if __name__ == "__main__":
    main()
