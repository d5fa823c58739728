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
