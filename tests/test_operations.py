"""What an operator relies on while the service runs for years: a build that names its
version, a database and a socket served by one process only, files that stay the service
user's, contacts that expire however the app is hosted, and logs that can be followed."""

import base64
import gc
import hashlib
import json
import logging
import os
import pwd
import re
import shlex
import shutil
import signal
import socket
import sqlite3
import stat
import subprocess
import sys
import threading
import uuid
from datetime import date, datetime, timedelta, timezone

import pytest
import webtest

import museum
import museum_credentials
import museum_locks
import storage
from commands import museum_command
from conftest import ADMIN, NOW, VISITOR
from described import DOCUMENT
from serving import ROOT, _stopped_at_end, running_server, start_process, wait_until
from test_proxy import UnixConnection, unix_request
from storage.sqlite import SQLiteStore
from ticketing import EVENTS, open_days, query, write_locked

HOURS = "/v1.1/museum-hours"


# -- versions ---------------------------------------------------------------------------

def test_health_names_the_software_and_the_interface_version(client):
    res = client.get("/healthz", status=200)
    assert res.json == {"status": "ok", "version": "1.7.0", "interface": "1.5.0",
                        "outbox": {"failed": 0, "oldest": None}}


def test_the_start_up_line_names_both_versions(tmp_path, config_text):
    with running_server(tmp_path, config_text) as server:
        assert "museum service 1.7.0 (interface 1.5.0) listening on http://127.0.0.1:" \
            in server.log()


def test_the_openapi_document_keeps_the_interface_version():
    assert DOCUMENT["info"]["version"] == museum.INTERFACE_VERSION == "1.5.0"
    assert museum.__version__ == "1.7.0"



# -- one server per database and per socket -------------------------------------------------

def serve_once(directory, config_text, *args):
    """`museum serve` that is expected to refuse: what it did, without waiting to serve."""
    return museum_command(directory, config_text, "serve", *args)


def test_a_second_server_on_the_same_database_refuses_naming_the_first(tmp_path, config_text):
    database = str(tmp_path / "museum.sqlite3")
    with running_server(tmp_path, config_text, db=database) as live:
        done = serve_once(tmp_path, config_text, "--port", "0", "--db", database)
        assert live.request("GET", "/healthz")[0] == 200
    assert done.status == 1
    assert done.err.splitlines()[-1] == (
        f"museum: {tmp_path / 'museum.sqlite3'} is already served by another museum service "
        f"(PID {live.process.pid}); stop it first, or serve a copy of the database")


def test_a_second_server_on_the_same_socket_refuses_naming_the_first(tmp_path, config_text):
    sock = tmp_path / "museum.sock"
    on_socket = config_text + f"[server]\nunix_socket = {sock}\n"
    with running_server(tmp_path, on_socket) as live:
        done = serve_once(tmp_path, on_socket, "--db", str(tmp_path / "other.sqlite3"))
        assert unix_request(sock, "GET", "/healthz")[0] == 200
    assert done.status == 1
    assert done.err.splitlines()[-1] == (
        f"museum: {sock} is already served by another process (PID {live.process.pid}); "
        f"stop it first, or listen elsewhere (--host/--port)")


def test_a_stale_socket_file_is_replaced(tmp_path, config_text):
    sock = tmp_path / "museum.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as dead:
        dead.bind(str(sock))  # a socket file nobody listens on, as a killed server leaves
    with running_server(tmp_path, config_text + f"[server]\nunix_socket = {sock}\n"):
        assert unix_request(sock, "GET", "/healthz")[0] == 200


def test_a_taken_port_is_refused_with_one_line(tmp_path, config_text):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = serve_once(tmp_path, config_text, "--port", str(port))
    assert done.status == 1
    assert done.err.splitlines()[-1].startswith(
        f"museum: cannot listen on 127.0.0.1 port {port}: another process listens there")


