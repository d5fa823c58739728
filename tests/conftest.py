"""Shared fixtures: a WebTest client over a fresh sqlite file per test, with a fixed clock."""

import base64
import importlib.util
import io
import json
import os
from datetime import datetime, timedelta, timezone

import pytest
import webtest

import museum_access_log
import museum
import museum_credentials
import museum_door
import storage
from museum_codes import FIELD_CODES

pytest_plugins = ["postgres"]  # the postgres_server and postgres_url fixtures

# Sunday 22 November 2026, noon in the museum's zone (UTC in the tests).
NOW = datetime(2026, 11, 22, 12, 0, tzinfo=timezone.utc)
TODAY = NOW.date().isoformat()
# The door's timed-entry rule (15 minutes early) at NOW, for the door's verdict.
ENTRY_TIMES = museum_door.EntryTimes(15, lambda: NOW)
PASSWORDS = {"admin": "admin-pass", "desk": "desk-pass", "gate": "gate-pass",
             "visitor": "visitor-pass"}


class Clock:
    """The service's clock, moved by the test (NOW at first)."""

    def __init__(self):
        self.now = NOW

    def __call__(self):
        return self.now

    def advance(self, **delta):
        self.now += timedelta(**delta)


@pytest.fixture
def clock():
    return Clock()


def quick_hash(password):
    """A password hash far cheaper than the service's default (N=2^17, about a second here),
    so that tests logging in many times stay fast."""
    return museum_credentials.hash_password(password, n=2**10)


@pytest.fixture(scope="session")
def password_hashes():
    return {name: quick_hash(password) for name, password in PASSWORDS.items()}


@pytest.fixture(scope="session")
def config_text(password_hashes):
    """A config with one user of each role, UTC, and the default opening hours. Access
    lines are written at once, so a test can read them while its server runs."""
    return (
        "[museum]\ntimezone = UTC\n"
        "[log]\nflush = 0\n"
        "[users]\n"
        f"admin = admin:{password_hashes['admin']}\n"
        f"desk = desk:{password_hashes['desk']}\n"
        f"gate = gate:{password_hashes['gate']}\n"
        f"visitor = visitor:{password_hashes['visitor']}\n"
    )


@pytest.fixture
def config(config_text):
    return museum.parse_config(config_text, "test.ini")


@pytest.fixture
def db_path(tmp_path):
    return str(tmp_path / "museum.sqlite3")


@pytest.fixture
def store(db_path):
    opened = storage.open_store(db_path)
    yield opened
    opened.close()


@pytest.fixture
def make_client(store):
    """A factory for WebTest clients over `store` for a given config."""

    def make(config):
        return webtest.TestApp(museum.create_app(config, store=store, clock=lambda: NOW),
                               lint=True)

    return make


@pytest.fixture
def client(make_client, config):
    return make_client(config)


@pytest.fixture
def logged_client(config, store):
    """A client whose access lines are written at once to `.lines`."""
    lines = io.StringIO()
    app = museum.create_app(config, store=store, clock=lambda: NOW,
                            access=museum_access_log.AccessLogWriter(lines, flush_seconds=0))
    client = webtest.TestApp(app, lint=True)
    client.lines = lines
    return client


@pytest.fixture
def fresh_museum():
    """museum.py imported afresh, as a WSGI host's new process imports it: its module-level
    `app` is not built yet."""
    spec = importlib.util.spec_from_file_location("museum", museum.__file__)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def needs(present, reason):
    """A mark for tests that need a tool this machine may lack (`present` says whether it
    is here): without it they skip, saying `reason`. Under CI (`CI` set, as .ci/run sets
    it) they fail instead: CI installs every such tool, so a skip there would be a check
    passed unseen."""
    return pytest.mark.needs(present=present, reason=reason)


def pytest_runtest_setup(item):
    for mark in item.iter_markers("needs"):
        if mark.kwargs["present"]:
            continue
        if os.environ.get("CI"):
            pytest.fail(f"{mark.kwargs['reason']} (CI installs it: see .ci/run)", pytrace=False)
        pytest.skip(mark.kwargs["reason"])


def basic(name, password):
    token = base64.b64encode(f"{name}:{password}".encode()).decode()
    return {"Authorization": f"Basic {token}"}


ADMIN = basic("admin", PASSWORDS["admin"])
DESK = basic("desk", PASSWORDS["desk"])
GATE = basic("gate", PASSWORDS["gate"])
VISITOR = basic("visitor", PASSWORDS["visitor"])


def assert_problem(res, status, field=None):
    """`res` is an RFC 9457 problem with `status`; with `field`, one of its errors names it."""
    assert res.status_int == status
    assert res.content_type == "application/problem+json"
    body = json.loads(res.body)
    assert body["status"] == status
    assert body["type"] == "about:blank"
    assert body["title"] and body["detail"]
    if field is not None:
        assert field in [error["field"] for error in body["errors"]], body
    # Every field error has the code of its rule, for a client to translate.
    assert all(error["code"] in FIELD_CODES for error in body.get("errors", [])), body
    return body


def zone_at_noon():
    """A fixed-offset zone (Etc/GMT±N, whose sign is inverted) where it is 12:00 to 12:59
    now: a test on the real clock there is hours away from midnight and from evening slots."""
    offset = 12 - datetime.now(timezone.utc).hour  # -11 to 12 hours east of UTC
    return "Etc/GMT" if offset == 0 else f"Etc/GMT{'-' if offset > 0 else '+'}{abs(offset)}"
