"""Rolling back: `museum backup` and `museum restore` as an operator runs them, on sqlite
and PostgreSQL (pg_dump -Fc, restored into the emptied schema in one transaction), and a
rollback from every released schema: back up, migrate with this version, restore the
backup, find the old schema with its data as they were, migrate again and work."""

import os
import re
import sqlite3
import stat
import subprocess
import sys
import uuid
from contextlib import closing

import pytest
from commands import museum_command
from schema_history import FIXTURES, load_postgres_fixture, load_sqlite_fixture
from serving import ROOT
from test_migrations import POSTGRES_CATALOG, drive_the_api, fixture_version

import storage
import storage.postgres_dump
from storage.sqlite import SQLiteStore

CURRENT = len(SQLiteStore.MIGRATIONS)
KEEP_ALL = "[privacy]\nkeep_contact_days = 100000\n"  # the fixtures' contacts stay as written


@pytest.fixture
def ops(tmp_path):
    """The operator's directory, apart from the database's."""
    directory = tmp_path / "ops"
    directory.mkdir()
    return directory


def contents(url):
    """The schema version, schema and every row of the database at `url`, to compare
    before and after: sqlite's SQL dump; PostgreSQL's catalog and each table's rows."""
    if storage.sqlite_file(url):
        with closing(sqlite3.connect(url)) as conn:
            return conn.execute("PRAGMA user_version").fetchone()[0], list(conn.iterdump())
    import psycopg

    with psycopg.connect(url) as conn:
        catalog = {what: conn.execute(query).fetchall() for what, query in POSTGRES_CATALOG.items()}
        rows = {table: conn.execute(f"SELECT t::text FROM {table} t ORDER BY 1").fetchall()
                for (table, _) in catalog["tables"]}
        version = conn.execute("SELECT max(version) FROM schema_migrations").fetchone()[0]
    return version, catalog, rows


def sell(url, count, day="2026-12-01"):
    """`count` general tickets for `day` in the database at `url`."""
    store = storage.open_store(url, migrate=False)
    sold = [str(uuid.uuid4()) for _ in range(count)]
    try:
        for number, ticket_id in enumerate(sold):
            store.create_ticket({"ticketId": ticket_id, "ticketType": "general",
                                 "ticketDate": day, "eventId": None,
                                 "confirmationCode": f"ticket-general-{number:06d}-{ticket_id[:5]}",
                                 "email": f"visitor.{number}@example.org", "phone": None,
                                 "price": 0, "currency": "EUR"})
    finally:
        store.close()


# -- PostgreSQL: backup and restore as commands ------------------------------------------

def test_postgres_backup_and_restore_round_trip(ops, config_text, postgres_url):
    shown = storage.display_url(postgres_url)
    dump = ops / "museum.dump"
    storage.open_store(postgres_url).close()
    sell(postgres_url, 3)
    as_backed_up = contents(postgres_url)
    done = museum_command(ops, config_text, "backup", str(dump), "--db", postgres_url)
    assert (done.status, done.out) == (0, f"backed up {shown} to {dump} (checked)"), done.err
    assert stat.S_IMODE(os.stat(dump).st_mode) == 0o600
    assert not os.path.exists(f"{dump}.partial")
    sell(postgres_url, 2, day="2026-12-02")  # sold after the backup: the restore drops them

    done = museum_command(ops, config_text, "restore", str(dump), "--db", postgres_url)
    assert done.status == 0, done.err
    tables = len(as_backed_up[1]["tables"])
    assert done.out.splitlines() == [
        (f"restored {shown} from {dump}; what it held in schema public ({tables} tables) was "
         f"dropped first, in the restore's one transaction"), f"{shown}: ok"]
    assert contents(postgres_url) == as_backed_up


def test_postgres_restore_refuses_while_a_service_uses_the_database(ops, config_text,
                                                                     postgres_url):
    dump = ops / "museum.dump"
    storage.open_store(postgres_url).close()
    assert museum_command(ops, config_text, "backup", str(dump), "--db", postgres_url).status == 0
    sell(postgres_url, 1)
    before = contents(postgres_url)
    service = storage.open_store(postgres_url)  # a pool, as a running service holds
    try:
        done = museum_command(ops, config_text, "restore", str(dump), "--db", postgres_url)
    finally:
        service.close()
    assert (done.status, done.out) == (1, "")
    assert done.err == (f"museum: PostgreSQL at {storage.display_url(postgres_url)} is in use "
                        f"by other sessions (1 of museum): stop the service before restoring")
    assert contents(postgres_url) == before


