"""Hostile input against every write operation of the contract (every POST, PUT, PATCH and DELETE that
`/api/openapi.yaml` serves), as the admin and, for what a member may do, as a member.

What a person would notice if this failed: a request that brings the server down or stalls it (an error
page, a spinner that never ends, the next person's request failing too); an error that is not the API's
problem document, so an app shows gibberish instead of the reason; a name that reads back otherwise than it
was typed (the same text in another Unicode form is the same text: it comes back as NFC); and, worst, text
stored with control or format characters in it: terminal escapes in an operator's logs, a right-to-left
override (U+202E) that shows "invoice<U+202E>fdp.exe" as "invoiceexe.pdf", line breaks inside a one-line label,
invisible characters that make two names look the same.

For each operation there is a body that the server accepts (BASELINES: operationId -> what to send); from
it, each field of the contract's request schema in turn gets each hostile value: strings (control, bidi,
zero-width and format characters, non-NFC text, lone surrogates, 10k and 1M characters, markup and
template text), numbers (1e308, 2**63, -2**63-1, 1e400 written raw...), far dates (0001-01-01,
+275760-09-13T00:00:00Z, year 9999) and values of the wrong type; each path parameter gets the hostile
strings too. Then whole bodies: invalid UTF-8, 100k-deep nesting, empty bodies, 2 MiB bodies (declared,
chunked, or as image/png to a JSON route), a 6 MB chunked upload; and hostile headers.

Every answer must be 2xx or 4xx, within REQUEST_TIMEOUT; a 4xx is `application/problem+json` whose
`status` is the HTTP status (unless the contract documents another type for that status); a write the
contract's schema calls invalid is refused; a free-text field refuses control, format and bidi characters;
an accepted text reads back (through the contract's GET operations) as what was sent, in NFC; and the
server still answers `/health` and every list afterwards. One failure lists every offence, grouped.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import http.client
import itertools
import json
import math
import re
import time
import unicodedata
import urllib.parse
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import pytest

from conftest import MELBOURNE, http_request, melbourne
from helpers import add_person, password_of, png, session_token

REQUEST_TIMEOUT = 10.0  # seconds: no answer may take longer
UNSAFE = ("post", "put", "patch", "delete")
PASSWORD = "correct-horse-battery-staple"
MiB = 1024 * 1024

# Characters no stored free text may hold: control (Cc), format (Cf: bidi controls, zero-width characters,
# the BOM, tags), surrogates (Cs: not text at all) and the line and paragraph separators (Zl, Zp: line breaks
# inside a one-line field).
REFUSED_CATEGORIES = {"Cc", "Cf", "Cs", "Zl", "Zp"}


# --- The corpus ---------------------------------------------------------------------------------------


class Raw:
    """JSON text sent exactly as written (what json.dumps will not write), and the value it stands for."""

    def __init__(self, text: str, value: Any):
        self.text, self.value = text, value


NUMBERS = itertools.count(1)  # for names no two requests share, whatever the run
NOT_JSON = object()  # the value of a Raw that is not JSON at all (NaN, 0x10)
TOO_DEEP = object()  # 100k nested arrays: JSON, but no schema here takes it

HOSTILE_STRINGS = [
    ("NUL", "a\x00b"),
    ("ESC[31m", "\x1b[31mred\x1b[0m"),
    ("CR LF", "line\r\nbreak"),
    ("TAB", "tab\there"),
    ("DEL", "del\x7fete"),
    ("C1 CSI U+009B", "c1\x9b31m"),
    ("NEL U+0085", "next\x85line"),
    ("LS U+2028", "line\u2028separator"),
    ("PS U+2029", "para\u2029separator"),
    ("RLO U+202E", "invoice\u202efdp.exe"),
    ("LRI RLI FSI PDI U+2066-2069", "\u2066ltr\u2069 \u2067rtl\u2069 \u2068first\u2069"),
    ("RLM U+200F", "mark\u200fhere"),
    ("ALM U+061C", "arabic\u061cmark"),
    ("ZWSP U+200B", "zero\u200bwidth"),
    ("WJ U+2060", "word\u2060joiner"),
    ("BOM U+FEFF", "\ufeffbom"),
    ("SHY U+00AD", "soft\xadhyphen"),
    ("IAA U+FFF9", "inter\ufff9linear"),
    ("TAG U+E0041", "tag\U000e0041"),
    ("e + U+0301", "Cafe\u0301"),
    ("Hangul jamo", "\u1112\u1161\u11ab\u1100\u1173\u11af"),
    ("Angstrom U+212B", "\u212bngstr\u00f6m"),
    ("marks out of order", "a\u0301\u0323"),
    ("100 combining marks", "Z" + "\u0336" * 100),  # one grapheme cluster, 101 code points
    ("10k combining marks", "Z" + "\u0336" * 10_000),
    ("astral", "\U0001f4da \U0001d518\U0001d52b\U0001d526"),
    ("lone surrogate \\ud800", Raw('"a\\ud800b"', "a\ud800b")),
    ("lone surrogate \\udfff", Raw('"\\udfffz"', "\udfffz")),
    ("10k chars", "x" * 10_000),
    ("1M chars", "y" * 1_000_000),
    ("<!--<script>", "<!--<script>"),
    ("</script>", "</script><script>alert(1)</script>"),
    ("<img onerror>", '<img src=x onerror="alert(1)">'),
    ("{{mustache}}", "{{7*7}} {{{html}}} {{> partial}} {{#each x}}"),
    ("${template}", "${7*7} #{7*7} %{x}"),
    ("SQL quote", "Robert'); DROP TABLE rooms;--"),
    ("printf", "%s%s%n%x"),
    ("path traversal", "../../etc/passwd"),
    ("backslash-u text", "\\u0000 \\x1b"),
    ("HTML entities", "&#x202e;&lt;b&gt;"),
    ("empty", ""),
    ("spaces only", "   "),
    ("U+3000 only", "\u3000"),
]

HOSTILE_NUMBERS = [
    ("1e308", 1e308),
    ("2**63", 2**63),
    ("-2**63-1", -(2**63) - 1),
    ("2**63-1", 2**63 - 1),
    ("1e400", Raw("1e400", math.inf)),
    ("-1e400", Raw("-1e400", -math.inf)),
    ("400 digits", Raw("9" * 400, int("9" * 400))),
    ("-1", -1),
    ("0", 0),
    ("-0", Raw("-0", 0)),
    ("0.5", 0.5),
    ("1.0", Raw("1.0", 1.0)),
    ("1e2", Raw("1e2", 100.0)),
    ("NaN", Raw("NaN", NOT_JSON)),
    ("Infinity", Raw("Infinity", NOT_JSON)),
    ("0x10", Raw("0x10", NOT_JSON)),
]

FAR_DATES = [
    ("9999-12-31", "9999-12-31"),
    ("0001-01-01", "0001-01-01"),
    ("+275760-09-13", "+275760-09-13T00:00:00Z"),
    ("-000001-01-01", "-000001-01-01T00:00:00Z"),
    ("99999-01-01", "99999-01-01T00:00:00Z"),
    ("year 9999 Z", "9999-12-31T23:59:59Z"),
    ("year 9999 +14:00", "9999-12-31T23:59:59+14:00"),
    ("year 9999 -14:00", "9999-12-31T23:59:59-14:00"),
    ("year 9999 ns", "9999-12-31T23:59:59.999999999Z"),
    ("year 9999 local", "9999-12-28T23:59"),
    ("year 0001 -14:00", "0001-01-01T00:00:00-14:00"),
    ("year 0000", "0000-01-01T00:00:00Z"),
    ("1000-01-01", "1000-01-01T00:00:00Z"),
    ("Feb 30", "2026-02-30T10:00:00Z"),
    ("leap second", "2026-12-31T23:59:60Z"),
    ("hour 25", "2026-11-24T25:00:00Z"),
    ("library form 9999", "9999-12-31 23:59:59"),
    ("library form 1000 +14:00", "1000-1-1 0:0:0 +14:00"),
]

WRONG_TYPES = [
    ("null", None),
    ("true", True),
    ("number 7", 7),
    ("string '7'", "7"),
    ("[]", []),
    ("{}", {}),
    ('{"$ne": null}', {"$ne": None}),
    ("[NUL]", ["\x00"]),
    ("100k-deep [[[", Raw("[" * 100_000 + "]" * 100_000, TOO_DEEP)),
]

# Path parameters: the strings (URL-encoded; 1M characters make a request line that is a test of its own,
# in the raw test), and numbers as text.
PATH_VALUES = [(label, value) for label, value in HOSTILE_STRINGS if label != "1M chars"] + [
    ("%00 text", "%00"),
    ("dot dot", ".."),
    ("9223372036854775808", "9223372036854775808"),
    ("-1", "-1"),
    ("0", "0"),
    ("1e400", "1e400"),
    ("1.5", "1.5"),
    ("NaN", "NaN"),
]

# Passwords are never shown, and each one accepted costs a bcrypt hash (a third of a second): a shorter list.
PASSWORD_VALUES = [
    (label, value)
    for label, value in HOSTILE_STRINGS
    if label
    in ("NUL", "ESC[31m", "RLO U+202E", "e + U+0301", "lone surrogate \\ud800", "10k chars", "1M chars", "empty")
] + [
    ("72 bytes of e-acute", "\xe9" * 36),
    ("73 bytes", "\xe9" * 36 + "a"),
    ("emoji past 72 bytes", "\U0001f511" * 19),
]


# --- The contract ---------------------------------------------------------------------------------------


@dataclasses.dataclass
class Operation:
    id: str
    method: str
    path: str
    access: str
    body_types: list[str]  # the request body's content types ([] for none)
    schema: dict | None  # the JSON request body's schema, resolved
    params: dict[str, dict]  # path parameter -> schema
    headers: dict[str, dict]  # header parameter -> schema
    responses: dict[str, list[str]]  # status -> documented content types

    @property
    def name(self) -> str:
        return f"{self.id} ({self.method} {self.path})"

    @property
    def json_body(self) -> bool:
        return "application/json" in self.body_types

    @property
    def binary_body(self) -> bool:
        return bool(self.body_types) and not self.json_body


class Contract:
    def __init__(self, document: dict):
        self.document = document
        self.operations: dict[str, Operation] = {}
        for path, item in document["paths"].items():
            shared = item.get("parameters", [])
            for method, operation in item.items():
                if method not in UNSAFE:
                    continue
                parameters = [self.resolve(p) for p in shared + operation.get("parameters", [])]
                content = (operation.get("requestBody") or {}).get("content", {})
                schema = content.get("application/json", {}).get("schema")
                self.operations[operation["operationId"]] = Operation(
                    id=operation["operationId"],
                    method=method.upper(),
                    path=path,
                    access=operation.get("x-quad-access", "?"),
                    body_types=list(content),
                    schema=self.object_schema(schema) if schema else None,
                    params={p["name"]: self.resolve(p["schema"]) for p in parameters if p["in"] == "path"},
                    headers={p["name"]: self.resolve(p["schema"]) for p in parameters if p["in"] == "header"},
                    responses={
                        str(status): list(self.resolve(answer).get("content") or {})
                        for status, answer in operation.get("responses", {}).items()
                    },
                )

    def resolve(self, node):
        while isinstance(node, dict) and "$ref" in node:
            target = self.document
            for part in node["$ref"].lstrip("#/").split("/"):
                target = target[part]
            node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
        return node

    def object_schema(self, schema) -> dict:
        """An object schema with its allOf merged: {properties: {name: resolved schema}, required: [...]}."""
        schema = self.resolve(schema)
        properties: dict[str, dict] = {}
        required: list[str] = []
        for part in [schema] + [self.object_schema(s) for s in schema.get("allOf", [])]:
            for name, property_schema in part.get("properties", {}).items():
                properties[name] = {**properties.get(name, {}), **self.resolve(property_schema)}
            required += part.get("required", [])
        return {**schema, "properties": properties, "required": required}

    def types(self, schema) -> set[str]:
        schema = self.resolve(schema)
        declared = schema.get("type")
        types = set(declared if isinstance(declared, list) else [declared] if declared else [])
        for branch in schema.get("oneOf", []) + schema.get("anyOf", []):
            types |= self.types(branch)
        return types

    def string_branches(self, schema) -> list[dict]:
        schema = self.resolve(schema)
        branches = [self.resolve(b) for b in schema.get("oneOf", [])] or [schema]
        return [b for b in branches if "string" in self.types(b)]

    def is_date(self, schema) -> bool:
        return any(
            b.get("format") in ("date", "date-time") or re.search(r"\[0-9\]\{[34]\}-", b.get("pattern", ""))
            for b in self.string_branches(schema)
        )

    def is_free_text(self, name: str, schema) -> bool:
        """Text people write and others read: no enum, no format, no pattern but one that excludes characters."""
        if "password" in name.lower():
            return False
        branches = self.string_branches(schema)
        return (
            bool(branches)
            and not self.is_date(schema)
            and all(
                "enum" not in b and "format" not in b and ("pattern" not in b or "[^" in b["pattern"]) for b in branches
            )
        )

    def invalid(self, schema, value) -> str | None:
        """Why the schema refuses `value`, or None when it takes it (the keywords the contract uses)."""
        schema = self.resolve(schema)
        if value is NOT_JSON:
            return "not JSON"
        if value is TOO_DEEP:
            return "nested 100k deep"
        if "oneOf" in schema:
            reasons = [self.invalid(branch, value) for branch in schema["oneOf"]]
            if all(reasons):  # the reason of the branch of the value's own type, if there is one
                kind = json_type(value)
                typed = [r for r, b in zip(reasons, schema["oneOf"], strict=True) if kind in self.types(b)]
                return (typed or reasons)[0]
        for branch in schema.get("allOf", []):
            if reason := self.invalid(branch, value):
                return reason
        declared = schema.get("type")
        allowed = set(declared if isinstance(declared, list) else [declared] if declared else [])
        kind = json_type(value)
        if allowed and kind not in allowed and not (kind == "integer" and "number" in allowed):
            return f"not {'/'.join(sorted(allowed))}"
        if "enum" in schema and value not in schema["enum"]:
            return "not in enum"
        if isinstance(value, str):
            if len(value) > schema.get("maxLength", math.inf):
                return f"longer than {schema['maxLength']}"
            if len(value) < schema.get("minLength", 0):
                return f"shorter than {schema['minLength']}"
            if "pattern" in schema and not python_pattern(schema["pattern"]).search(value):
                return "does not match its pattern"
        if kind in ("integer", "number"):
            if value > schema.get("maximum", math.inf) or value < schema.get("minimum", -math.inf):
                return "out of range"
        if isinstance(value, list):
            if len(value) > schema.get("maxItems", math.inf) or len(value) < schema.get("minItems", 0):
                return "wrong number of items"
            if schema.get("uniqueItems") and len({json.dumps(v) for v in value}) != len(value):
                return "repeated items"
            for item in value:
                if "items" in schema and (reason := self.invalid(schema["items"], item)):
                    return f"an item {reason}"
        return None


def json_type(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        if not math.isfinite(value):
            return "not JSON"
        return "integer" if value.is_integer() else "number"
    return {str: "string", list: "array", dict: "object"}.get(type(value), "?")


_PATTERNS: dict[str, re.Pattern] = {}


def python_pattern(pattern: str) -> re.Pattern:
    """An ECMA 262 pattern as Python's re reads it: `$` is the very end (Python's also matches before a final \\n)."""
    if pattern not in _PATTERNS:
        _PATTERNS[pattern] = re.compile(re.sub(r"(?<!\\)\$", r"\\Z", pattern))
    return _PATTERNS[pattern]


def load_contract(server) -> Contract:
    import yaml  # PyYAML comes with schemathesis (e2e/requirements.txt)

    answer = http_request(server.url + "/api/openapi.yaml")
    assert answer.status == 200, f"GET /api/openapi.yaml: {answer.status} {answer.text[:300]}"
    return Contract(yaml.safe_load(answer.body))


# --- Talking to the server -------------------------------------------------------------------------


@dataclasses.dataclass
class Answer:
    status: int | None  # None: no answer (see error)
    content_type: str = ""
    body: bytes = b""
    seconds: float = 0.0
    error: str = ""

    def json(self):
        return json.loads(self.body)

    def summary(self) -> str:
        if self.status is None:
            return f"no answer after {self.seconds:.1f}s ({self.error})"
        text = self.body[:300].decode("utf-8", "replace")
        if self.content_type.startswith("application/problem+json") or self.content_type.startswith("application/json"):
            try:
                problem = self.json()
                text = problem.get("detail") or problem.get("title") or text
            except (ValueError, AttributeError):
                pass
        return f"{self.status} {self.content_type or '(no type)'} {short(text, 140)}"


def short(value, limit: int = 60) -> str:
    text = ascii(value)  # code points spelt out: 'Cafe\u0301' and 'Caf\xe9' look alike printed
    return text if len(text) <= limit else text[: limit - 12] + f"...({len(text)} chars)"


class Wire:
    """One keep-alive HTTP/1.1 connection to the server (reopened when the server closes it)."""

    def __init__(self, server):
        self.server = server
        self.connection: http.client.HTTPConnection | None = None

    def close(self):
        if self.connection is not None:
            self.connection.close()
            self.connection = None

    def send(self, method: str, path: str, body=None, headers: dict | None = None, chunked: bool = False) -> Answer:
        if self.connection is None:
            self.connection = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=REQUEST_TIMEOUT)
        connection = self.connection
        started = time.monotonic()
        send_error = ""
        try:
            if chunked:
                chunks = (body[i : i + 64 * 1024] for i in range(0, len(body), 64 * 1024))
                connection.request(
                    method,
                    path,
                    body=chunks,
                    headers={**(headers or {}), "Transfer-Encoding": "chunked"},
                    encode_chunked=True,
                )
            else:
                connection.request(method, path, body=body, headers=headers or {})
        except (TimeoutError, BrokenPipeError, ConnectionResetError) as error:
            send_error = f"while sending: {type(error).__name__}"  # the server may have answered already
        except OSError as error:
            self.close()
            return Answer(None, seconds=time.monotonic() - started, error=f"while sending: {error!r}")
        try:
            response = connection.getresponse()
            data = response.read()
        except TimeoutError:
            self.close()
            return Answer(None, seconds=time.monotonic() - started, error=f"timed out {send_error}".strip())
        except (http.client.HTTPException, OSError) as error:
            self.close()
            return Answer(
                None, seconds=time.monotonic() - started, error=f"{type(error).__name__} {send_error}".strip()
            )
        seconds = time.monotonic() - started
        if response.will_close or send_error:
            self.close()
        return Answer(response.status, (response.getheader("Content-Type") or "").lower(), data, seconds)


def encode(body) -> bytes:
    """JSON as UTF-8; Raw values go in as written."""
    raws: list[str] = []

    def mark(value):
        if isinstance(value, Raw):
            raws.append(value.text)
            return f"@@raw:{len(raws) - 1}@@"
        if isinstance(value, dict):
            return {k: mark(v) for k, v in value.items()}
        if isinstance(value, list):
            return [mark(v) for v in value]
        return value

    text = json.dumps(mark(body), ensure_ascii=False)
    for index, raw in enumerate(raws):
        text = text.replace(f'"@@raw:{index}@@"', raw, 1)
    return text.encode("utf-8", "surrogatepass")


def plain(value):
    """The value a body stands for (Raw replaced by what it means)."""
    if isinstance(value, Raw):
        return value.value
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


# --- Findings ----------------------------------------------------------------------------------------


@dataclasses.dataclass
class Finding:
    kind: str
    who: str
    operation: str
    where: str  # "body.name", "path roomId", "header Authorization", "body" (a whole raw body)
    value: str  # the hostile value's label
    outcome: str


KINDS = (
    "crash",
    "5xx",
    "no answer or too slow",
    "not a problem document",
    "accepted control/format characters",
    "accepted what the contract refuses",
    "accepted a body it must refuse",
    "read-back differs",
    "read-back failed",
    "lists fail afterwards",
    "baseline refused (the test's own body)",
    "no baseline",
)


class Findings:
    def __init__(self):
        self.items: list[Finding] = []

    def add(self, kind, who, operation, where, value, outcome):
        self.items.append(Finding(kind, who, operation, where, value, outcome))

    def report(self) -> str:
        groups: dict[tuple, list[str]] = defaultdict(list)
        for f in self.items:
            key = (f.kind, f.who, f.operation, f.where, f.outcome if f.kind not in ("read-back differs",) else "")
            detail = f.value if f.kind != "read-back differs" else f"{f.value}: {f.outcome}"
            if detail not in groups[key]:
                groups[key].append(detail)
        lines = [f"{len(self.items)} offence(s) in {len(groups)} group(s):"]
        order = {kind: i for i, kind in enumerate(KINDS)}
        for kind in sorted({k[0] for k in groups}, key=lambda k: order.get(k, 99)):
            keys = [k for k in groups if k[0] == kind]
            lines.append(f"\n== {kind} ({sum(len(groups[k]) for k in keys)}) ==")
            for key in keys:
                _, who, operation, where, outcome = key
                values = groups[key]
                head = f"  [{who}] {operation} {where}"
                if outcome:
                    head += f" -> {outcome}"
                if kind == "read-back differs":
                    lines.append(head + ":")
                    lines += [f"      {v}" for v in values]
                else:
                    lines.append(f"{head}\n      sent: {', '.join(values)}")
        return "\n".join(lines)


# --- A run: one role against the operations ------------------------------------------------------


@dataclasses.dataclass
class Request:
    path: dict  # path parameter -> value, or a function making it (called only when it is not replaced)
    body: Any = None  # JSON (dict), bytes (binary body) or None
    token: str | None = ""  # "" = the run's token; None = no credentials
    content_type: str = "application/json"


class Run:
    def __init__(self, server, contract: Contract, role: str, findings: Findings, tokens: dict):
        self.server, self.contract, self.role, self.findings, self.tokens = server, contract, role, findings, tokens
        self.wire = Wire(server)
        self.shared: dict[str, Any] = {}  # made once, used by every request (the room renamed again and again)
        self.spares: dict[str, Any] = {}  # made when needed, used until an accepted request may have used it up
        self.requests = 0

    @property
    def token(self) -> str:
        return self.tokens["admin"] if self.role == "admin" else self.tokens["ada"]

    def next(self) -> int:
        return next(NUMBERS)

    # Plain calls for setting things up and reading them back: they must work.

    def call(self, method, path, body=None, token: str | None = "", expect=(200, 201, 204), headers=None) -> Answer:
        token = self.token if token == "" else token
        head = {"Content-Type": "application/json"} if body is not None else {}
        if token:
            head["Authorization"] = f"Bearer {token}"
        answer = self.send(method, path, encode(body) if body is not None else None, {**head, **(headers or {})})
        if expect and answer.status not in expect:
            raise AssertionError(f"setting up: {method} {path} {short(body, 200)} -> {answer.summary()}")
        return answer

    def send(self, method, path, body=None, headers=None, chunked=False) -> Answer:
        self.requests += 1
        answer = self.wire.send(method, path, body, headers, chunked)
        if answer.status is None and self.server.process.poll() is not None:
            code = self.server.process.returncode
            self.findings.add("crash", self.role, f"{method} {path[:80]}", "", "", f"exit code {code}")
            self.server.restart()
            self.wire.close()
        return answer

    def admin(self, method, path, body=None, expect=(200, 201, 204)) -> Answer:
        return self.call(method, path, body, token=self.tokens["admin"], expect=expect)

    def fresh_room(self) -> str:
        n = self.next()
        return self.admin(
            "POST",
            "/api/rooms",
            {"id": f"hostile-{n}", "name": f"Hostile room {n}", "building": "Annex", "capacity": 10},
        ).json()["id"]

    def room_name(self, room_id: str) -> str:
        return self.admin("GET", f"/api/rooms/{room_id}").json()["name"]

    def fresh_booking(self, token: str) -> dict:
        room = self.fresh_room()
        booking = self.call("POST", f"/api/rooms/{room}/bookings", {}, token=token).json()["booking"]
        return {"roomId": room, "bookingId": booking["id"]}

    def fresh_book(self, borrower_token: str | None = None) -> int:
        n = self.next()
        book = self.admin("POST", "/api/books", {"title": f"Hostile book {n}", "author": "Anonymous"}).json()["id"]
        if borrower_token:
            self.call("POST", f"/api/books/{book}/checkout", {}, token=borrower_token)
        return book

    def fresh_special(self) -> str:
        n = self.next()
        return self.admin(
            "POST",
            "/api/specials",
            {
                "display_name": f"Hostile special {n}",
                "width": 2,
                "height": 2,
                "original_price": "2.00",
                "price": "1.00",
            },
        ).json()["id"]

    def fresh_link(self, token: str) -> str:
        return self.call("POST", "/api/me/app-links", {"label": f"Link {self.next()}"}, token=token).json()["id"]

    def fresh_person(self) -> str:
        username = f"hostile-{self.next()}"
        self.admin(
            "POST",
            "/api/people",
            {"username": username, "displayName": username.title(), "password": PASSWORD, "role": "member"},
        )
        return username

    def fresh_session(self) -> str:
        body = {"username": "leaver", "password": PASSWORD}
        return self.call("POST", "/api/sessions", body, token=None).json()["token"]

    def once(self, key: str, make: Callable[[], Any]):
        if key not in self.shared:
            self.shared[key] = make()
        return self.shared[key]

    def spare(self, key: str, make: Callable[[], Any]):
        """A resource for an operation that uses it up (deleted, booked, checked out): kept for the next request
        until a request is accepted."""
        if key not in self.spares:
            self.spares[key] = make()
        return self.spares[key]

    def lists_still_answer(self, when: str) -> None:
        """Every GET of the contract without parameters, and the pages, as the admin, as ada and as a visitor."""
        paths = [
            path
            for path, item in self.contract.document["paths"].items()
            if "get" in item and "{" not in path and path != "/api/events"
        ]
        paths += ["/", "/rooms", "/library", "/specials", "/specials?fragment=live", "/timetable", "/account"]
        for path in paths:
            for who, token in (("admin", self.tokens["admin"]), ("ada", self.tokens["ada"]), ("visitor", None)):
                answer = self.call("GET", path, token=token, expect=None)
                if answer.status is None or answer.status >= 500 or answer.seconds > REQUEST_TIMEOUT:
                    self.findings.add("lists fail afterwards", who, f"GET {path}", when, "", answer.summary())


def link_label(run: Run, token: str, link_id: str) -> dict:
    links = run.call("GET", "/api/me/app-links", token=token).json()["links"]
    return {"label": next(link["label"] for link in links if link["id"] == link_id)}


def person(run: Run, username: str) -> dict:
    people = run.admin("GET", "/api/people").json()["people"]
    return next(p for p in people if p["username"].lower() == username.lower())


# What each write operation sends when nothing is hostile (the server accepts it), how what it stored reads
# back (field -> value, for the text fields sent), and what to undo afterwards. A path value may be a function:
# it is called only when that parameter is not the one being replaced.


@dataclasses.dataclass
class Baseline:
    make: Callable[[Run], Request]
    read: Callable[[Run, Request, Answer], dict] | None = None
    undo: Callable[[Run, Request, Answer], None] | None = None
    ignored: tuple = ()  # body fields the server looks things up by, or ignores: never stored
    member: bool = False  # also run as a member


def is_admin(run: Run) -> bool:
    return run.role == "admin"


def display_name(run: Run) -> str:
    return "Administrator" if is_admin(run) else "Ada Lovelace"


def new_room(run: Run) -> Request:
    n = run.next()
    return Request({}, {"id": f"hostile-{n}", "name": f"Hostile room {n}", "building": "Annex", "capacity": 10})


def hall(run: Run) -> str:
    """A building of its own (a room in it), whose rules the hostile values may change without touching another's."""
    n = run.next()
    room = {"id": f"hall-{n}", "name": f"Hall room {n}", "building": "Hostile Hall", "capacity": 10}
    run.admin("POST", "/api/rooms", room)
    return "Hostile Hall"


