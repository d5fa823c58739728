"""PostgreSQL for the tests: one server for the session, a fresh database for each test.

The server is the one `MUSEUM_TEST_POSTGRES_URL` names (a `postgresql://` URL of a
superuser; CI starts a throwaway cluster and sets it), else a throwaway cluster started
here (`pg_cluster`). A test that needs it skips, saying why, only when neither is possible;
a server that is named but does not answer fails the test.

    def test_something(postgres_url):   # postgresql://…/museum_test_…, dropped afterwards
"""

import os
import tempfile
import urllib.parse
import uuid

import pytest

import pg_cluster

SERVER_VARIABLE = "MUSEUM_TEST_POSTGRES_URL"


@pytest.fixture(scope="session")
def postgres_server():
    """The URL of the test server's maintenance database, for a superuser."""
    pytest.importorskip("psycopg", reason="psycopg is not installed: pip install -e '.[postgres]'")
    if os.environ.get(SERVER_VARIABLE):
        yield os.environ[SERVER_VARIABLE]
        return
    # Not under pytest's tmp dirs: the postgres user must be able to reach the directory.
    directory = tempfile.mkdtemp(prefix="museum-pg-")
    try:
        url = pg_cluster.start(directory)
    except pg_cluster.ClusterError as error:
        pg_cluster.stop(directory)
        pytest.skip(f"no PostgreSQL server for this test: {error}; set {SERVER_VARIABLE} "
                    f"or install PostgreSQL so that a throwaway one can be started")
    try:
        yield url
    finally:
        pg_cluster.stop(directory)


@pytest.fixture
def postgres_url(postgres_server):
    """A fresh, empty database on the test server, as a URL; dropped after the test."""
    name = f"museum_test_{uuid.uuid4().hex[:16]}"
    maintenance(postgres_server, f'CREATE DATABASE "{name}"')
    yield urllib.parse.urlsplit(postgres_server)._replace(path=f"/{name}").geturl()
    maintenance(postgres_server, f'DROP DATABASE "{name}" WITH (FORCE)')


def maintenance(server_url, statement):
    """Run one statement outside a transaction, as CREATE/DROP DATABASE need."""
    import psycopg

    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(statement)

