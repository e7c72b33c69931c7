"""Logs a machine can read (issue 39): with QUAD_LOG_FORMAT=json every line Quad writes is one JSON object, and a
request's line carries the id its answer gives in `X-Request-Id`, those the fast path answers from memory too (an
answer given again never repeats the id of the request that drew it)."""

from __future__ import annotations

import http.client
import json
import re
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


def test_text_logs_give_each_request_its_method_path_status_time_and_id(quad_server_factory):
    """As shipped (the text format): one line a request with its method, path without the query, status, time and
    id, the answers the fast path gives from memory too (issue 41), and nothing of the query."""
    server = quad_server_factory(demo=True)
    address = urllib.parse.urlsplit(server.url)
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=10)
    polls = []

    def line_of(request_id):
        return next((line for line in server.log().splitlines() if f"request={request_id} " in line), None)

    def poll_answered_from_memory():
        connection.request("GET", "/api/rooms")
        answer = connection.getresponse()
        answer.read()
        polls.append((answer.status, answer.getheader("X-Request-Id")))
        line = line_of(polls[-1][1])
        return line is not None and " answer=kept " in line

    wait_until(poll_answered_from_memory, message="a poll answered from memory")
    connection.request("GET", "/api/rooms?q=zq7hidden")  # the router's: the fast path answers no query
    answer = connection.getresponse()
    answer.read()
    polls.append((answer.status, answer.getheader("X-Request-Id")))
    connection.close()
    assert len({request_id for _, request_id in polls}) == len(polls), "an id each"
    wait_until(lambda: all(line_of(request_id) for _, request_id in polls), message="every poll's line")
    pattern = re.compile(
        r"\S+ info quad: (answer=kept )?ms=\d+\.\d request=(\S+) \[QuadPlatform\] GET /api/rooms (\d{3})"
    )
    kept = 0
    for status, request_id in polls:
        match = pattern.fullmatch(line_of(request_id))
        assert match, line_of(request_id)
        assert match.group(2) == request_id and int(match.group(3)) == status
        kept += match.group(1) is not None
    assert polls[0][0] == 200 and kept >= 1 and kept < len(polls)
    assert "zq7hidden" not in server.log()
