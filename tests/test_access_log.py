"""The access log on a real `museum serve`: lines wait in memory and are written in blocks,
in order, and none is lost when the service stops on SIGTERM or SIGINT; `flush = 0` writes
each at once; a file can hold them; `off` writes none. And, on every route the app serves,
no id or code reaches an access line whole."""

import base64
import io
import os
import re
import signal
import subprocess
import sys

import falcon.inspect
import pytest
import museum
import museum_access_log
import storage
from conftest import ADMIN, GATE
from serving import ROOT, running_server, wait_until

ACCESS_LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} INFO museum\.access: "
                         r"127\.0\.0\.1 GET (/\S+) 404 \d+\.\dms [a-p]{16}$", re.MULTILINE)


def config(access="stderr", flush="60"):
    return f"[museum]\ntimezone = UTC\n[log]\naccess = {access}\nflush = {flush}\n"


def paths(count):
    return [f"/nothing-{number:04d}" for number in range(count)]


def send(server, count):
    """`count` requests one after the other on one connection, each to its own path."""
    connection = server.connection()
    try:
        for path in paths(count):
            connection.request("GET", path)
            response = connection.getresponse()
            response.read()
            assert response.status == 404
    finally:
        connection.close()


def logged(text):
    return ACCESS_LINE.findall(text)


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "sigint"])
def test_a_stop_writes_every_line_waiting_in_order(tmp_path, stop):
    with running_server(tmp_path, config()) as server:
        send(server, 50)
        assert logged(server.log()) == [], "the lines wait for the flush interval"
        assert server.stop(stop) == 0
        assert logged(server.log()) == paths(50)


def test_a_full_buffer_is_written_at_once_and_blocks_keep_the_order(tmp_path):
    # 1,300 lines: every 500 waiting (a block of about 64 KiB) are written at once, the
    # last 300 wait for the flush interval, here the stop.
    with running_server(tmp_path, config()) as server:
        send(server, 1300)
        written = logged(server.log())
        assert 0 < len(written) < 1300 and written == paths(len(written))
        assert server.stop() == 0
        assert logged(server.log()) == paths(1300)


def test_a_line_is_stamped_when_logged_not_when_its_block_is_written(tmp_path):
    with running_server(tmp_path, config()) as server:
        send(server, 1)
        # A wrong password is logged at once, after its check (one dummy hash, far longer
        # than a millisecond); the access line waits in its block until the stop.
        connection = server.connection()
        connection.request("GET", "/v1.1/museum-hours",
                           headers={"Authorization": "Basic " + base64.b64encode(b"nobody:wrong").decode()})
        connection.getresponse().read()
        connection.close()
        wait_until(lambda: "wrong password" in server.log(), 30, what="the failed login's line")
        assert logged(server.log()) == []
        assert server.stop() == 0
        log = server.log()
    # The first request was answered before the second one's password was checked.
    stamps = {name: re.search(rf"^(\S+ \S+) INFO museum\.{name}:", log, re.MULTILINE)[1]
              for name in ("access", "auth")}
    assert log.index("museum.auth:") < log.index("museum.access:"), "written at the stop"
    assert stamps["access"] < stamps["auth"], "stamped when the request was answered"


def test_a_line_logged_after_the_log_closed_is_written_at_once():
    """As when a worker thread still answers a request while the process exits."""
    lines = io.StringIO()
    writer = museum_access_log.AccessLogWriter(lines, flush_seconds=60)
    writer.write("first")
    writer.close()
    writer.write("late")
    assert [line.split(": ", 1)[1] for line in lines.getvalue().splitlines()] == [
        "first", "late"]


def test_lines_are_written_within_the_flush_interval(tmp_path):
    with running_server(tmp_path, config(flush="0.2")) as server:
        send(server, 3)
        wait_until(lambda: logged(server.log()) == paths(3), 5, what="the timed flush")


def test_flush_0_writes_each_line_at_once(tmp_path):
    with running_server(tmp_path, config(flush="0")) as server:
        send(server, 1)
        assert logged(server.log()) == paths(1)
        send(server, 3)
        assert logged(server.log()) == paths(1) + paths(3)


def test_a_file_holds_the_access_log_and_stderr_keeps_the_rest(tmp_path):
    access = tmp_path / "access.log"
    with running_server(tmp_path, config(access=access)) as server:
        send(server, 5)
        assert server.stop() == 0
        log = server.log()
    assert logged(access.read_text()) == paths(5)
    assert logged(log) == [] and "listening on" in log and "stopped" in log


def test_off_writes_no_access_line(tmp_path):
    with running_server(tmp_path, config(access="off", flush="0")) as server:
        send(server, 5)
        assert server.stop() == 0
        assert logged(server.log()) == [] and "stopped" in server.log()


@pytest.mark.parametrize("log_section, message", [
    ("access = /no/such/directory/access.log",
     "[log] access: cannot open /no/such/directory/access.log (No such file or directory)"),
    ("flush = -1", "[log] flush: must be a number of seconds from 0 to 3600"),
])
def test_a_bad_log_setting_stops_startup_with_one_line(tmp_path, log_section, message):
    (tmp_path / "museum.ini").write_text(f"[log]\n{log_section}\n")
    result = subprocess.run([sys.executable, "-m", "museum_cli", "serve", "--port", "0"],
                            cwd=tmp_path, capture_output=True, text=True, timeout=60,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [f"museum: museum.ini: {message}"]


# -- no id or code reaches the access line whole, on any route -----------------------------

FULL_ID = "0f6c2a9e-41d7-4b8a-9c3e-5d2f7a1b8e64"
A_DATE = "2026-11-24"  # a date names nothing and no one: logged whole


def every_route_and_method():
    """(method, path with a full id in each field but a date) of every route the app
    serves: falcon.inspect walks its router, so a route added later is walked too."""
    app = museum.create_app(museum.parse_config("[museum]\ntimezone = UTC\n", "t.ini"),
                            store=storage.open_store(":memory:"))
    for route in falcon.inspect.inspect_routes(app):
        path = re.sub(r"\{(\w+)\}", lambda field: A_DATE if field[1] == "date" else FULL_ID,
                      route.path)
        for method in route.methods:
            if not method.internal:  # not Falcon's own 405 answers
                yield method.method, path


ROUTES = sorted(set(every_route_and_method()))


def test_the_walk_covers_every_api_route_with_a_field():
    walked = {path for _, path in ROUTES}
    for template in museum.API_ROUTES:
        if "Id}" in template:
            assert any(FULL_ID in path and path.endswith(template.rsplit("}", 1)[1])
                       for path in walked), template


@pytest.mark.parametrize("method, path", [route for route in ROUTES if FULL_ID in route[1]])
@pytest.mark.parametrize("headers", [ADMIN, GATE, {}], ids=["admin", "gate", "anonymous"])
def test_no_route_logs_a_whole_id(logged_client, method, path, headers):
    logged_client.request(path, method=method, headers=headers, expect_errors=True)
    [line] = logged_client.lines.getvalue().splitlines()
    assert f" {method} " in line
    assert FULL_ID not in line
    assert FULL_ID[:8] in line  # cut, not dropped: the line still tells ids apart
