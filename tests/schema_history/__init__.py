"""Databases written by the code of every released schema version, as SQL text (made by
make_fixtures.py here): NAME.sqlite.sql and NAME.postgres.sql, NAME being vN (schema
version N) or vN-what when one version was released in two forms. They are loaded here
into a new sqlite file or an empty PostgreSQL database."""

import os
import sqlite3
from contextlib import closing
from pathlib import Path

HISTORY = Path(__file__).resolve().parent
FIXTURES = sorted(path.name.removesuffix(".sqlite.sql") for path in HISTORY.glob("*.sqlite.sql"))


def load_sqlite_fixture(name, path):
    """A sqlite file at `path` holding fixture `name`, private as the service makes them."""
    os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    with closing(sqlite3.connect(path)) as conn:
        conn.executescript((HISTORY / f"{name}.sqlite.sql").read_text(encoding="utf-8"))


def load_postgres_fixture(name, url):
    """Fixture `name` in the empty PostgreSQL database at `url`."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute((HISTORY / f"{name}.postgres.sql").read_text(encoding="utf-8"))
