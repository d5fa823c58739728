"""`museum` as a real process: serve on a free loopback port, stop on SIGTERM, and refuse
bad configs with one clear line. And waitress is used through its public API only."""

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys

import pytest
import webtest

import museum
import museum_credentials
from conftest import basic, quick_hash
from serving import ROOT, running_server
from ticketing import open_days

SECRET_EMAIL = "ada.lovelace@example.org"


@pytest.fixture
def server_config():
    return f"[museum]\ntimezone = UTC\n[users]\ncurator = admin:{quick_hash('pw')}\n"


def run_museum(*args, cwd, stdin=""):
    return subprocess.run([sys.executable, "-m", "museum_cli", *args], cwd=cwd, input=stdin,
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


def test_serve_answers_health_and_hours_and_stops_on_sigterm(tmp_path, server_config):
    with running_server(tmp_path, server_config) as server:
        status, headers, body = server.request("GET", "/healthz")
        assert (status, json.loads(body)) == (200, {**museum.Health.ANSWER,
                                                       "outbox": {"failed": 0, "oldest": None}})
        assert headers["Server"] == "museum"
        status, _, body = server.request("GET", "/v1.1/museum-hours?limit=3",
                                         headers=basic("curator", "pw"))
        assert status == 200 and len(json.loads(body)) == 3
        status, _, _ = server.request("GET", "/v1.1/museum-hours")
        assert status == 401
        assert server.stop(signal.SIGTERM) == 0
        log = server.log()
    assert "GET /v1.1/museum-hours 200" in log and "GET /v1.1/museum-hours 401" in log
    assert "stopped" in log


def test_access_log_never_holds_credentials_or_emails(tmp_path, server_config):
    credentials = basic("curator", "pw")
    with running_server(tmp_path, server_config) as server:
        status, _, _ = server.request(
            "POST", "/v1.1/tickets", headers=credentials,
            body={"ticketType": "general", "ticketDate": open_days(server_config, 1)[0],
                  "email": SECRET_EMAIL, "phone": "+44 20 7946 0958"})
        assert status == 201
        server.stop()
        log = server.log()
    assert "POST /v1.1/tickets 201" in log
    for secret in (credentials["Authorization"], credentials["Authorization"].split()[1],
                   SECRET_EMAIL, "7946"):
        assert secret not in log


def test_sigint_also_stops_cleanly(tmp_path, server_config):
    with running_server(tmp_path, server_config) as server:
        assert server.stop(signal.SIGINT) == 0


def test_an_invalid_config_stops_startup_with_one_line_and_status_2(tmp_path):
    (tmp_path / "bad.ini").write_text("[hours]\ntuesday = 18:00-09:00\n")
    result = run_museum("serve", "--config", "bad.ini", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "museum: bad.ini: [hours] tuesday: '18:00-09:00' closes before it opens"]


def test_demo_passwords_refuse_a_public_address(tmp_path):
    (tmp_path / "museum.ini").write_text((ROOT / "museum.ini").read_text())
    result = run_museum("serve", "--host", "0.0.0.0", "--port", "0", cwd=tmp_path)
    assert result.returncode == 2
    assert "demo password" in result.stderr and "0.0.0.0" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "museum.sqlite3").exists()


def test_demo_passwords_on_loopback_start_with_a_warning(tmp_path):
    shipped = (ROOT / "museum.ini").read_text()
    with running_server(tmp_path, shipped) as server:
        status, _, _ = server.request("GET", "/v1.1/museum-hours",
                                      headers=basic("visitor", "museum"))
        assert status == 200
        server.stop()
        assert "WARNING museum: demo password in use for admin, visitor" in server.log()


def test_demo_password_refused_behind_proxy(tmp_path):
    """127.0.0.1 behind a reverse proxy publishes the service as surely as 0.0.0.0 does."""
    shipped = (ROOT / "museum.ini").read_text()
    (tmp_path / "museum.ini").write_text(shipped.replace("trusted_proxy =",
                                                         "trusted_proxy = 127.0.0.1"))
    result = run_museum("serve", "--port", "0", cwd=tmp_path)
    assert result.returncode == 2
    [line] = result.stderr.strip().splitlines()
    assert "demo password" in line and "trusted_proxy = 127.0.0.1" in line
    assert "museum hash-password" in line
    assert not (tmp_path / "museum.sqlite3").exists()


def test_weak_password_hashes_are_named_once_at_startup(tmp_path, server_config):
    with running_server(tmp_path, server_config) as server:
        server.stop()
        warnings = [line for line in server.log().splitlines() if "weaker than scrypt" in line]
    assert len(warnings) == 1 and "for curator:" in warnings[0]


def test_hash_password_reads_stdin(tmp_path):
    result = run_museum("hash-password", cwd=tmp_path, stdin="correct horse\n")
    assert result.returncode == 0
    assert result.stdout.startswith("scrypt$131072$8$1$")  # OWASP's minimum for scrypt
    assert museum_credentials.check_password("correct horse", result.stdout.strip())


