"""No command creates a database silently: only `museum init` and a first `museum serve`
make one, and say where; `migrate`, `check`, `backup` and `restore` name a missing file as
missing. A relative [storage] url that versions before 1.2 read from the working directory,
where the real database still is, stops every command with both paths and the fix."""

import pytest

from commands import museum_command
from schema_history import load_sqlite_fixture
from serving import running_server

OLD_RELEASE = "v6"  # a database written by 1.1.1, which read a relative url from the cwd
MISSING = ("no database there (nothing was created; a new one is made by 'museum init' or "
           "the first 'museum serve')")


@pytest.fixture
def moved(tmp_path):
    """The 1.1.1 layout: the database in the service's working directory, the config in
    /etc with `url = museum.sqlite3`; returns (config directory, working directory)."""
    etc, work = tmp_path / "etc", tmp_path / "work"
    etc.mkdir()
    work.mkdir()
    load_sqlite_fixture(OLD_RELEASE, work / "museum.sqlite3")
    return etc, work


@pytest.mark.parametrize("command", [["serve", "--port", "0", "--migrate"], ["migrate"],
                                     ["check"], ["backup", "copy.sqlite3"],
                                     ["purge-contacts"], ["init"]])
def test_a_relative_url_that_would_switch_databases_stops_every_command(
        moved, config_text, command):
    etc, work = moved
    done = museum_command(etc, config_text + "[storage]\nurl = museum.sqlite3\n", *command,
                          cwd=work)
    assert done.status == 2, done
    assert done.err.splitlines()[-1] == (
        f"museum: {etc / 'museum.ini'}: [storage] url names {etc / 'museum.sqlite3'}, which "
        f"does not exist; versions before 1.2 read that relative url from the working "
        f"directory, where the database is: {work / 'museum.sqlite3'}. Set url = "
        f"{work / 'museum.sqlite3'} in {etc / 'museum.ini'} (nothing was created)")
    assert sorted(path.name for path in etc.iterdir()) == ["museum.ini"]
    assert sorted(path.name for path in work.iterdir()) == ["museum.sqlite3"]


def test_the_fix_the_refusal_names_works(moved, config_text):
    etc, work = moved
    text = config_text + f"[storage]\nurl = {work / 'museum.sqlite3'}\n"
    done = museum_command(etc, text, "migrate", cwd=work)
    assert done.status == 0, done.err
    assert museum_command(etc, text, "check", cwd=work).status == 0


@pytest.mark.parametrize("command", [["migrate"], ["check"], ["backup", "copy.sqlite3"],
                                     ["verify-ticket", "792d82-891fc"],
                                     ["report", "--from", "2026-01-01", "--to", "2026-01-02"]])
def test_a_command_on_a_missing_database_names_it_and_creates_nothing(tmp_path, config_text,
                                                                      command):
    missing = tmp_path / "db" / "museum.sqlite3"
    missing.parent.mkdir()
    done = museum_command(tmp_path, config_text, *command, "--db", str(missing))
    assert (done.status, done.err) == (1, f"museum: {missing}: {MISSING}")
    assert list(missing.parent.iterdir()) == []
    assert not (tmp_path / "copy.sqlite3").exists()


def test_init_creates_a_database_saying_where_and_never_twice(tmp_path, config_text):
    done = museum_command(tmp_path, config_text, "init", "--db", "new.sqlite3")
    assert done.status == 0, done.err
    assert done.err.endswith(f"INFO museum: created a new database at {tmp_path / 'new.sqlite3'}")
    assert museum_command(tmp_path, config_text, "check", "--db", "new.sqlite3").status == 0
    again = museum_command(tmp_path, config_text, "init", "--db", "new.sqlite3")
    assert (again.status, again.err) == (
        1, f"museum: {tmp_path / 'new.sqlite3'}: a database is already there; nothing changed")


def test_serve_says_which_database_it_serves_with_its_counts(tmp_path, config_text):
    db = tmp_path / "museum.sqlite3"
    with running_server(tmp_path, config_text, db=str(db)) as server:
        log = server.log()
        assert f"INFO museum: created a new database at {db}" in log
        assert f"(database {db}: 0 events, 0 tickets)" in log
    load_sqlite_fixture(OLD_RELEASE, tmp_path / "old.sqlite3")
    with running_server(tmp_path, config_text, "--migrate", db="old.sqlite3") as server:
        log = server.log()
        assert "created a new database" not in log
        assert f"(database {tmp_path / 'old.sqlite3'}: 4 events, 4 tickets)" in log, log
