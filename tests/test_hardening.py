"""Holes closed by the hardening pass: demo passwords that could reach the network, floods
of password guesses, personal data in logs, HEAD, and stopping with requests in flight.
Each test is named after the hole it closes."""

from pathlib import Path

import pytest
import webtest

import museum
import storage
from conftest import basic

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = (ROOT / "museum.ini").read_text()


# -- demo passwords reach no network -------------------------------------------------------

def test_demo_password_refused_by_create_app(tmp_path):
    """gunicorn, mod_wsgi and waitress-serve build the app through create_app (or
    museum:app) and never say where they listen: a demo password stops them."""
    config = museum.parse_config(SHIPPED, "museum.ini")
    with pytest.raises(museum.ConfigError) as refused:
        museum.create_app(config, store=storage.open_store(":memory:"))
    message = str(refused.value)
    assert "admin, visitor" in message and "'museum hash-password'" in message
    assert "\n" not in message


def test_demo_password_refused_by_the_module_level_app(tmp_path, monkeypatch):
    (tmp_path / "museum.ini").write_text(SHIPPED)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MUSEUM_CONFIG", raising=False)
    monkeypatch.setattr(museum, "_default_app", None)
    with pytest.raises(museum.ConfigError, match="museum hash-password"):
        webtest.TestApp(museum.app).get("/healthz")
    assert not (tmp_path / "museum.sqlite3").exists()


def test_demo_password_allowed_for_a_stated_loopback_development_run():
    config = museum.parse_config(SHIPPED, "museum.ini")
    app = museum.create_app(config, store=storage.open_store(":memory:"),
                            loopback_development=True)
    client = webtest.TestApp(app)
    client.get("/v1.1/museum-hours", headers=basic("visitor", "museum"), status=200)


# -- the lock-out's memory is bounded ------------------------------------------------------

def authenticator(config, now, max_failures=3):
    return museum.Authenticator(config.users, max_failures=max_failures, failure_window=60,
                                lockout=120, clock=lambda: now[0])


def test_lockout_memory_stays_under_the_cap_for_200000_addresses(config):
    now = [1000.0]
    auth = authenticator(config, now, max_failures=1)  # every failure is a lock-out
    limit = museum.Authenticator.ADDRESS_LIMIT
    for number in range(200_000):
        auth._count_failure(f"10.{number >> 16}.{number >> 8 & 255}.{number & 255}")
        assert len(auth._locked_until) <= limit
    assert len(auth._locked_until) == limit
    auth._refuse_if_locked("10.0.0.0")  # the oldest were dropped first
    with pytest.raises(museum.Problem):
        auth._refuse_if_locked("10.3.13.63")  # the newest is still locked


def test_lockout_memory_keeps_no_expired_entry(config):
    now = [1000.0]
    auth = authenticator(config, now)
    for number in range(5000):
        auth._count_failure(f"192.0.{number >> 8}.{number & 255}")
        auth._count_failure("198.51.100.1")
    assert len(auth._failures) == 5001 and len(auth._locked_until) == 1
    now[0] += 121  # past the failure window and the lock-out
    auth._count_failure("203.0.113.9")
    assert list(auth._failures) == ["203.0.113.9"] and not auth._locked_until


def test_lockout_counts_an_ipv6_64_rotating_its_last_64_bits_as_one_address(config):
    now = [1000.0]
    auth = authenticator(config, now)
    for number in range(3):
        auth._count_failure(f"2001:db8:1:2:{number:x}:{number * 7:x}::{number + 1:x}")
    with pytest.raises(museum.Problem) as locked:
        auth._refuse_if_locked("2001:db8:1:2:ffff:ffff:ffff:fffe")
    assert locked.value.status_code == 429
    auth._refuse_if_locked("2001:db8:1:3::1")  # the next /64 is someone else
    auth._refuse_if_locked("192.0.2.1")