def new_person(run: Run) -> Request:
    n = run.next()
    return Request(
        {}, {"username": f"hostile-{n}", "displayName": f"Hostile person {n}", "password": PASSWORD, "role": "member"}
    )


def next_departure(run: Run) -> Request:
    departure = run.admin("GET", "/api/departures").json()["departures"][0]
    return Request({"departureId": departure["id"]}, {"predicted": departure["expectedAt"]})


def tomorrow_at_ten(run: Run) -> str:
    """10:00 tomorrow on the campus clock, as the API writes instants (rooms in building Annex open at all hours)."""
    day = (run.server.now().astimezone(MELBOURNE) + dt.timedelta(days=1)).date()
    instant = dt.datetime(day.year, day.month, day.day, 10, tzinfo=MELBOURNE).astimezone(dt.UTC)
    return instant.strftime("%Y-%m-%dT%H:%M:%SZ")


def full_room(run: Run) -> str:
    """A room of one seat, Kier's tomorrow from 10:00 to 10:30: one may wait in line for it then."""
    n = run.next()
    room = run.admin(
        "POST", "/api/rooms", {"id": f"full-{n}", "name": f"Full room {n}", "building": "Annex", "capacity": 1}
    ).json()["id"]
    run.call(
        "POST", f"/api/rooms/{room}/bookings", {"start": tomorrow_at_ten(run), "minutes": 30}, token=run.tokens["kier"]
    )
    return room