def test_a_database_from_a_newer_version_stops_startup(tmp_path, server_config):
    database = sqlite3.connect(tmp_path / "museum.sqlite3")
    database.execute("PRAGMA user_version = 99")
    database.close()
    (tmp_path / "museum.ini").write_text(server_config)
    result = run_museum("serve", "--port", "0", cwd=tmp_path)
    assert result.returncode == 1
    assert "newer than this service supports" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("args", [["--help"], ["serve", "--help"], ["hash-password", "--help"],
                                  ["verify-ticket", "--help"]])
def test_every_command_has_help(tmp_path, args):
    result = run_museum(*args, cwd=tmp_path)
    assert result.returncode == 0 and "usage: museum" in result.stdout


def test_version(tmp_path):
    result = run_museum("--version", cwd=tmp_path)
    # The software's version first, then the interface's, which the OpenAPI document keeps.
    assert result.stdout.strip() == "museum 1.7.0 (interface 1.5.0)"


def test_running_the_app_module_names_the_command(tmp_path):
    """A unit or script written for 1.2 ran `python -m museum serve`: it stops, saying what
    to run instead, and does not exit 0 as if it had served."""
    result = subprocess.run([sys.executable, "-m", "museum", "serve"], cwd=tmp_path,
                            capture_output=True, text=True, timeout=60,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 1
    assert result.stderr.strip() == \
        "museum: the command line is `museum` (or `python -m museum_cli`)"


def test_importing_the_module_opens_nothing(tmp_path):
    result = subprocess.run(
        [sys.executable, "-c", "import museum, os; print(sorted(os.listdir('.')))"],
        cwd=tmp_path, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.stdout.strip() == "[]"


def test_the_module_level_app_is_built_from_the_default_config_on_first_call(
        tmp_path, server_config, monkeypatch, fresh_museum):
    (tmp_path / "site.ini").write_text(server_config)
    monkeypatch.setenv("MUSEUM_CONFIG", str(tmp_path / "site.ini"))
    monkeypatch.setenv("MUSEUM_STORAGE_URL", str(tmp_path / "embedded.sqlite3"))
    client = webtest.TestApp(fresh_museum.app)
    assert not (tmp_path / "embedded.sqlite3").exists()
    client.get("/v1.1/museum-hours", headers=basic("curator", "pw"), status=200)
    assert (tmp_path / "embedded.sqlite3").exists()


@pytest.mark.parametrize("database, reason", [
    ("missing/museum.sqlite3", "No such file or directory"),
    (".", "unable to open database file"),
    ("not-a-database.txt", "file is not a database"),
])
def test_a_database_that_cannot_be_opened_stops_startup_with_one_line(
        tmp_path, server_config, database, reason):
    (tmp_path / "not-a-database.txt").write_text("a shopping list, not a database\n" * 100)
    (tmp_path / "museum.ini").write_text(server_config)
    result = run_museum("serve", "--port", "0", "--db", database, cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == \
        f"museum: {database}: cannot open the database: {reason}"
    assert "Traceback" not in result.stderr


def test_a_database_locked_past_the_timeout_stops_startup_with_one_line(tmp_path, server_config):
    (tmp_path / "museum.ini").write_text(server_config)
    with sqlite3.connect(tmp_path / "museum.sqlite3", isolation_level=None) as holder:
        holder.execute("BEGIN EXCLUSIVE")  # another process in the middle of a long write
        result = run_museum("serve", "--port", "0", cwd=tmp_path)
        holder.execute("ROLLBACK")
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == \
        "museum: museum.sqlite3: cannot open the database: database is locked"
    assert "Traceback" not in result.stderr


# A module of waitress other than the package itself, in an import statement.
WAITRESS_SUBMODULE = re.compile(r"^\s*(?:import\s+waitress\.|from\s+waitress\.)|"
                                r"^\s*from\s+waitress\s+import\s+(?!(?:serve|create_server)\b)",
                                re.MULTILINE)


def _built_or_installed(path):
    """A copy made by installing or building (a venv, build/, dist/), not a project file."""
    parts = path.relative_to(ROOT).parts
    return bool({"build", "dist"} & set(parts)) or any(part.startswith(".venv") for part in parts)


def test_waitress_is_used_through_its_public_api_only():
    """Only `waitress` itself (`create_server`, `serve`): its other modules are internals a
    release may change. Every Python file of the project, tests and benchmarks included."""
    sources = [path for path in ROOT.rglob("*.py") if not _built_or_installed(path)]
    assert len(sources) > 50
    assert WAITRESS_SUBMODULE.search("from waitress.channel import HTTPChannel")
    assert WAITRESS_SUBMODULE.search("from waitress import wasyncore")
    offenders = [str(path.relative_to(ROOT)) for path in sources
                 if WAITRESS_SUBMODULE.search(path.read_text(encoding="utf-8"))]
    assert offenders == []