def test_host_and_port_flags_win_over_the_configs_socket(tmp_path, config_text):
    sock = tmp_path / "museum.sock"
    (tmp_path / "museum.ini").write_text(config_text + f"[server]\nunix_socket = {sock}\n")
    with _stopped_at_end(start_process(
            tmp_path, "server", "-m", "museum_cli", "serve", "--config",
            str(tmp_path / "museum.ini"), "--host", "127.0.0.1", "--port", "0")) as server:
        assert server.port and server.request("GET", "/healthz")[0] == 200
        assert not sock.exists()


def documented_drill():
    """The commands of the restore drill in docs/backup-and-upgrades.md, one per line."""
    readme = (ROOT / "docs" / "backup-and-upgrades.md").read_text(encoding="utf-8")
    after = readme.split("**The restore drill.**", 1)[1]
    block = after.split("```sh\n", 1)[1].split("```", 1)[0]
    return [line for line in block.splitlines() if line.strip()]


def test_the_restore_drill_never_touches_the_live_service(tmp_path, config_text):
    """The drill as written, on a copy of the production layout, while the live service
    sells on its unix socket: the drill's server listens on its own port and every sale
    made through the socket meanwhile lands in the live database."""
    live_dir, drill_dir, bin_dir = tmp_path / "srv", tmp_path / "drill", tmp_path / "bin"
    bin_dir.mkdir()
    live_dir.mkdir()
    sock, live_db = live_dir / "museum.sock", live_dir / "museum.sqlite3"
    live_config = config_text + f"[server]\nunix_socket = {sock}\n[storage]\nurl = {live_db}\n"
    shim = bin_dir / "museum"
    shim.write_text(f"#!/bin/sh\nPYTHONPATH={ROOT} exec {sys.executable} -m museum_cli \"$@\"\n")
    shim.chmod(0o755)
    # The production paths, as the test's; the service's user is the test's.
    paths = {"sudo -u museum ": "", "/opt/museum/bin/museum": str(shim),
             "/etc/museum": str(live_dir), "/tmp/drill": str(drill_dir), "8081": "0"}
    lines = []
    for line in documented_drill():
        for written, here in paths.items():
            line = line.replace(written, here)
        lines.append(line)
    *preparation, serve = lines
    assert serve.startswith(f"{shim} serve ") and "--port 0" in serve
    day = open_days(config_text, 1)[0]
    purchase = {"ticketType": "general", "ticketDate": day, "email": "ada@example.org"}
    with running_server(live_dir, live_config, db=str(live_db)):
        assert live_sale(sock, purchase) == 201
        environ = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(tmp_path)}
        done = subprocess.run(["bash", "-euc", "\n".join(preparation)], cwd=tmp_path,
                              env=environ, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        with _stopped_at_end(start_process(drill_dir, "drill", "-m", "museum_cli",
                                           *shlex.split(serve, comments=True)[1:])) as drill:
            assert drill.port
            during = live_sale(sock, purchase, with_id=True)
            assert drill.request("GET", "/healthz")[0] == 200
            assert unix_request(sock, "GET", "/healthz")[0] == 200
        assert drill.process.returncode == 0
        after = live_sale(sock, purchase, with_id=True)
    sold = {row[0] for row in sqlite3.connect(live_db).execute("SELECT id FROM tickets")}
    assert {during, after} <= sold and len(sold) == 3
    drilled = sqlite3.connect(drill_dir / "drill.sqlite3").execute(
        "SELECT count(*) FROM tickets").fetchone()[0]
    assert drilled == 1  # the backup's one ticket, nothing sold during the drill


def live_sale(sock, purchase, with_id=False):
    """Buy a ticket through the live service's socket: its status, or its id."""
    connection = UnixConnection(sock)
    try:
        connection.request("POST", "/v1.1/tickets", body=json.dumps(purchase),
                           headers={**VISITOR, "Content-Type": "application/json"})
        response = connection.getresponse()
        body = json.loads(response.read())
    finally:
        connection.close()
    if with_id:
        assert response.status == 201, body
        return body["ticketId"]
    return response.status


# -- contacts expire however the service is run ------------------------------------------

def test_contacts_expire_under_museum_app_with_one_eraser_per_database(
        tmp_path, config_text, monkeypatch, fresh_museum):
    database = tmp_path / "embedded.sqlite3"
    store = storage.open_store(str(database))
    long_ago = (date.today() - timedelta(days=400)).isoformat()
    store.create_ticket({"ticketId": str(uuid.uuid4()), "ticketType": "general",
                         "ticketDate": long_ago, "eventId": None,
                         "confirmationCode": "ticket-general-abcdef-12345",
                         "email": "ada@example.org", "price": 0, "currency": "EUR"})
    store.close()
    (tmp_path / "site.ini").write_text(config_text)
    monkeypatch.setenv("MUSEUM_CONFIG", str(tmp_path / "site.ini"))
    monkeypatch.setenv("MUSEUM_STORAGE_URL", str(database))
    emails = "SELECT count(*) FROM tickets WHERE email <> ''"
    # Another process's eraser holds the database's lock: this one waits for it.
    with museum_locks.try_lock(f"{database}.erase.lock"):
        webtest.TestApp(fresh_museum.app).get("/healthz", status=200)
        wait_until(lambda: eraser_waits_for_its_lock(), 10, what="the eraser waiting")
        assert query(database, emails) == [(1,)]
    wait_until(lambda: query(database, emails) == [(0,)], 10, what="the erasure")
    assert museum_locks.holder(f"{database}.erase.lock") == os.getpid()


def current_frames():
    """sys._current_frames() with the garbage collector off: CPython 3.11 deadlocks when a
    collection inside it frees a threading.local (a dropped store's), since both take the
    interpreter's list of threads."""
    gc.disable()
    try:
        return sys._current_frames()
    finally:
        gc.enable()


def eraser_waits_for_its_lock():
    """Whether a thread of this process erasing contacts is blocked on its lock."""
    for thread in threading.enumerate():
        if thread.name == "erase-contacts":
            frame = current_frames().get(thread.ident)
            while frame is not None:
                if frame.f_code is museum_locks.wait_for_lock.__code__:
                    return True
                frame = frame.f_back
    return False


# -- passwords at start-up ---------------------------------------------------------------

def made_up_full_cost_hash():
    """A hash in the documented form scrypt$N$r$p$salt$key at the full cost, as a museum's
    own would be (made up: making 48 real ones would take a minute)."""
    salt, key = (base64.b64encode(os.urandom(size)).decode() for size in (16, 64))
    return f"scrypt$131072$8$1${salt}${key}"


def test_fifty_users_start_without_hashing_a_password(monkeypatch, caplog):
    users = {f"gate-{number:02d}": made_up_full_cost_hash() for number in range(48)}
    users["old"] = museum_credentials.hash_password("old-pass", n=2**14)  # weak, not demo
    users["demo"] = sorted(museum_credentials.DEMO_PASSWORD_HASHES)[0]
    text = "[users]\n" + "".join(f"{name} = gate:{hashed}\n" for name, hashed in users.items())
    config = museum.parse_config(text, "site.ini")
    hashed = []
    scrypt = hashlib.scrypt
    monkeypatch.setattr(hashlib, "scrypt",
                        lambda *args, **kwargs: hashed.append(args) or scrypt(*args, **kwargs))
    with caplog.at_level(logging.WARNING, logger="museum"):
        museum.create_app(config, store=storage.open_store(":memory:"), exposed_on=None)
    assert hashed == []
    assert "demo password in use for demo:" in caplog.text
    assert "weaker than scrypt N=2^17, r=8, p=1 for old:" in caplog.text
    with pytest.raises(museum.ConfigError, match=r"\[users\] demo: the demo password"):
        museum.create_app(config, store=storage.open_store(":memory:"))
    assert hashed == []


def test_every_shipped_demo_hash_is_recognised():
    shipped = museum.parse_config((ROOT / "museum.ini").read_text(encoding="utf-8"))
    assert {user.password_hash for user in shipped.users.values()} <= \
        museum_credentials.DEMO_PASSWORD_HASHES
    assert all(museum_credentials.check_password(museum_credentials.DEMO_PASSWORD, hashed)
               for hashed in museum_credentials.DEMO_PASSWORD_HASHES)


# -- commands run as root leave the service user's files -------------------------------------

SERVICE_USER = pwd.getpwnam("nobody")  # stands for the service's user


def files_beside(path):
    """Every file whose name starts with the database's, and its directory's others."""
    return sorted(path.parent.glob(path.name + "*"))


def assert_the_services(path):
    info = path.stat()
    assert (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)) == (
        SERVICE_USER.pw_uid, SERVICE_USER.pw_gid, 0o600), path


