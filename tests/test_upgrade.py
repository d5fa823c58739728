"""Upgrading: a database written by an older version is migrated only when the operator
says so (`--migrate`, `museum migrate` or [storage] auto_migrate), and a sqlite one is
backed up beside itself first; without it `museum serve` refuses to start with one line."""

import logging
import os
import shutil
import sqlite3
import stat
from datetime import datetime, timezone
from pathlib import Path
from contextlib import closing

import pytest

import museum
import museum_services
import storage
from commands import museum_command
from schema_history import load_postgres_fixture, load_sqlite_fixture
from serving import running_server
from storage.sqlite import SQLiteStore
from ticketing import query

CURRENT = len(SQLiteStore.MIGRATIONS)
OLD = CURRENT - 1


@pytest.fixture
def old_database(db_path, monkeypatch):
    """A database written by the previous version, with a setting in it."""
    with monkeypatch.context() as previous:
        previous.setattr(SQLiteStore, "MIGRATIONS", SQLiteStore.MIGRATIONS[:OLD])
        opened = storage.open_store(db_path)
        opened.setting("written", "before the upgrade")
        opened.close()
    return db_path


def copy_before(db_path, old_version):
    """The path of the copy a migration from `old_version` made today (the tests' museum
    is on UTC)."""
    return f"{db_path}.v{old_version}.{datetime.now(timezone.utc).date()}.bak"


def version(db_path):
    return query(db_path, "PRAGMA user_version")[0][0]


def test_serve_refuses_an_older_database_with_one_line_saying_how(tmp_path, old_database,
                                                                  config_text):
    ops = tmp_path / "ops"
    ops.mkdir()
    done = museum_command(ops, config_text, "serve", "--port", "0", "--db", old_database)
    assert done.status == 1
    assert done.err.splitlines()[-1] == (
        f"museum: {old_database}: database schema version {OLD}, this service uses {CURRENT}; "
        f"migrate it with 'museum migrate' or 'museum serve --migrate'")
    assert version(old_database) == OLD
    assert not os.path.exists(copy_before(old_database, OLD))


@pytest.mark.parametrize("how", ["--migrate", "auto_migrate"])
def test_serve_told_to_migrate_backs_up_first_and_says_where(tmp_path, old_database,
                                                             config_text, how):
    extra = ["--migrate"] if how == "--migrate" else []
    text = config_text + ("[storage]\nauto_migrate = true\n" if how == "auto_migrate" else "")
    with running_server(tmp_path, text, *extra, db=old_database) as server:
        log = server.log()
    copy = copy_before(old_database, OLD)
    assert (f"backed up the database at schema version {OLD} to {copy} before migrating it"
            in log)
    assert version(old_database) == CURRENT
    assert version(copy) == OLD
    assert query(copy, "SELECT value FROM settings WHERE name = 'written'") == [
        ("before the upgrade",)]
    assert stat.S_IMODE(os.stat(copy).st_mode) == 0o600


def test_a_new_database_needs_no_telling(tmp_path, db_path, config_text):
    with running_server(tmp_path, config_text, db=db_path) as server:
        assert "backed up" not in server.log()
    assert version(db_path) == CURRENT
    assert [path.name for path in tmp_path.glob("*.bak")] == []


def test_migrate_command_backs_up_migrates_and_exits(tmp_path, old_database, config_text):
    done = museum_command(tmp_path, config_text, "migrate", "--db", old_database)
    assert done.status == 0, done.err
    assert done.out == f"{old_database} is at this version's schema"
    assert f"to {copy_before(old_database, OLD)} before migrating it" in done.err
    assert version(old_database) == CURRENT
    again = museum_command(tmp_path, config_text, "migrate", "--db", old_database)
    assert again.status == 0 and "backed up" not in again.err


def configured(config_text, url, auto_migrate="false"):
    return museum.parse_config(config_text, overrides={("storage", "url"): url,
                                                       ("storage", "auto_migrate"): auto_migrate})


def test_postgres_is_migrated_when_told_with_a_warning_to_back_it_up_first(
        postgres_url, config_text, monkeypatch, caplog):
    from storage.postgres import PostgresStore

    with monkeypatch.context() as previous:
        previous.setattr(PostgresStore, "MIGRATIONS", PostgresStore.MIGRATIONS[:OLD])
        storage.open_store(postgres_url).close()
    config = configured(config_text, postgres_url)
    with pytest.raises(storage.SchemaBehind):
        museum_services.open_configured_store(config)
    with caplog.at_level(logging.INFO, logger="museum"):
        opened = museum_services.open_configured_store(config, migrate=True)
    opened.close()
    assert (f"migrating the database from schema version {OLD} without a backup made by the "
            f"service: {storage.PG_NO_COPY_BEFORE_MIGRATING}") in caplog.text
    reopened = storage.open_store(postgres_url, read_only=True)
    assert reopened.schema_version() == CURRENT
    reopened.close()