def fresh_place(run: Run, token: str, lender: str = "kier") -> str:
    """A place in line (for a book out to `lender`) of the person `token` signs in."""
    book = run.fresh_book(run.tokens[lender])
    return run.call("POST", f"/api/books/{book}/holds", token=token).json()["id"]


def fresh_offer(run: Run) -> str:
    """A book held for the caller: Kier had it, the caller waited, Kier brought it back."""
    book = run.fresh_book(run.tokens["kier"])
    place = run.call("POST", f"/api/books/{book}/holds").json()["id"]
    run.call("POST", f"/api/books/{book}/return", token=run.tokens["kier"])
    return place


def fresh_notice(run: Run) -> str:
    """A notice of the caller's: a room they had booked, removed by the admin."""
    room = run.fresh_room()
    run.call("POST", f"/api/rooms/{room}/bookings", {"start": tomorrow_at_ten(run), "minutes": 30})
    run.admin("DELETE", f"/api/rooms/{room}")
    return run.call("GET", "/api/me/notifications").json()["notices"][0]["id"]  # newest first


BASELINES: dict[str, Baseline] = {
    # Platform
    "uploadImage": Baseline(lambda run: Request({}, png(run.next()), content_type="image/png")),
    # Rooms (renaming first: room names are unique, and each rename frees the hostile name again)
    "updateRoom": Baseline(
        lambda run: Request(
            {"roomId": run.once("room", run.fresh_room)}, {"name": f"Renamed room {run.next()}", "capacity": 20}
        ),
        read=lambda run, request, answer: run.admin("GET", f"/api/rooms/{request.path['roomId']}").json(),
    ),
    "createRoom": Baseline(
        new_room, read=lambda run, request, answer: run.admin("GET", f"/api/rooms/{answer.json()['id']}").json()
    ),
    "setRoomPhoto": Baseline(
        lambda run: Request({"roomId": run.once("room", run.fresh_room)}, png(run.next()), content_type="image/png")
    ),
    "deleteRoom": Baseline(lambda run: Request({"roomId": lambda: run.spare("room", run.fresh_room)})),
    "bookRoom": Baseline(
        lambda run: Request({"roomId": lambda: run.spare("room", run.fresh_room)}, {}), ignored=("person",), member=True
    ),
    "cancelBooking": Baseline(
        lambda run: Request(dict(run.spare("booking", lambda: run.fresh_booking(run.token)))), member=True
    ),
    "checkInBooking": Baseline(
        lambda run: Request(dict(run.once("booking to check in", lambda: run.fresh_booking(run.token)))), member=True
    ),
    "setBuildingRules": Baseline(
        lambda run: Request(
            {"building": run.once("building", lambda: hall(run))},
            {"hours": "Mon-Fri 08:00-20:00", "horizonDays": 14, "maxMinutes": 120, "checkInMinutes": 10},
        )
    ),
    "legacyBook": Baseline(
        lambda run: Request({}, {"name": run.spare("room name", lambda: run.room_name(run.fresh_room()))}),
        ignored=("name",),
        member=True,
    ),
    # Accounts
    "createMyAppLink": Baseline(
        lambda run: Request({}, {"label": f"Phone {run.next()}"}),
        read=lambda run, request, answer: link_label(run, run.token, answer.json()["id"]),
        undo=lambda run, request, answer: run.call("DELETE", f"/api/me/app-links/{answer.json()['id']}"),
        member=True,
    ),
    "revokeMyAppLink": Baseline(
        lambda run: Request({"linkId": lambda: run.spare("link", lambda: run.fresh_link(run.token))}), member=True
    ),
    "createAppLinkFor": Baseline(
        lambda run: Request({"username": "linker"}, {"label": f"Given {run.next()}"}),
        read=lambda run, request, answer: link_label(run, run.tokens["linker"], answer.json()["id"]),
        undo=lambda run, request, answer: run.call(
            "DELETE", f"/api/me/app-links/{answer.json()['id']}", token=run.tokens["linker"]
        ),
    ),
    "createPerson": Baseline(new_person, read=lambda run, request, answer: person(run, answer.json()["username"])),
    "updatePerson": Baseline(
        lambda run: Request({"username": "renamee"}, {"displayName": f"Renamed person {run.next()}"}),
        read=lambda run, request, answer: person(run, "renamee"),
    ),
    "deletePerson": Baseline(lambda run: Request({"username": lambda: run.spare("person", run.fresh_person)})),
    "endPersonSessions": Baseline(lambda run: Request({"username": lambda: run.spare("person", run.fresh_person)})),
    # Specials
    "createSpecial": Baseline(
        lambda run: Request(
            {},
            {
                "display_name": f"Hostile special {run.next()}",
                "width": 4,
                "height": 4,
                "original_price": "9.00",
                "price": "5.00",
            },
        ),
        read=lambda run, request, answer: run.admin("GET", f"/api/specials/{answer.json()['id']}").json(),
        undo=lambda run, request, answer: run.admin("DELETE", f"/api/specials/{answer.json()['id']}"),
    ),
    "updateSpecial": Baseline(
        lambda run: Request(
            {"specialId": run.once("special", run.fresh_special)}, {"display_name": f"Renamed special {run.next()}"}
        ),
        read=lambda run, request, answer: run.admin("GET", f"/api/specials/{request.path['specialId']}").json(),
    ),
    "setSpecialImage": Baseline(
        lambda run: Request(
            {"specialId": run.once("special", run.fresh_special)}, png(run.next()), content_type="image/png"
        )
    ),
    "deleteSpecial": Baseline(lambda run: Request({"specialId": lambda: run.spare("special", run.fresh_special)})),
    "reorderSpecials": Baseline(  # every special, in the order they are in
        lambda run: Request(
            {}, {"ids": [s["id"] for s in run.admin("GET", "/api/specials/all").json()["managerSpecials"]]}
        )
    ),
    "updateSpecialsSettings": Baseline(
        lambda run: Request({}, {"canvasUnit": 16, "currency": "AUD", "timeZone": "Australia/Melbourne"})
    ),
    "watchSpecial": Baseline(lambda run: Request({"specialId": run.once("special", run.fresh_special)}), member=True),
    "unwatchSpecial": Baseline(lambda run: Request({"specialId": run.once("special", run.fresh_special)}), member=True),
    # Library
    "createBook": Baseline(
        lambda run: Request(
            {},
            {
                "title": f"Hostile book {run.next()}",
                "author": "Anonymous",
                "lastCheckedOutBy": display_name(run),
                "lastCheckedOut": "2026-11-20 10:00:00",
            },
        ),
        read=lambda run, request, answer: run.admin("GET", f"/api/books/{answer.json()['id']}").json(),
        member=True,
    ),
    "updateBook": Baseline(
        lambda run: Request({"bookId": run.once("book", run.fresh_book)}, {"title": f"Renamed book {run.next()}"}),
        read=lambda run, request, answer: run.admin("GET", f"/api/books/{request.path['bookId']}").json(),
        member=True,
    ),
    "checkOutBook": Baseline(
        lambda run: Request(
            {"bookId": lambda: run.spare("book", run.fresh_book)}, {"name": "Anonymous Reader"} if is_admin(run) else {}
        ),
        read=lambda run, request, answer: {
            "name": run.admin("GET", f"/api/books/{request.path['bookId']}").json()["lastCheckedOutBy"]
        },
        member=True,
    ),
    "returnBook": Baseline(
        lambda run: Request({"bookId": lambda: run.spare("lent book", lambda: run.fresh_book(run.token))}), member=True
    ),
    "deleteBook": Baseline(lambda run: Request({"bookId": lambda: run.spare("book", run.fresh_book)}), member=True),
    "deleteBooks": Baseline(lambda run: Request({}, {"ids": [run.spare("book", run.fresh_book)]}), member=True),
    # Waiting lines
    "joinRoomWaitingLine": Baseline(
        lambda run: Request(
            {"roomId": lambda: run.spare("full room", lambda: full_room(run))},
            {"start": tomorrow_at_ten(run), "minutes": 30},
        ),
        member=True,
    ),
    "holdBook": Baseline(
        lambda run: Request({"bookId": lambda: run.spare("book out", lambda: run.fresh_book(run.tokens["kier"]))}),
        member=True,
    ),
    "setReminders": Baseline(
        lambda run: Request({}, {"offers": True, "dueSoon": False, "dueToday": True, "overdue": True}), member=True
    ),
    "leaveWaitingLine": Baseline(
        lambda run: Request({"placeId": lambda: run.spare("place", lambda: fresh_place(run, run.token))}), member=True
    ),
    "acceptOffer": Baseline(
        lambda run: Request({"placeId": lambda: run.spare("offer", lambda: fresh_offer(run))}), member=True
    ),
    "dismissNotice": Baseline(
        lambda run: Request({"noticeId": lambda: run.spare("notice", lambda: fresh_notice(run))}), member=True
    ),
    "removeFromWaitingLine": Baseline(
        lambda run: Request(
            {"placeId": lambda: run.spare("kier's place", lambda: fresh_place(run, run.tokens["kier"], lender="ada"))}
        )
    ),
    # Timetable
    "setParkingReading": Baseline(lambda run: Request({"parkingId": "clayton"}, {"free": 10})),
    "setDeparturePrediction": Baseline(next_departure),
    "rotateMyCalendar": Baseline(lambda run: Request({}, token=run.tokens["kier"]), member=True),
    "setMyStops": Baseline(
        lambda run: Request({}, {"stops": ["clayton"]}, token=run.tokens["kier"]),
        read=lambda run, request, answer: {
            "stops": run.call("GET", "/api/me/stops", token=run.tokens["kier"]).json()["chosen"]
        },
        member=True,
    ),
    # Last: signing out (the admin's token is the operator's, which signing out leaves alone; a member signs out
    # a session of their own each time), signing in (after five failures from one address, every sign-in from
    # it waits), and deleting every book.
    "endSession": Baseline(
        lambda run: Request({}, token="" if is_admin(run) else run.spare("session", run.fresh_session)), member=True
    ),
    "createSession": Baseline(
        lambda run: Request({}, {"username": "grace", "password": run.tokens["grace password"]}, token=None),
        ignored=("username", "password"),
        member=True,
    ),
    "cleanLibrary": Baseline(lambda run: Request({})),
}
ORDER = list(BASELINES)
# Operations with nothing a client writes to probe, and why (each is tested where it is: see the reason).
NOT_PROBED = {
    "unsubscribeMail": "its one input is the token in the link a message carries (nothing it is sent is stored): "
    "OfferMailTests follows one, and test_cross_origin sends it a forged one from another origin",
    "importRecords": "its body is a CSV file, not JSON: each cell goes through the validators of createRoom, "
    "createPerson and createBook (probed here), and RecordsTests sends it rows at fault, unknown and missing "
    "columns, a forged form and a formula cell",
    "importGTFS": "its body is a ZIP of CSV files, not JSON: GTFSTests (Swift) and test_gtfs send it feeds at fault "
    "(missing files, rows naming what the feed lacks, times that are no time) and test_cross_origin a forged one",
    "redeemSignInCode": "it answers 404 unless the organisation's sign-in is set up, and its inputs are a one-time "
    "code and a verifier, neither stored: OrganisationSignInTests trade good, spent, and wrong ones",
}


