"""Hostile HTTP framing against a real server: oversized headers, duplicate Authorization,
Content-Length lies, chunked bodies over the limits, malformed headers.

Each is answered at once with a clear 4xx (a problem+json where the app answers, waitress's
short text/plain where the request never reaches the app), the connection is never left
hanging, and the server logs no traceback and stays healthy. The one 5xx is waitress's 501
for a transfer coding it does not implement, as RFC 9112 (section 6.1) asks.
"""

import json
import socket

import pytest

import conftest
from serving import running_server
from ticketing import EVENTS

ADMIN = conftest.ADMIN["Authorization"].encode()
VISITOR = conftest.VISITOR["Authorization"].encode()
FAST = 5  # seconds


def request(head, body=b"", method=b"POST", path=EVENTS.encode(), auth=ADMIN, close=True):
    """Raw HTTP/1.1 request bytes: `head` holds extra header lines ("Name: value\\n" each)."""
    lines = [method + b" " + path + b" HTTP/1.1", b"Host: 127.0.0.1"]
    if auth:
        lines.append(b"Authorization: " + auth)
    if close:
        lines.append(b"Connection: close")
    lines += [line for line in head.split(b"\n") if line]
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


def json_headers(extra):
    return b"Content-Type: application/json\n" + extra


def chunked(body, size):
    return b"".join(b"%x\r\n" % len(body[at:at + size]) + body[at:at + size] + b"\r\n"
                    for at in range(0, len(body), size)) + b"0\r\n\r\n"


def parse_response(raw):
    """(status, {lower-case header: value}, body) of the first response in `raw`."""
    head, separator, rest = raw.partition(b"\r\n\r\n")
    assert separator, raw[:200]
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return int(status_line.split()[1]), headers, rest[:int(headers.get("content-length", 0))]


PLAIN, PROBLEM = "text/plain; charset=utf-8", "application/problem+json"
LARGE_JSON = json.dumps({"name": "x" * 70_000}).encode()
CASES = [
    ("oversized header", request(b"X-Big: " + b"a" * 70_000, method=b"GET"), 431, PLAIN),
    ("too many headers", request(b"".join(b"X-H%d: %s\n" % (n, b"b" * 100) for n in range(700)),
                                 method=b"GET"), 431, PLAIN),
    ("oversized request line", request(b"", method=b"GET", path=b"/v1.1/museum-hours?q="
                                       + b"a" * 70_000), 431, PLAIN),
    ("two Authorization headers", request(b"Authorization: " + VISITOR, method=b"GET",
                                          path=b"/v1.1/museum-hours"), 401, PROBLEM),
    ("the same Authorization twice", request(b"Authorization: " + ADMIN, method=b"GET",
                                             path=b"/v1.1/museum-hours"), 401, PROBLEM),
    ("non-ASCII Authorization", request(b"", method=b"GET", path=b"/v1.1/museum-hours",
                                        auth=b"Basic \xff\xfe\xe9"), 401, PROBLEM),
    ("NUL in a header", request(b"X-A: a\0b", method=b"GET"), 400, PLAIN),
    ("header without a colon", request(b"NoColonHere", method=b"GET"), 400, PLAIN),
    ("Content-Length shorter than the body",
     request(json_headers(b"Content-Length: 10"), b'{"name": "a long name"}'), 400, PROBLEM),
    ("Content-Length not a number", request(json_headers(b"Content-Length: ten"), b"{}"), 400,
     PLAIN),
    ("negative Content-Length", request(json_headers(b"Content-Length: -2"), b"{}"), 400, PLAIN),
    ("two Content-Lengths", request(json_headers(b"Content-Length: 2\nContent-Length: 3"),
                                    b"{}"), 400, PLAIN),
    ("Content-Length over the API limit", request(json_headers(
        b"Content-Length: %d" % len(LARGE_JSON)), LARGE_JSON), 413, PROBLEM),
    ("Content-Length of 100 GB, nothing sent", request(json_headers(
        b"Content-Length: 100000000000")), 413, PLAIN),
    ("chunked body over the API limit", request(json_headers(
        b"Transfer-Encoding: chunked"), chunked(LARGE_JSON, 4096)), 413, PROBLEM),
    ("chunked body over the server limit", request(json_headers(
        b"Transfer-Encoding: chunked"), chunked(b" " * 1_100_000, 65536)), 413, PLAIN),
    ("invalid chunk size", request(json_headers(b"Transfer-Encoding: chunked"),
                                   b"zz\r\n{}\r\n0\r\n\r\n"), 400, PLAIN),
    ("Content-Length with chunked: chunked wins", request(json_headers(
        b"Content-Length: 50\nTransfer-Encoding: chunked"), chunked(b"{}", 2)), 400, PROBLEM),
    ("unknown transfer coding", request(json_headers(b"Transfer-Encoding: gzip"), b"{}"), 501,
     PLAIN),
]


@pytest.fixture(scope="module")
def server(tmp_path_factory, config_text):
    with running_server(tmp_path_factory.mktemp("headers"), config_text) as started:
        yield started


def assert_healthy(server):
    assert server.request("GET", "/healthz", timeout=FAST)[0] == 200
    assert server.request("GET", EVENTS, headers=conftest.VISITOR, timeout=FAST)[:3:2] == (200, b"[]")
    log = server.log()
    assert "Traceback" not in log and " 500 " not in log


@pytest.mark.parametrize("raw, status, content_type",
                         [pytest.param(*case[1:], id=case[0]) for case in CASES])
def test_hostile_framing_gets_a_clear_answer_at_once(server, raw, status, content_type):
    answer = server.exchange(raw, timeout=FAST)  # every request says Connection: close
    got_status, headers, body = parse_response(answer)
    assert (got_status, headers["content-type"]) == (status, content_type), answer[:300]
    if content_type == PROBLEM:
        assert json.loads(body)["status"] == status
        assert headers["x-content-type-options"] == "nosniff"
    else:
        assert b"aaaa" not in answer and b"Basic" not in answer  # nothing of the request echoed
    assert_healthy(server)


def test_a_body_shorter_than_its_content_length_then_a_closed_side_is_dropped(server):
    """The server cannot answer a request it never got whole: it closes the connection, and
    nothing is stored."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=FAST) as sock:
        sock.sendall(request(json_headers(b"Content-Length: 100"), b'{"name": "x"}'))
        sock.shutdown(socket.SHUT_WR)
        assert sock.recv(65536) == b""
    assert_healthy(server)
