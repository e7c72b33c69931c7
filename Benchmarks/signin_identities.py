#!/usr/bin/env python3
"""Sign in the people the signed-in scenarios act as; write each one's request headers.

usage: signin_identities.py URL ADMIN_TOKEN QUAD_STDOUT OUT_DIR IDENTITY...

IDENTITY is PERSON-KIND: PERSON is a demo person (`kier`, the student with timetable
data, or `member`, which means `ada`), KIND is `bearer` or `cookie`:
  bearer  POST /api/sessions {"username", "password"} -> Authorization: Bearer <token>
  cookie  POST /signin (the browser's form: username, password, csrf, with the quad_csrf
          cookie and Origin: URL) -> 303 with Set-Cookie quad_session=<web session>;
          Cookie: quad_session=<it>; quad_csrf=<the token>; quad_lang=en
The demo people's passwords are the ones Quad printed once on its stdout (QUAD_STDOUT,
lines "  kier (member): <password>"). When a password is not there, the admin token sets a
new one (PATCH /api/people/<username>, before the person has any session).
Writes OUT_DIR/IDENTITY.headers, one "Name: value" line per header. Prints a line
"IDENTITY: error" on stderr for each identity it could not sign in, and exits 1 if any.
Standard library only.
"""

import http.client
import os
import re
import secrets
import sys
import urllib.parse

from booking_storm_setup import call, expect

PEOPLE = {"kier": "kier", "member": "ada"}
KINDS = ("bearer", "cookie")


def demo_passwords(path):
    """{username: password} from Quad's "Demo people (passwords shown once):" lines."""
    try:
        text = open(path, encoding="utf-8", errors="replace").read()
    except OSError:
        return {}
    return dict(re.findall(r"^\s+([A-Za-z0-9._-]+) \(\w+\): (\S+)\s*$", text, re.M))


def password_for(base, admin, username, known):
    if username in known:
        return known[username]
    password = secrets.token_urlsafe(12)
    status, data = call(base, "PATCH", f"/api/people/{username}", {"password": password}, admin)
    expect(status, data, 200, f"setting {username}'s password (it was not on Quad's stdout)")
    known[username] = password
    return password


def bearer(base, username, password):
    status, data = call(base, "POST", "/api/sessions", {"username": username, "password": password})
    return [f"Authorization: Bearer {expect(status, data, 201, 'signing in ' + username)['token']}"]


def cookie(base, username, password):
    u = urllib.parse.urlsplit(base)
    csrf = secrets.token_urlsafe(32)  # Quad keeps a quad_csrf cookie of >= 32 characters as it is
    form = urllib.parse.urlencode({"username": username, "password": password, "csrf": csrf})
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
    try:
        conn.request(
            "POST",
            "/signin",
            form,
            {
                "Content-Type": "application/x-www-form-urlencoded",
                "Cookie": f"quad_csrf={csrf}; quad_lang=en",
                "Origin": f"{u.scheme}://{u.netloc}",
            },
        )
        resp = conn.getresponse()
        body = resp.read()
        session = None
        for value in resp.headers.get_all("Set-Cookie") or []:
            m = re.match(r"\s*quad_session=([^;]*)", value)
            if m and m.group(1):
                session = m.group(1)
    finally:
        conn.close()
    if resp.status != 303 or not session:
        text = body[:200].decode("utf-8", "replace")
        sys.exit(f"web sign-in of {username}: HTTP {resp.status}, no quad_session cookie ({text!r})")
    return [f"Cookie: quad_session={session}; quad_csrf={csrf}; quad_lang=en"]


def main(argv):
    if len(argv) < 5:
        print(__doc__, file=sys.stderr)
        return 2
    base, admin, stdout_path, out_dir = argv[1:5]
    os.makedirs(out_dir, mode=0o700, exist_ok=True)
    known = demo_passwords(stdout_path)
    failed = 0
    for identity in argv[5:]:
        who, _, kind = identity.rpartition("-")
        try:
            if who not in PEOPLE or kind not in KINDS:
                sys.exit(f"unknown identity (known: {', '.join(p + '-' + k for p in PEOPLE for k in KINDS)})")
            username = PEOPLE[who]
            password = password_for(base, admin, username, known)
            headers = (bearer if kind == "bearer" else cookie)(base, username, password)
        except SystemExit as e:
            print(f"{identity}: {e}", file=sys.stderr)
            failed += 1
            continue
        except (OSError, http.client.HTTPException, ValueError, KeyError) as e:
            print(f"{identity}: {type(e).__name__}: {e}", file=sys.stderr)
            failed += 1
            continue
        with open(os.path.join(out_dir, identity + ".headers"), "w") as f:
            f.write("".join(h + "\n" for h in headers))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
