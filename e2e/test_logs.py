"""Logs a machine can read (issue 39): with QUAD_LOG_FORMAT=json every line Quad writes is one JSON object, and a
request's line carries the id its answer gives in `X-Request-Id` (a page answered again from memory, by the fast path,
never repeats the id of the request that drew it)."""

from __future__ import annotations

import json

from conftest import wait_until


def test_json_logs_are_one_object_a_line_with_the_request_id_the_answer_carries(quad_server_factory):
    server = quad_server_factory(demo=True, env={"QUAD_LOG_FORMAT": "json"})
    answers = [server.request("/rooms") for _ in range(3)]
    assert all(answer.status == 200 for answer in answers)
    ids = [answer.headers.get("x-request-id") for answer in answers]
    assert ids[0], "the first answer is the router's, with its id"
    assert ids[0] not in ids[1:], ids

    def lines():
        return [json.loads(line) for line in server.log().splitlines() if line.startswith("{")]

    wait_until(lambda: any(line.get("request") == ids[0] for line in lines()), message="the request's line")
    first = next(line for line in lines() if line.get("request") == ids[0])
    assert first["message"] == "GET /rooms 200"
    assert first["level"] == "info" and first["label"] == "quad"
    assert first["time"].endswith("Z") and float(first["ms"]) >= 0
    # Every line the server wrote as a log line is JSON (the lines shown once to the operator, such as the demo
    # people's passwords, are not log lines).
    logged = [line for line in server.log().splitlines() if " info quad:" in line or " warning quad:" in line]
    assert logged == []