@pytest.mark.parametrize("backup, reason", [
    (None, "{abs}: no backup there; nothing was restored"),
    (b"not a dump" * 10, ("{copy}: not a backup of a PostgreSQL database: pg_restore: input "
                          "file does not appear to be a valid archive (too short?)")),
    ("cut", ("{copy}: not restored, pg_restore cannot read it: could not read from input "
             "file: end of file")),
])
def test_postgres_restore_of_a_bad_backup_changes_nothing(ops, config_text, postgres_url,
                                                          backup, reason):
    copy = ops / "museum.dump"
    storage.open_store(postgres_url).close()
    sell(postgres_url, 20)
    if backup == "cut":  # its table of contents whole, the last table's data cut short
        museum_command(ops, config_text, "backup", str(copy), "--db", postgres_url)
        copy.write_bytes(copy.read_bytes()[:-100])
    elif backup is not None:
        copy.write_bytes(backup)
    before = contents(postgres_url)
    done = museum_command(ops, config_text, "restore", str(copy), "--db", postgres_url)
    assert done.status == 1
    assert done.err == "museum: " + reason.format(copy=copy, abs=copy.absolute())
    assert contents(postgres_url) == before


def test_a_missing_client_program_is_named(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(storage.postgres_dump, "INSTALLED", str(tmp_path / "none" / "*"))
    with pytest.raises(storage.StorageError) as refused:
        storage.postgres_dump.client_program("pg_dump")
    assert str(refused.value) == (
        f"pg_dump is not installed (neither on PATH nor under {tmp_path}/none/*): install "
        f"PostgreSQL's client programs (Debian: apt-get install postgresql-client), of the "
        f"server's major version or newer")


def test_client_programs_are_found_on_path_else_in_the_newest_install(monkeypatch, tmp_path):
    for version in ("9.6", "15", "16"):
        program = tmp_path / version / "bin" / "pg_restore"
        program.parent.mkdir(parents=True)
        program.write_text("#!/bin/sh\n")
        program.chmod(0o755)
    monkeypatch.setattr(storage.postgres_dump, "INSTALLED", str(tmp_path / "*" / "bin"))
    monkeypatch.setenv("PATH", str(tmp_path / "elsewhere"))
    assert storage.postgres_dump.client_program("pg_restore") == str(
        tmp_path / "16" / "bin" / "pg_restore")
    monkeypatch.setenv("PATH", str(tmp_path / "9.6" / "bin"))
    assert storage.postgres_dump.client_program("pg_restore") == str(
        tmp_path / "9.6" / "bin" / "pg_restore")


# -- rolling back from every released schema ----------------------------------------------
# The fixtures of tests/schema_history, and the schemas of 1.2.0 (12) and 1.3.0 (13) made
# from the last fixture by this version's steps, which carry its data.

RELEASED = [*((name, None) for name in FIXTURES), ("v6", 12), ("v6", 13)]
# Made by the first form of step 5, rewritten in place later: restored as they were
# released, they lack what today's step 5 makes, and the restore's check says so.
FIRST_STEP_5 = {"v5", "v6-first-step-5"}


def old_database(request, tmp_path, backend, name, steps, monkeypatch):
    """A database at a released schema with the fixture's data; its url."""
    if backend == "sqlite":
        url = str(tmp_path / "museum.sqlite3")
        load_sqlite_fixture(name, url)
    else:
        url = request.getfixturevalue("postgres_url")
        load_postgres_fixture(name, url)
    if steps:
        from storage.postgres import PostgresStore

        store_class = SQLiteStore if backend == "sqlite" else PostgresStore
        with monkeypatch.context() as released:
            released.setattr(store_class, "MIGRATIONS", store_class.MIGRATIONS[:steps])
            storage.open_store(url).close()
    return url


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
@pytest.mark.parametrize("name, steps", RELEASED, ids=[
    f"{name}-then-{steps}" if steps else name for name, steps in RELEASED])
def test_a_rollback_from_each_released_schema_restores_it_whole_and_migrates_again(
        request, tmp_path, ops, config_text, monkeypatch, config, backend, name, steps):
    url = old_database(request, tmp_path, backend, name, steps, monkeypatch)
    text = config_text + KEEP_ALL
    as_released = contents(url)
    backup = ops / "before-upgrade.backup"

    def run(*args, status=0):
        done = museum_command(ops, text, *args, "--db", url)
        assert done.status == status, done.err
        return done

    run("backup", str(backup))
    run("migrate")
    assert contents(url)[0] == CURRENT
    shown = storage.display_url(url) if backend == "sqlite" else f"PostgreSQL at {url}"
    restored = run("restore", str(backup), status=1 if name in FIRST_STEP_5 else 0)
    assert restored.out.splitlines()[-1] == (  # the rollback: the old schema, found sound
        f"{shown}: missing table listed_last_dates, which a new database at schema version "
        f"{as_released[0]} has" if name in FIRST_STEP_5 else
        f"{storage.display_url(url)}: ok, at schema version {as_released[0]} of an older "
        f"version (this one uses {CURRENT}: the older version runs it as it is; 'museum "
        f"migrate' brings it to this one)")
    assert contents(url) == as_released  # its version, schema and every row as released

    run("migrate")
    assert run("check").out == f"{storage.display_url(url)}: ok"
    store = storage.open_store(url, migrate=False)
    try:
        drive_the_api(store, config, fixture_version(name))
    finally:
        store.close()


# -- the upgrade and the rollback of docs/backup-and-upgrades.md, as written ---------------

PAGE = ROOT / "docs" / "backup-and-upgrades.md"


def documented_commands(heading):
    """The lines of the first `sh` block after `heading` on the page (indented in a list
    item or not), as an operator would paste them."""
    after = PAGE.read_text(encoding="utf-8").split(f"\n{heading}\n", 1)[1]
    block = re.search(r"^ *```sh\n(.*?)^ *```", after, re.MULTILINE | re.DOTALL).group(1)
    return [line.strip() for line in block.splitlines() if line.strip()]


def as_run_here(lines, places):
    """The page's commands with the production paths as the test's: the service's user is
    the test's, systemctl and pip are recorders on PATH, museum runs this checkout."""
    for written, here in places.items():
        lines = [line.replace(written, here) for line in lines]
    return "\n".join(lines)


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_the_documented_upgrade_and_rollback_run_as_written(
        request, tmp_path, config_text, monkeypatch, backend):
    """On a 1.2.0 database (schema 12, whose rollback by pg_restore --clean left a stray
    slot_places that failed the next migrate): the page's upgrade, then its rollback."""
    bin_dir, etc, backups = tmp_path / "bin", tmp_path / "etc", tmp_path / "backups"
    for directory in (bin_dir, etc, backups):
        directory.mkdir()
    url = old_database(request, tmp_path, backend, "v6", 12, monkeypatch)
    as_released = contents(url)
    config = etc / "museum.ini"
    config.write_text(f"{config_text}{KEEP_ALL}[storage]\nurl = {url}\n", encoding="utf-8")
    config.chmod(0o600)
    calls = tmp_path / "calls"
    (bin_dir / "museum").write_text(
        f"#!/bin/sh\nPYTHONPATH={ROOT} exec {sys.executable} -m museum_cli \"$@\"\n")
    for recorder in ("systemctl", "pip"):
        (bin_dir / recorder).write_text(f"#!/bin/sh\necho {recorder} \"$@\" >> {calls}\n")
    for program in bin_dir.iterdir():
        program.chmod(0o755)
    places = {"sudo -u museum ": "", "/opt/museum/bin/": f"{bin_dir}/",
              "/etc/museum": str(etc), "/var/lib/museum/backups": str(backups)}
    environ = {"PATH": f"{bin_dir}:{os.environ['PATH']}", "HOME": str(tmp_path)}

    def run(heading):
        script = as_run_here(documented_commands(heading), places)
        done = subprocess.run(["bash", "-euc", script], cwd=tmp_path, env=environ,
                              capture_output=True, text=True, timeout=300, check=False)
        assert done.returncode == 0, done.stderr
        return calls.read_text().splitlines()

    assert run("## Upgrading") == ["systemctl stop museum", "pip install ./museum-NEW",
                                   "systemctl start museum"]
    assert contents(url)[0] == CURRENT
    assert stat.S_IMODE(os.stat(backups / "before-upgrade.backup").st_mode) == 0o600
    calls.unlink()
    assert run("### Rolling back") == ["systemctl stop museum", "pip install ./museum-OLD",
                                       "systemctl start museum"]
    assert contents(url) == as_released
    done = museum_command(tmp_path, config.read_text(), "migrate")  # forward again
    assert done.status == 0, done.err
    assert contents(url)[0] == CURRENT
