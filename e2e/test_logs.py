"""Logs a machine can read (issue 39): with QUAD_LOG_FORMAT=json every line Quad writes is one JSON object, and a
request's line carries the id its answer gives in `X-Request-Id`, those the fast path answers from memory too (an
answer given again never repeats the id of the request that drew it)."""

from __future__ import annotations

import http.client
import json
import urllib.parse

from conftest import wait_until


def test_json_logs_are_one_object_a_line_with_the_request_id_the_answer_carries(quad_server_factory):
    server = quad_server_factory(demo=True, env={"QUAD_LOG_FORMAT": "json"})
    answers = [server.request("/rooms") for _ in range(3)]
    assert all(answer.status == 200 for answer in answers)

    def lines():
        return [json.loads(line) for line in server.log().splitlines() if line.startswith("{")]

    # An app's polls, on one kept-alive connection: after the first, the fast path answers them from memory. (Just
    # after start, the rooms' time keeper may announce the quarter hour's seats, each announcement dropping what was
    # kept: polls go on until one is answered from memory.)
    address = urllib.parse.urlsplit(server.url)
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=10)
    polls = []

    def poll_answered_from_memory():
        connection.request("GET", "/api/rooms")
        answer = connection.getresponse()
        answer.read()
        polls.append(answer.getheader("X-Request-Id"))
        kept = {line.get("request") for line in lines() if line.get("answer") == "kept"}
        return len(polls) >= 3 and kept & set(polls[1:])

    wait_until(poll_answered_from_memory, message="a poll answered from memory")
    connection.close()
    ids = [answer.headers.get("x-request-id") for answer in answers] + polls
    assert all(ids) and len(set(ids)) == len(ids), f"each answer has an id of its own: {ids}"

    wait_until(lambda: any(line.get("request") == ids[0] for line in lines()), message="the request's line")
    first = next(line for line in lines() if line.get("request") == ids[0])
    assert first["message"] == "GET /rooms 200"
    assert first["level"] == "info" and first["label"] == "quad"
    assert first["time"].endswith("Z") and float(first["ms"]) >= 0
    # Every answer's line carries its id, those the fast path gives from memory too (the polls after the first).
    wait_until(lambda: {line.get("request") for line in lines()} >= set(ids), message="every answer's line")
    by_id = {line.get("request"): line for line in lines()}
    assert by_id[ids[3]].get("answer") != "kept", "the first poll is answered by the router"
    # Every line the server wrote as a log line is JSON (the lines shown once to the operator, such as the demo
    # people's passwords, are not log lines).
    logged = [line for line in server.log().splitlines() if " info quad:" in line or " warning quad:" in line]
    assert logged == []
