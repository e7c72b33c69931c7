"""A real OpenID provider for the tests: `oidc-provider-mock` (Authlib, someone else's implementation: discovery,
authorization code, JWKS, RP-initiated sign-out), with a few test controls beside it.

    python3 e2e/oidc_provider.py [--port N]

It prints "listening on PORT" once it accepts connections and serves until it is stopped. Its issuer is
http://localhost:PORT. People are set with the provider's own `PUT /users/{sub}` (their claims, as JSON); the
sign-in page is the provider's: type the subject and press Authorize.

What this file adds, all under /test/ except the PKCE check:
- PKCE is enforced: the mock takes `code_challenge` but does not check it, so a code asked for with an S256
  challenge is only traded with the verifier it was made from (else `invalid_grant`, as a provider that checks it
  answers). `GET /test/authorizations` lists what each sign-in asked with, for a test to read.
- `POST /test/tamper {"mode": M}`: the next token answer's ID token is replaced by one this file signs (joserfc):
  `other-key` (the same claims and `kid`, signed with another key), `wrong-audience`, `wrong-issuer`, `expired`,
  `wrong-nonce` (each signed with the provider's own key, so only that claim is wrong) or `none` (`alg: none`,
  unsigned). This is the one stand-in the issue allows: the provider cannot be made to issue such tokens itself.
- `POST /test/rotate`: the provider signs with a new key from now on (its JWKS lists only the new one).
- `POST /test/unnamed-keys`: from now on its keys and tokens carry no `kid`, as some providers' do with one key
  (LemonLDAP::NG without `oidcServiceKeyIdSig`): its JWKS lists the key without one, and each ID token is signed again
  by the same key with no `kid` in its header.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import signal
import sys
import threading
import time
import warnings
from urllib.parse import parse_qs, urlparse

os.environ.setdefault("AUTHLIB_INSECURE_TRANSPORT", "1")
warnings.filterwarnings("ignore")

import flask  # noqa: E402
import oidc_provider_mock  # noqa: E402
import werkzeug.serving  # noqa: E402
from authlib import jose as authlib_jose  # noqa: E402
from joserfc import jwt  # noqa: E402
from joserfc.jwk import RSAKey  # noqa: E402


def s256(verifier: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()


def build_app() -> flask.Flask:
    app = oidc_provider_mock.app(require_nonce=True)
    lock = threading.Lock()
    challenges: dict[str, str] = {}  # code -> S256 challenge it was asked with
    authorizations: list[dict[str, str]] = []
    tamper: dict[str, str] = {}
    unnamed = {"on": False}

    def storage():
        return flask.g.oidc_provider_mock_storage

    @app.after_request
    def remember_challenge(response: flask.Response) -> flask.Response:
        request = flask.request
        if request.path == "/oauth2/authorize" and request.method == "POST" and response.status_code in (302, 303):
            code = parse_qs(urlparse(response.headers.get("Location", "")).query).get("code", [None])[0]
            asked = {key: request.args.get(key, "") for key in request.args}
            with lock:
                authorizations.append(asked)
                if code and asked.get("code_challenge_method") == "S256":
                    challenges[code] = asked.get("code_challenge", "")
        return response

    @app.before_request
    def check_verifier():
        request = flask.request
        if request.path != "/oauth2/token" or request.form.get("grant_type") != "authorization_code":
            return None
        with lock:
            challenge = challenges.get(request.form.get("code", ""))
        if challenge is not None and s256(request.form.get("code_verifier", "")) != challenge:
            return flask.jsonify(error="invalid_grant", error_description="PKCE verifier does not match"), 400
        return None

    @app.after_request
    def replace_id_token(response: flask.Response) -> flask.Response:
        if flask.request.path != "/oauth2/token" or response.status_code != 200:
            return response
        with lock:
            mode = tamper.pop("mode", None)
        if mode is None and unnamed["on"]:
            mode = "unnamed"
        if mode is None:
            return response
        answer = json.loads(response.get_data())
        own = RSAKey.import_key(storage().jwk.as_dict(is_private=True))
        claims = dict(jwt.decode(answer["id_token"], own).claims)
        header = {"alg": "RS256"} if mode == "unnamed" else {"alg": "RS256", "kid": own.kid}
        key = own
        now = int(time.time())
        if mode == "other-key":
            key = RSAKey.generate_key(2048)
        elif mode == "wrong-audience":
            claims["aud"] = "someone-else"
        elif mode == "wrong-issuer":
            claims["iss"] = "http://issuer.invalid"
        elif mode == "expired":
            claims["iat"], claims["exp"] = now - 7200, now - 3600
        elif mode == "wrong-nonce":
            claims["nonce"] = "another-sign-in"
        if mode == "none":
            part = lambda value: base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()  # noqa: E731
            answer["id_token"] = part({"alg": "none", "typ": "JWT"}) + "." + part(claims) + "."
        else:
            answer["id_token"] = jwt.encode(header, claims, key)
        response.set_data(json.dumps(answer))
        return response

    @app.post("/test/tamper")
    def set_tamper():
        with lock:
            tamper["mode"] = flask.request.get_json()["mode"]
        return "", 204

    @app.after_request
    def strip_key_names(response: flask.Response) -> flask.Response:
        if flask.request.path == "/jwks" and unnamed["on"]:
            keys = json.loads(response.get_data())
            for key in keys["keys"]:
                key.pop("kid", None)
            response.set_data(json.dumps(keys))
        return response

    @app.post("/test/unnamed-keys")
    def name_no_keys():
        unnamed["on"] = True
        return "", 204

    @app.post("/test/rotate")
    def rotate():
        storage().jwk = authlib_jose.RSAKey.generate_key(is_private=True)
        return "", 204

    @app.get("/test/authorizations")
    def list_authorizations():
        with lock:
            return flask.jsonify(authorizations)

    return app


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    arguments = parser.parse_args()
    # Started by the Swift tests, it inherits their blocked signals: stopping it must still work.
    signal.pthread_sigmask(signal.SIG_SETMASK, set())
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    signal.signal(signal.SIGINT, lambda *_: os._exit(0))
    server = werkzeug.serving.make_server("localhost", arguments.port, build_app(), threaded=True)
    print(f"listening on {server.server_port}", flush=True)
    try:
        server.serve_forever(0.1)
    except KeyboardInterrupt:
        pass
    sys.exit(0)


if __name__ == "__main__":
    main()