def start(quad_server_factory):
    """The demo on a weekday morning (shuttles to come), without rate limits, with the people the operations
    need, and ada, kier and linker signed in."""
    server = quad_server_factory(demo=True, now=melbourne("10:00", "weekday"), env={"QUAD_RATE_LIMIT": "0"})
    for username in ("linker", "renamee", "leaver"):
        add_person(server, username, PASSWORD)
    tokens = {
        "admin": server.admin_token,
        "ada": session_token(server, "ada"),
        "kier": session_token(server, "kier"),
        "linker": session_token(server, "linker", PASSWORD),
        "grace password": password_of(server, "grace"),
    }
    return server, load_contract(server), tokens


def operations_for(run: Run) -> list[Operation]:
    contract_ops = run.contract.operations
    missing = sorted(set(contract_ops) - set(BASELINES) - set(NOT_PROBED)) if run.role == "admin" else []
    for operation_id in missing:
        run.findings.add(
            "no baseline",
            run.role,
            contract_ops[operation_id].name,
            "",
            "",
            "add it to BASELINES in e2e/test_hostile_input.py",
        )
    chosen = [contract_ops[o] for o in ORDER if o in contract_ops]
    if run.role != "admin":
        chosen = [op for op in chosen if BASELINES[op.id].member]
    return chosen