def test_an_embedded_app_follows_auto_migrate_too(old_database, config_text):
    with pytest.raises(storage.SchemaBehind):
        museum.create_app(configured(config_text, old_database))
    assert version(old_database) == OLD
    museum.create_app(configured(config_text, old_database, auto_migrate="true"))
    assert version(old_database) == CURRENT
    assert os.path.exists(copy_before(old_database, OLD))


# -- a database from before step 5 was rewritten ------------------------------------------
# Step 5 was released twice: first with events.last_date, then rewritten in place to keep
# listed_last_dates instead. A database made by the first form and then opened by code of
# the second (with step 6 and no repair) claims schema version 6 without that table.

STEPS_WITHOUT_THE_REPAIR = 6


@pytest.fixture
def broken_sqlite(db_path, monkeypatch):
    load_sqlite_fixture("v5", db_path)
    with monkeypatch.context() as before_the_repair:
        before_the_repair.setattr(SQLiteStore, "MIGRATIONS",
                                  SQLiteStore.MIGRATIONS[:STEPS_WITHOUT_THE_REPAIR])
        storage.open_store(db_path).close()
    return db_path


@pytest.fixture
def broken_postgres(postgres_url, monkeypatch):
    from storage.postgres import PostgresStore

    load_postgres_fixture("v5", postgres_url)
    with monkeypatch.context() as before_the_repair:
        before_the_repair.setattr(PostgresStore, "MIGRATIONS",
                                  PostgresStore.MIGRATIONS[:STEPS_WITHOUT_THE_REPAIR])
        storage.open_store(postgres_url).close()
    return postgres_url


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_check_names_what_the_broken_upgrade_lacks_and_migrate_repairs_it(
        request, tmp_path, config_text, backend):
    url = request.getfixturevalue(f"broken_{backend}")
    shown = storage.display_url(url) if backend == "sqlite" else (
        f"PostgreSQL at {storage.display_url(url)}")
    behind = (f"{shown}: database schema version 6, this service uses {CURRENT}; migrate it "
              f"with 'museum migrate' or 'museum serve --migrate'")
    missing = (f"{shown}: missing table listed_last_dates, which a new database at schema "
               f"version 6 has")
    done = museum_command(tmp_path, config_text, "check", "--db", url)
    assert (done.status, done.out.splitlines()) == (1, [behind, missing])

    assert museum_command(tmp_path, config_text, "migrate", "--db", url).status == 0
    done = museum_command(tmp_path, config_text, "check", "--db", url)
    assert (done.status, done.out) == (0, f"{storage.display_url(url)}: ok")
    repaired = storage.open_store(url, migrate=False)
    try:
        events, total = repaired.list_events("2026-11-22", None, 0, 10)
        assert ([event["name"] for event in events], total) == (
            ["Winter lectures", "Night at the museum", "Printmaking workshop"], 3)
    finally:
        repaired.close()


def test_check_on_an_empty_postgres_database_says_it_has_no_schema(tmp_path, config_text,
                                                                    postgres_url):
    done = museum_command(tmp_path, config_text, "check", "--db", postgres_url)
    assert (done.status, done.out) == (
        1, f"PostgreSQL at {storage.display_url(postgres_url)}: database schema version 0, "
           f"this service uses {CURRENT}; migrate it with 'museum migrate' or 'museum serve "
           f"--migrate'")


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_schema_findings_name_each_missing_table_column_and_index_once(request, backend):
    url = request.getfixturevalue("db_path" if backend == "sqlite" else "postgres_url")
    storage.open_store(url).close()
    damage = ["DROP TABLE admissions", "ALTER TABLE tickets DROP COLUMN phone",
              "DROP INDEX tickets_by_date"]
    if backend == "sqlite":
        with closing(sqlite3.connect(url)) as conn:
            conn.executescript(";".join(damage))
        shown = url
    else:
        import psycopg

        with psycopg.connect(url, autocommit=True) as conn:
            for statement in damage:
                conn.execute(statement)
        shown = f"PostgreSQL at {storage.display_url(url)}"
    damaged = storage.open_store(url)
    try:
        assert damaged.schema_findings() == [
            f"{shown}: missing {what}, which a new database at schema version {CURRENT} has"
            for what in ("table admissions", "column tickets.phone", "index tickets_by_date")]
    finally:
        damaged.close()


