"""Schemathesis hook for Quad: make every schema-valid Idempotency-Key unique, as a real client's are
(one key per intent). Without it, generated keys such as "0" repeat across different bodies and the
server rightly answers 422 "Idempotency-Key reused". Invalid keys (empty, blank, > 255) are left as
generated, so the negative tests still run."""

import uuid

import schemathesis


@schemathesis.hook
def before_call(context, case, kwargs):
    headers = case.headers or {}
    for name in list(headers):
        if name.lower() == "idempotency-key":
            value = headers[name]
            if isinstance(value, str) and 1 <= len(value) <= 255 and value.strip(" \t"):
                headers[name] = (uuid.uuid4().hex + value)[:255]