# --- Sending one request and judging its answer -------------------------------------------------------


def build(run: Run, op: Operation, request: Request, path_override: tuple[str, str] | None = None) -> str:
    path = op.path
    for name in op.params:
        if path_override and path_override[0] == name:
            value = path_override[1]
        else:
            value = request.path.get(name)
            value = value() if callable(value) else value
            request.path[name] = value
        path = path.replace("{" + name + "}", urllib.parse.quote(str(value), safe=""))
    return path


def headers_for(run: Run, request: Request, body_bytes: bytes | None, extra: dict | None = None) -> dict:
    headers = {}
    token = run.token if request.token == "" else request.token
    if token:
        headers["Authorization"] = f"Bearer {token}"
    if body_bytes is not None:
        headers["Content-Type"] = request.content_type
    return {**headers, **(extra or {})}


def judge(run: Run, op: Operation, where: str, label: str, answer: Answer) -> bool:
    """Records what is wrong with an answer whatever was sent; True when it is a 2xx."""
    who = run.role
    if answer.status is None or answer.seconds > REQUEST_TIMEOUT:
        run.findings.add("no answer or too slow", who, op.name, where, label, answer.summary())
        return False
    if answer.status >= 500 or answer.status < 200 or 300 <= answer.status < 400:
        run.findings.add(
            "5xx" if answer.status >= 500 else "not a problem document", who, op.name, where, label, answer.summary()
        )
        return False
    if answer.status >= 400:
        documented = op.responses.get(str(answer.status), [])
        media = answer.content_type.split(";")[0].strip()
        if media != "application/problem+json":
            if media not in documented or not documented:
                run.findings.add("not a problem document", who, op.name, where, label, answer.summary())
        else:
            try:
                status = answer.json().get("status")
            except (ValueError, AttributeError):
                status = "unreadable"
            if status != answer.status:
                run.findings.add(
                    "not a problem document",
                    who,
                    op.name,
                    where,
                    label,
                    f"{answer.status} with a problem whose status is {status!r}",
                )
        return False
    run.spares.clear()  # an accepted request may have used them up
    return True