@pytest.mark.parametrize("name", ["v1", "v5"])
def test_migrate_leaves_the_old_database_whole_for_a_rollback(tmp_path, db_path, config_text,
                                                              name):
    """A rollback restores PATH.vN.DATE.bak over the database: it must be the old
    database, at its schema version with every row, for the old version to run it."""
    load_sqlite_fixture(name, db_path)
    as_loaded = dump(db_path)
    keep_all = config_text + "[privacy]\nkeep_contact_days = 100000\n"  # none erased
    done = museum_command(tmp_path, keep_all, "migrate", "--db", db_path)
    assert done.status == 0, done.err
    assert version(db_path) == CURRENT
    copy = copy_before(db_path, as_loaded[0])
    assert dump(copy) == as_loaded
    for log_file in (f"{db_path}-wal", f"{db_path}-shm"):  # as the documented rollback says
        if os.path.exists(log_file):
            os.remove(log_file)
    shutil.copy2(copy, db_path)
    assert dump(db_path) == as_loaded


def dump(path):
    """The database's schema version and every statement of its SQL dump."""
    with closing(sqlite3.connect(path)) as conn:
        return conn.execute("PRAGMA user_version").fetchone()[0], list(conn.iterdump())


def test_the_copy_before_a_migration_has_expired_contacts_erased_and_is_never_replaced(
        tmp_path, db_path, config_text):
    load_sqlite_fixture("v6", db_path)
    with closing(sqlite3.connect(db_path)) as conn, conn:
        conn.execute("UPDATE tickets SET date = '2020-01-01' WHERE email = 'visitor1@example.org'")
    done = museum_command(tmp_path, config_text, "migrate", "--db", db_path)
    assert done.status == 0, done.err
    copy = copy_before(db_path, 6)
    assert query(copy, "SELECT email, phone FROM tickets WHERE date = '2020-01-01'") == [
        ("", None)]
    assert query(copy, "SELECT count(*) FROM tickets WHERE email LIKE 'visitor%'") == [(3,)]
    assert b"visitor1@example.org" not in Path(copy).read_bytes()
    # Rolled back and migrated again the same day: a second copy beside the first.
    shutil.copy2(copy, db_path)
    for log_file in (f"{db_path}-wal", f"{db_path}-shm"):
        if os.path.exists(log_file):
            os.remove(log_file)
    assert museum_command(tmp_path, config_text, "migrate", "--db", db_path).status == 0
    assert os.path.exists(copy)
    assert version(copy_before(db_path, 6).removesuffix(".bak") + "-2.bak") == 6


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_prices_rounded_by_the_migration_to_hundredths_are_named_in_one_log_line(
        request, tmp_path, config_text, backend):
    """Before schema step 9 a price was a float: one with more than 2 decimals is rounded
    to hundredths by that step, and the migration says which, once it has committed."""
    url = str(tmp_path / "museum.sqlite3") if backend == "sqlite" \
        else request.getfixturevalue("postgres_url")
    changes = ["UPDATE events SET price = 12.3456 WHERE name = 'Night at the museum'",
               "UPDATE events SET price = 0.29 WHERE name = 'Winter lectures'"]
    if backend == "sqlite":
        load_sqlite_fixture("v6", url)
        with closing(sqlite3.connect(url)) as conn, conn:
            for change in changes:
                conn.execute(change)
        shown = url
    else:
        import psycopg

        load_postgres_fixture("v6", url)
        with psycopg.connect(url, autocommit=True) as conn:
            for change in changes:
                conn.execute(change)
        shown = f"PostgreSQL at {storage.display_url(url)}"
    done = museum_command(tmp_path, config_text, "migrate", "--db", url)
    assert done.status == 0, done.err
    rounded = [line for line in done.err.splitlines() if "keeps prices" in line]
    assert [line.split(": ", 1)[1] for line in rounded] == [(
        f"{shown}: schema step 9 keeps prices in whole hundredths: rounded the prices with "
        f"more than 2 decimals (1): 'Night at the museum' "
        f"(00000000-0000-4000-8000-000000000001) 12.3456 to 12.35")]
    store = storage.open_store(url, read_only=True)
    try:
        prices = {event["name"]: event["price"]
                  for event in store.list_events("2026-11-22", None, 0, 10)[0]}
    finally:
        store.close()
    assert (prices["Night at the museum"], prices["Winter lectures"]) == (12.35, 0.29)