@pytest.fixture
def service_database(tmp_path, monkeypatch):
    """A database of the previous schema version in a directory of its own, both owned by
    the service's user, as under /var/lib/museum."""
    directory = tmp_path / "lib"
    directory.mkdir(mode=0o700)
    database = directory / "museum.sqlite3"
    with monkeypatch.context() as previous:
        previous.setattr(SQLiteStore, "MIGRATIONS", SQLiteStore.MIGRATIONS[:-1])
        storage.open_store(str(database)).close()
    for path in [directory, *files_beside(database)]:
        os.chown(path, SERVICE_USER.pw_uid, SERVICE_USER.pw_gid)
    return database


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root, as an operator's sudo")
def test_migrate_backup_and_restore_as_root_keep_the_services_ownership(
        tmp_path, service_database, config_text):
    database = service_database
    migrated = museum_command(tmp_path, config_text, "migrate", "--db", str(database))
    assert migrated.status == 0, migrated.err
    old_version = len(SQLiteStore.MIGRATIONS) - 1
    copy_before = f"museum.sqlite3.v{old_version}.{datetime.now(timezone.utc).date()}.bak"
    assert (database.parent / copy_before).exists()
    copy = tmp_path / "backup.sqlite3"
    backed_up = museum_command(tmp_path, config_text, "backup", str(copy), "--db",
                               str(database))
    assert backed_up.status == 0, backed_up.err
    restored = museum_command(tmp_path, config_text, "restore", str(copy), "--db",
                              str(database))
    assert restored.status == 0, restored.err
    # A lock file root made still locks for the service (museum_locks), and holds nothing.
    beside = [path for path in files_beside(database) if path.suffix != ".lock"]
    # The restored database may keep the log files its check opened (a reader leaves them);
    # the one set aside is a single file.
    assert {path.name for path in beside} - {"museum.sqlite3-wal", "museum.sqlite3-shm"} == {
        "museum.sqlite3", "museum.sqlite3.before-restore", copy_before}
    for path in [*beside, copy]:
        assert_the_services(path)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root, as an operator's sudo")