def send_json(
    run: Run, op: Operation, request: Request, where: str, label: str, body=None, path_override=None, extra_headers=None
) -> tuple[Answer, bool]:
    path = build(run, op, request, path_override)
    body = request.body if body is None else body
    if isinstance(body, bytes):
        data = body
    else:
        data = encode(body) if body is not None else None
    answer = run.send(op.method, path, data, headers_for(run, request, data, extra_headers))
    return answer, judge(run, op, where, label, answer)


def expected_text(sent: str) -> str:
    return unicodedata.normalize("NFC", sent)


def reads_back_right(sent: str, got) -> bool:
    """The text as sent, in NFC (trimmed, as the contract allows). Blank text may clear a field or mean a
    default (checking a book out to "" is to the caller): nothing to compare."""
    expected = expected_text(sent)
    return got == expected or (isinstance(got, str) and got == expected.strip()) or not expected.strip()


def refused_characters(value) -> list[str]:
    if not isinstance(value, str):
        return []
    found = []
    for character in value:
        if unicodedata.category(character) in REFUSED_CATEGORIES and f"U+{ord(character):04X}" not in found:
            found.append(f"U+{ord(character):04X}")
    return found


def as_text(value) -> str | None:
    """A text field's value as text: a string, or a list of strings (categories) joined as the server joins them."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return ", ".join(value)
    return None


def check_accepted_field(
    run: Run, op: Operation, baseline: Baseline, request: Request, answer: Answer, field: str, label: str, value
) -> None:
    """An accepted write: was the value one the contract allows, without refused characters; does what was
    stored still read, and read back as sent (NFC)?"""
    schema = op.schema["properties"].get(field, {})
    plain_value = plain(value)
    where = f"body.{field}"
    text = as_text(plain_value)
    free_text = field not in baseline.ignored and run.contract.is_free_text(field, schema) and text is not None
    refused = free_text and refused_characters(text)
    if refused:  # (reported once: the contract's pattern may refuse them too)
        run.findings.add("accepted control/format characters", run.role, op.name, where, label, f"{answer.status}")
    elif reason := run.contract.invalid(schema, plain_value):
        run.findings.add(
            "accepted what the contract refuses", run.role, op.name, where, label, f"{answer.status} ({reason})"
        )
    if baseline.read:
        try:
            stored = baseline.read(run, request, answer)
        except (AssertionError, StopIteration, KeyError, ValueError, TypeError) as error:
            run.findings.add(
                "read-back failed", run.role, op.name, where, label, f"{type(error).__name__}: {error}"[:200]
            )
        else:
            got = stored.get(field)
            if isinstance(got, list):
                got = ", ".join(got)
            # Categories come back joined with ", " whatever separated them.
            categories = field == "categories" and got == ", ".join(
                part.strip() for part in expected_text(text or "").split(",")
            )
            if free_text and not refused and not reads_back_right(text, got) and not categories:
                run.findings.add(
                    "read-back differs",
                    run.role,
                    op.name,
                    where,
                    label,
                    f"sent {short(text)}, NFC {short(expected_text(text))}, read back {short(got)}",
                )
    if baseline.undo:
        baseline.undo(run, request, answer)


def array_items(contract: Contract, schema: dict) -> dict:
    for branch in [schema] + schema.get("oneOf", []):
        branch = contract.resolve(branch)
        declared = branch.get("type")
        if "items" in branch and ("array" == declared or isinstance(declared, list) and "array" in declared):
            return contract.resolve(branch["items"])
    return {}


def path_value_invalid(contract: Contract, schema: dict, text: str) -> str | None:
    """Why a path parameter's schema refuses `text` (a path is text: an integer parameter is read as one)."""
    if contract.types(schema) & {"integer", "number"}:
        try:
            return contract.invalid(schema, int(text))
        except ValueError:
            return "not an integer"
    return contract.invalid(schema, text)


