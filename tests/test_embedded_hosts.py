"""`museum:app` under another WSGI host behaves as `museum serve` does, on real processes:
gunicorn with 4 workers (with the logging config docs/production.md ships) and
waitress-serve. Workers starting together on an old database migrate it once and answer
no 500; a database that needs migrating is a 503 problem+json with one log line; the
one-server lock holds against every way of serving, on the file's real path; and on
SIGTERM and SIGINT every acknowledged request's access line is written, under each host
(waitress-serve as docs/production.md runs it) and under `museum serve`."""

import os
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing

import pytest

from schema_history import FIXTURES, load_sqlite_fixture
from serving import ROOT, problem, running_host, running_server, start_server
from storage.sqlite import SQLiteStore

GUNICORN_CONFIG = ROOT / "docs" / "gunicorn.conf.py"
GUNICORN = ("gunicorn", "-c", str(GUNICORN_CONFIG), "--bind", "127.0.0.1:{port}", "museum:app")
WAITRESS = ("waitress", "--listen", "127.0.0.1:{port}", "museum:app")  # waitress-serve
# As docs/production.md runs it: SIGTERM made an exit, so the access lines waiting are written.
WAITRESS_CALL = ("waitress", "--listen", "127.0.0.1:{port}", "--call",
                 "museum:waitress_app")
HOSTS = {"gunicorn": GUNICORN, "waitress-serve": WAITRESS_CALL}
CURRENT = len(SQLiteStore.MIGRATIONS)
ACCESS_ID = re.compile(r" INFO museum\.access: 127\.0\.0\.1 GET /healthz 200 \S+ (\S+)$",
                       re.MULTILINE)


def config(text, database, **log):
    settings = {"flush": "0", **log}
    return (text.replace("[log]\nflush = 0\n", "")
            + f"[storage]\nurl = {database}\n[log]\n"
            + "".join(f"{key} = {value}\n" for key, value in settings.items()))


def schema_version(path):
    with closing(sqlite3.connect(path)) as conn:
        return conn.execute("PRAGMA user_version").fetchone()[0]


def first_requests(server, count=8):
    """`count` requests to /healthz sent at once: their answers, header names as
    title-case (gunicorn passes on the app's lower-case ones)."""
    with ThreadPoolExecutor(count) as pool:
        answers = pool.map(lambda _: server.request("GET", "/healthz"), range(count))
    return [(status, {name.title(): value for name, value in headers.items()}, data)
            for status, headers, data in answers]


@pytest.mark.slow
@pytest.mark.parametrize("fixture", FIXTURES)
def test_gunicorn_workers_on_an_old_database_migrate_once_and_answer_no_500(
        tmp_path, config_text, fixture):
    database = tmp_path / "museum.sqlite3"
    load_sqlite_fixture(fixture, database)
    text = config(config_text, database).replace("[storage]\n",
                                                 "[storage]\nauto_migrate = true\n")
    with running_host(tmp_path, text, *GUNICORN) as server:
        answers = first_requests(server)
        assert server.stop() == 0
        log = server.log()
    for status, headers, data in answers:
        assert status in (200, 503), (status, data)
        if status == 503:
            problem(status, headers, data)
    assert log.count("before migrating it") == 1, log
    assert "Traceback" not in log
    assert schema_version(database) == CURRENT
    assert re.search(r"^\S+ \S+ INFO museum: backed up the database", log, re.MULTILINE), log


@pytest.mark.parametrize("host", [GUNICORN, WAITRESS], ids=["gunicorn", "waitress-serve"])
def test_a_database_to_migrate_is_a_503_problem_and_one_log_line(tmp_path, config_text, host):
    database = tmp_path / "museum.sqlite3"
    load_sqlite_fixture("v6", database)
    with running_host(tmp_path, config(config_text, database), *host) as server:
        answers = first_requests(server) + first_requests(server)
        server.stop()
        log = server.log()
    for status, headers, data in answers:
        assert status == 503
        assert problem(status, headers, data)["detail"] == (
            "The database needs migrating: run 'museum migrate'.")
    workers = 4 if host is GUNICORN else 1
    assert 1 <= log.count("museum:app cannot serve") <= workers, log
    assert "Traceback" not in log
    assert schema_version(database) == 6