def test_a_new_database_made_as_root_is_its_directorys_owners(tmp_path, config_text):
    directory = tmp_path / "lib"
    directory.mkdir(mode=0o700)
    os.chown(directory, SERVICE_USER.pw_uid, SERVICE_USER.pw_gid)
    done = museum_command(tmp_path, config_text, "init", "--db",
                          str(directory / "museum.sqlite3"))
    assert done.status == 0, done.err
    for path in files_beside(directory / "museum.sqlite3"):
        assert_the_services(path)


# -- logs an operator can follow -------------------------------------------------------------

@pytest.mark.parametrize("path, headers, status", [
    ("/healthz", {}, 200),
    (HOURS, {}, 401),
    (HOURS, ADMIN, 200),
    ("/nowhere", {}, 404),
])
def test_a_proxys_request_id_is_echoed_and_logged(logged_client, path, headers, status):
    res = logged_client.get(path, headers={**headers, "X-Request-Id": "nginx.4f2a-9_B"},
                            status=status)
    assert res.headers["X-Request-Id"] == "nginx.4f2a-9_B"
    [line] = logged_client.lines.getvalue().splitlines()
    assert re.search(rf" {status} \d+\.\dms nginx\.4f2a-9_B$", line), line


@pytest.mark.parametrize("given", [None, "", "x" * 129, "has space", "semi;colon", "é"])
def test_a_missing_or_malformed_request_id_is_replaced_by_a_new_one(logged_client, given):
    headers = {} if given is None else {"X-Request-Id": given}
    first = logged_client.get("/healthz", headers=headers, status=200).headers["X-Request-Id"]
    second = logged_client.get("/healthz", headers=headers, status=200).headers["X-Request-Id"]
    assert re.fullmatch(r"[a-p]{16}", first) and first != second
    assert logged_client.lines.getvalue().splitlines()[0].endswith(f"ms {first}")