def field_values(contract: Contract, name: str, schema: dict) -> list[tuple[str, Any]]:
    types = contract.types(schema)
    values: list[tuple[str, Any]] = []
    if "string" in types:
        values += PASSWORD_VALUES if "password" in name.lower() else HOSTILE_STRINGS
        if contract.is_date(schema):
            values += FAR_DATES
    if types & {"integer", "number"}:
        values += HOSTILE_NUMBERS
    if "array" in types:
        items = array_items(contract, schema)
        if contract.types(items) & {"integer", "number"}:
            values += [("100k ids", list(range(1, 100_001))), ("100k times one id", [1] * 100_000)]
            values += [(f"[{label}]", [value]) for label, value in HOSTILE_NUMBERS]
        else:
            values += [
                ("65k ids", [f"{i:012d}" for i in range(65_000)]),  # just under 1 MiB
                ("100k ids", [f"{i:012d}" for i in range(100_000)]),
                ("100k times one id", ["A" * 12] * 100_000),
            ]
            values += [(f"[{label}]", [value]) for label, value in HOSTILE_STRINGS if label != "1M chars"]
    seen = {json.dumps(plain(v), default=str) for _, v in values if not isinstance(v, Raw)}
    values += [(label, v) for label, v in WRONG_TYPES if isinstance(v, Raw) or json.dumps(v) not in seen]
    return values


def run_fields(run: Run) -> None:
    """Each operation: its baseline, then each body field and each path parameter replaced by each hostile value."""
    for op in operations_for(run):
        if op.id == "cleanLibrary":
            run.lists_still_answer("before DELETE /api/clean")
        run_fields_of(run, op, BASELINES[op.id])


def run_fields_of(run: Run, op: Operation, baseline: Baseline) -> None:
    request = baseline.make(run)
    answer, accepted = send_json(run, op, request, "baseline", "baseline")
    if not accepted:
        run.findings.add("baseline refused (the test's own body)", run.role, op.name, "", "baseline", answer.summary())
        return
    if baseline.undo:
        baseline.undo(run, request, answer)
    if op.schema:
        for field, schema in op.schema["properties"].items():
            for label, value in field_values(run.contract, field, schema):
                request = baseline.make(run)
                body = {**request.body, field: value}
                answer, accepted = send_json(run, op, request, f"body.{field}", label, body=body)
                if accepted:
                    check_accepted_field(run, op, baseline, request, answer, field, label, value)
    for name, schema in op.params.items():
        for label, value in PATH_VALUES:
            request = baseline.make(run)
            answer, accepted = send_json(run, op, request, f"path {name}", label, path_override=(name, value))
            if accepted and (reason := path_value_invalid(run.contract, schema, value)):
                run.findings.add(
                    "accepted what the contract refuses",
                    run.role,
                    op.name,
                    f"path {name}",
                    label,
                    f"{answer.status} ({reason})",
                )


# --- Whole bodies and headers --------------------------------------------------------------------------


def first_text_field(run: Run, op: Operation, baseline: Baseline, body: dict) -> str | None:
    for field, schema in (op.schema or {}).get("properties", {}).items():
        if field in body and field not in baseline.ignored and run.contract.is_free_text(field, schema):
            return field
    return None


def raw_bodies(run: Run, op: Operation, baseline: Baseline, request: Request) -> list[tuple]:
    """(label, bytes, headers, chunked, must be refused) for one operation."""
    json_type = {"Content-Type": "application/json"}
    big = b'{"x":"' + b"a" * (2 * MiB) + b'"}'
    bodies = [
        ("empty, typed JSON", b"", json_type, False, bool(op.schema and op.schema.get("required"))),
        ("empty, no type", b"", {}, False, False),
        ("2 MiB JSON, Content-Length", big, json_type, False, True),
        ("2 MiB JSON, chunked", big, json_type, True, True),
        (
            "2 MiB as image/png",
            b"\x89PNG\r\n\x1a\n" + b"\0" * (2 * MiB),
            {"Content-Type": "image/png"},
            False,
            not op.binary_body,
        ),
        ("100k-deep [[[", b"[" * 100_000 + b"]" * 100_000, json_type, False, bool(op.json_body)),
        ('100k-deep {"a":', b'{"a":' * 100_000 + b"1" + b"}" * 100_000, json_type, False, bool(op.json_body)),
    ]
    if not op.body_types:  # no body expected: what a body could do is be large or unreadable
        return bodies + [("invalid UTF-8", b'{"\xff\xfe": "\xc0\xaf"}', json_type, False, False)]
    if op.binary_body:
        six = png(1) + b"\0" * (6 * 1000 * 1000)
        bodies += [
            ("6 MB upload, chunked", six, {"Content-Type": "image/png"}, True, True),
            ("6 MB upload, Content-Length", six, {"Content-Type": "image/png"}, False, True),
            ("PNG header only", b"\x89PNG\r\n\x1a\n", {"Content-Type": "image/png"}, False, True),
            ("PNG claiming 100000x100000", png(3, 100_000, 100_000), {"Content-Type": "image/png"}, False, False),
            ("JSON as image/png", b'{"x": 1}', {"Content-Type": "image/png"}, False, True),
            ("PNG as application/json", png(4), json_type, False, False),
            ("PNG as text/html", png(5), {"Content-Type": "text/html"}, False, False),
        ]
        return bodies
    document = request.body if isinstance(request.body, dict) else {}
    valid = encode(document)
    field = first_text_field(run, op, baseline, document)
    # Bytes no UTF-8 has: 0xFF 0xFE, an overlong "/" (C0 AF), a surrogate encoded (ED A0 80).
    bad = b'"bad \xff\xfe \xc0\xaf \xed\xa0\x80 end"'
    invalid_text = (
        encode({**document, field: "@@bad@@"}).replace(b'"@@bad@@"', bad) if field else b'{"\xff\xfe": "\xc0\xaf"}'
    )
    bodies += [
        ("invalid UTF-8" + (f" in {field}" if field else ""), invalid_text, json_type, False, bool(field)),
        ("UTF-8 BOM + JSON", b"\xef\xbb\xbf" + valid, json_type, False, False),
        (
            "UTF-16 JSON",
            json.dumps(document).encode("utf-16"),
            {"Content-Type": "application/json; charset=utf-16"},
            False,
            False,
        ),
        ("JSON as text/plain", valid, {"Content-Type": "text/plain"}, False, False),
        ("JSON as image/png", valid, {"Content-Type": "image/png"}, False, False),
        ("trailing garbage", valid + b"}garbage", json_type, False, bool(op.json_body)),
        ("two documents", valid + valid, json_type, False, bool(op.json_body)),
        ("top-level null", b"null", json_type, False, bool(op.json_body)),
        ("top-level []", b"[]", json_type, False, bool(op.json_body)),
        ('top-level "x"', b'"x"', json_type, False, bool(op.json_body)),
        ("top-level 1e400", b"1e400", json_type, False, bool(op.json_body)),
        ("NUL bytes", b"\0" * 1000, json_type, False, bool(op.json_body)),
    ]
    return bodies