def test_one_server_per_database_whichever_serves_it_and_by_any_name(tmp_path, config_text):
    database = tmp_path / "data" / "museum.sqlite3"
    database.parent.mkdir()
    link = tmp_path / "link.sqlite3"
    link.symlink_to(database)
    with running_host(tmp_path, config(config_text, database), *GUNICORN) as host:
        assert host.request("GET", "/healthz")[0] == 200
        other = tmp_path / "other"
        other.mkdir()
        with pytest.raises(RuntimeError, match="already served by another museum service"):
            start_server(other, config_text, db=str(link))
        with running_host(other, config(config_text, link), *WAITRESS) as second:
            [(status, headers, data)] = first_requests(second, 1)
            assert problem(status, headers, data)["detail"] == (
                "The service cannot start: its log says why.")
            second.stop()
            assert f"{database} is already served by another museum service" in second.log()


def load(server, seconds, clients=8):
    """Requests to /healthz from `clients` threads, each with its own X-Request-Id, until
    `seconds` pass and a little after the server is told to stop: the ids of the requests
    answered 200 (acknowledged)."""
    acknowledged, stop_at = [], time.monotonic() + seconds

    def client(number):
        count = 0
        while time.monotonic() < stop_at + 1:
            request_id = f"c{number}n{count}"
            count += 1
            try:
                status = server.request("GET", "/healthz", headers={"X-Request-Id": request_id},
                                        timeout=5)[0]
            except OSError:
                continue  # refused or cut: the server is stopping
            if status == 200:
                acknowledged.append(request_id)

    threads = [threading.Thread(target=client, args=(number,)) for number in range(clients)]
    for thread in threads:
        thread.start()
    time.sleep(seconds)
    return threads, acknowledged


@pytest.mark.slow
@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "sigint"])
@pytest.mark.parametrize("how", ["museum serve", "gunicorn", "waitress-serve"])
def test_a_stop_under_load_writes_every_acknowledged_requests_access_line(
        tmp_path, config_text, how, stop):
    access = tmp_path / "access.log"
    text = config(config_text, tmp_path / "museum.sqlite3", access=access, flush="60")
    if how == "museum serve":
        running = running_server(tmp_path, text.replace(f"url = {tmp_path}/museum.sqlite3\n", ""),
                                 db=str(tmp_path / "museum.sqlite3"))
    else:
        running = running_host(tmp_path, text, *HOSTS[how])
    with running as server:
        # The app is built on its first request (under gunicorn, in each worker): built
        # before the load, so that the load's two seconds are answered ones.
        first_requests(server)
        threads, acknowledged = load(server, 2)
        # What is tested is that no acknowledged line is lost, not how fast the host stops:
        # on a loaded machine waitress-serve has taken some 15 s to stop on SIGINT.
        assert server.stop(stop, timeout=60) == 0
        for thread in threads:
            thread.join()
    assert len(acknowledged) > 100
    written = ACCESS_ID.findall(access.read_text())
    assert set(acknowledged) <= set(written), len(set(acknowledged) - set(written))


def test_importing_the_app_module_leaves_the_signals_to_the_host(tmp_path):
    """Importing museum (as every WSGI host does) sets no signal handler; the callable for
    waitress-serve's --call makes SIGTERM an exit."""
    script = ("import signal, museum, museum_hosted\n"
              "print(signal.getsignal(signal.SIGTERM) is signal.SIG_DFL)\n"
              "assert museum.waitress_app() is museum.app\n"
              "print(signal.getsignal(signal.SIGTERM) is signal.SIG_DFL)\n")
    result = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True,
                            text=True, timeout=60, check=False,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.stdout.split() == ["True", "False"], result.stderr


def test_the_gunicorn_config_on_the_production_page_is_the_one_tested():
    assert GUNICORN_CONFIG.read_text() in (ROOT / "docs" / "production.md").read_text()