def test_a_warning_logged_for_a_request_names_its_id(config, tmp_path, monkeypatch, caplog):
    monkeypatch.setattr("storage.sqlite.BUSY_TIMEOUT_MS", 100)
    path = str(tmp_path / "museum.sqlite3")
    client = webtest.TestApp(museum.create_app(config, store=storage.open_store(path),
                                               clock=lambda: NOW))
    caplog.clear()  # the start-up's own warnings
    with write_locked(path), caplog.at_level(logging.WARNING, logger="museum"):
        res = client.post_json(EVENTS, {"name": "A", "location": "B", "eventDescription": "C",
                                        "dates": ["2026-12-01"], "price": 1},
                               headers={**ADMIN, "X-Request-Id": "req-7"}, status=503)
    assert res.headers["X-Request-Id"] == "req-7"
    assert [record.getMessage().endswith("(request req-7)") for record in caplog.records] \
        == [True]
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="museum"):
        logging.getLogger("museum").info("between requests")
    assert caplog.records[0].getMessage() == "between requests"


@pytest.mark.parametrize("flush", ["0", "0.2"])
def test_the_access_log_follows_a_file_logrotate_moved_without_a_signal(tmp_path, config_text,
                                                                        flush):
    access = tmp_path / "access.log"
    to_file = config_text.replace("[log]\nflush = 0\n", f"[log]\naccess = {access}\n"
                                                          f"flush = {flush}\n")
    with running_server(tmp_path, to_file) as server:
        assert server.request("GET", "/healthz", headers={"X-Request-Id": "before"})[0] == 200
        wait_until(lambda: "before" in access.read_text(), 10, what="the first line")
        access.rename(tmp_path / "access.log.1")  # as logrotate does
        assert server.request("GET", "/healthz", headers={"X-Request-Id": "after"})[0] == 200
        wait_until(lambda: access.exists() and "after" in access.read_text(), 10,
                   what="the line after the move, in a new file")
        server.process.send_signal(signal.SIGHUP)  # as earlier logrotate configs still do
        assert server.request("GET", "/healthz")[0] == 200
        assert server.stop() == 0
    assert "before" not in access.read_text()
    assert "after" not in (tmp_path / "access.log.1").read_text()
    assert stat.S_IMODE(access.stat().st_mode) == 0o600  # whatever the umask


def test_the_log_level_is_an_option(tmp_path):
    assert museum.parse_config("[log]\nlevel = warning\n")["log"]["level"] == "WARNING"
    with pytest.raises(museum.ConfigError, match=r"\[log\] level: must be one of debug, info"):
        museum.parse_config("[log]\nlevel = verbose\n", "site.ini")


def test_the_log_level_applies_to_an_embedded_app(tmp_path, config_text, monkeypatch,
                                                   fresh_museum):
    (tmp_path / "site.ini").write_text(config_text)
    monkeypatch.setenv("MUSEUM_CONFIG", str(tmp_path / "site.ini"))
    monkeypatch.setenv("MUSEUM_STORAGE_URL", str(tmp_path / "embedded.sqlite3"))
    monkeypatch.setenv("MUSEUM_LOG_LEVEL", "warning")
    monkeypatch.setattr(museum.log, "level", museum.log.level)  # restored after the test
    webtest.TestApp(fresh_museum.app).get("/healthz", status=200)
    assert museum.log.getEffectiveLevel() == logging.WARNING
    assert logging.getLogger("museum.storage").getEffectiveLevel() == logging.WARNING


LOGROTATE = shutil.which("logrotate") or shutil.which("/usr/sbin/logrotate")


@pytest.mark.skipif(LOGROTATE is None, reason="logrotate is not installed")
def test_the_shipped_logrotate_file_parses(tmp_path):
    done = subprocess.run([LOGROTATE, "-d", "--state", str(tmp_path / "state"),
                           str(ROOT / "docs" / "museum.logrotate")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "error" not in done.stderr.lower()