# Header values per operation. Control characters in a header (NUL, ESC) and oversized heads are refused by the
# HTTP parser before any route: they are sent once (run_request_heads).
HOSTILE_AUTHORIZATION = [
    ("Bearer + 10k chars", b"Bearer " + b"A" * 10_000),
    ("Bearer latin-1 bytes", b"Bearer \xe9\xff"),
    ("Bearer UTF-8", "Bearer \xe9\u202e".encode()),
    ("Basic", b"Basic YWRtaW46YWRtaW4="),
    ("Bearer empty", b"Bearer "),
]

HOSTILE_HEADER_VALUES = [
    ("256 chars", b"k" * 256),
    ("10k chars", b"k" * 10_000),
    ("latin-1 bytes", b"key\xe9\xff"),
    ("UTF-8 RLO", "key\u202e".encode()),
    ("spaces only", b"   "),
]


def undo(run: Run, baseline: Baseline, request: Request, answer: Answer) -> None:
    """Takes back what an accepted request made, when it is something that runs out (app links, specials)."""
    if baseline.undo:
        try:
            baseline.undo(run, request, answer)
        except (ValueError, KeyError, TypeError):
            pass  # an answer without the id: nothing to take back


def run_raw(run: Run) -> None:
    """Each operation: whole bodies no client should send; then, as the admin, hostile headers."""
    for op in operations_for(run):
        run_raw_of(run, op)


def run_raw_of(run: Run, op: Operation) -> None:
    baseline = BASELINES[op.id]
    if op.id == "endSession" and run.role != "admin":
        return  # each accepted one costs a sign-in (bcrypt); the admin's run sends the same bodies
    if op.id == "cleanLibrary":
        run.lists_still_answer("before DELETE /api/clean")
    for label, data, content, chunked, must_refuse in raw_bodies(run, op, baseline, baseline.make(run)):
        request = baseline.make(run)
        path = build(run, op, request)
        headers = {**headers_for(run, request, None), **content}
        answer = run.send(op.method, path, data, headers, chunked)
        if judge(run, op, "body", label, answer):
            if must_refuse:
                run.findings.add("accepted a body it must refuse", run.role, op.name, "body", label, str(answer.status))
            undo(run, baseline, request, answer)
    if run.role != "admin":  # the headers once, as the admin
        return
    for label, value in HOSTILE_AUTHORIZATION:
        request = baseline.make(run)
        path = build(run, op, request)
        body = request.body if isinstance(request.body, bytes) or request.body is None else encode(request.body)
        headers = {**headers_for(run, request, body), "Authorization": value}
        answer = run.send(op.method, path, body, headers)
        if judge(run, op, "header Authorization", label, answer):
            if op.access != "public":
                run.findings.add(
                    "accepted what the contract refuses",
                    run.role,
                    op.name,
                    "header Authorization",
                    label,
                    str(answer.status),
                )
            undo(run, baseline, request, answer)
    for header, schema in op.headers.items():
        for label, value in HOSTILE_HEADER_VALUES:
            request = baseline.make(run)
            answer, accepted = send_json(run, op, request, f"header {header}", label, extra_headers={header: value})
            text = value.decode("latin-1")
            if accepted and (reason := run.contract.invalid(schema, text)):
                run.findings.add(
                    "accepted what the contract refuses",
                    run.role,
                    op.name,
                    f"header {header}",
                    label,
                    f"{answer.status} ({reason})",
                )
            if accepted:
                undo(run, baseline, request, answer)


def run_request_heads(run: Run) -> None:
    """Heads the HTTP parser refuses before any route (control characters in a header, a request line or
    header longer than it keeps), once: refused, as a problem, promptly."""
    op = run.contract.operations["updateRoom"]
    room = run.once("room", run.fresh_room)
    body = encode({"capacity": 20})
    base = {"Authorization": f"Bearer {run.token}", "Content-Type": "application/json"}
    for label, path, headers in (
        ("Authorization: Bearer NUL", f"/api/rooms/{room}", {**base, "Authorization": b"Bearer \x00"}),
        ("Authorization: Bearer ESC[31m", f"/api/rooms/{room}", {**base, "Authorization": b"Bearer \x1b[31m"}),
        ("Idempotency-Key: NUL", f"/api/rooms/{room}", {**base, "Idempotency-Key": b"key\x00"}),
        ("URL of 100k characters", "/api/rooms/" + "z" * 100_000, base),
        ("header of 100k characters", f"/api/rooms/{room}", {**base, "X-Long": "a" * 100_000}),
        ("1000 headers", f"/api/rooms/{room}", {**base, **{f"X-Many-{i}": "a" for i in range(1000)}}),
    ):
        judge(run, op, "request head", label, run.send(op.method, path, body, headers))


def run_raw_members_everywhere(run: Run) -> None:
    """A member's raw bodies to their operations, and a few to the admin's: refused (403) before the body is read."""
    run_raw(run)
    member_ops = {op.id for op in operations_for(run)}
    for op in run.contract.operations.values():
        if op.id in member_ops or op.id not in BASELINES or op.id == "endSession":
            continue
        big = b'{"x":"' + b"a" * (2 * MiB) + b'"}'
        for label, data, chunked in (
            ("2 MiB JSON, chunked", big, True),
            ("100k-deep [[[", b"[" * 100_000, False),
            ("invalid UTF-8", b'{"\xff": "\xc0\xaf"}', False),
        ):
            path = op.path
            for name in op.params:
                path = path.replace("{" + name + "}", "x1")
            headers = {"Authorization": f"Bearer {run.token}", "Content-Type": "application/json"}
            answer = run.send(op.method, path, data, headers, chunked)
            if judge(run, op, "body", label, answer):
                run.findings.add(
                    "accepted a body it must refuse", run.role, op.name, "body (as a member)", label, str(answer.status)
                )


def finish(run: Run, server, started: float) -> None:
    run.lists_still_answer("at the end")
    try:
        health = http_request(server.url + "/health", timeout=REQUEST_TIMEOUT).status
    except OSError as error:
        health = f"no answer ({error})"
    if health != 200:
        run.findings.add("lists fail afterwards", run.role, "GET /health", "at the end", "", str(health))
    print(f"{run.role}: {run.requests} requests in {time.monotonic() - started:.1f}s")


# --- The tests ------------------------------------------------------------------------------------------


def run_every_field(quad_server_factory, role: str) -> None:
    server, contract, tokens = start(quad_server_factory)
    findings, started = Findings(), time.monotonic()
    run = Run(server, contract, role, findings, tokens)
    run_fields(run)
    finish(run, server, started)
    if findings.items:
        pytest.fail(findings.report(), pytrace=False)


def test_every_field_of_every_write_survives_hostile_values_as_the_admin(quad_server_factory):
    """The admin sends each write operation with each field, and each path parameter, replaced by each hostile
    value: every answer is a prompt 2xx or a problem document; nothing with control or bidi characters is
    stored; what is stored reads back as sent, in NFC; and every list still loads afterwards."""
    run_every_field(quad_server_factory, "admin")


def test_every_field_a_member_may_write_survives_hostile_values(quad_server_factory):
    """The same for ada, a member, on the operations a member may call (books, bookings, app links, her
    calendar, signing in and out)."""
    run_every_field(quad_server_factory, "member")


def test_hostile_bodies_and_headers_get_a_prompt_refusal(quad_server_factory):
    """Whole bodies no client should send (invalid UTF-8, 100k-deep nesting, 2 MiB declared or chunked, an
    image to a JSON route, a 6 MB chunked upload, empty) and hostile Authorization, Idempotency-Key and
    If-Match headers, to every write operation, as the admin and as a member: a prompt 4xx problem (or a
    2xx where the body is harmless), never a 5xx, a hang or a dropped connection."""
    server, contract, tokens = start(quad_server_factory)
    findings, started = Findings(), time.monotonic()
    for role in ("member", "admin"):  # the admin's run ends by deleting every book
        run = Run(server, contract, role, findings, tokens)
        if role == "member":
            run_raw_members_everywhere(run)
        else:
            run_request_heads(run)
            run_raw(run)
    finish(run, server, started)
    if findings.items:
        pytest.fail(findings.report(), pytrace=False)
