"""Every error from every layer is an RFC 9457 problem: routing, bodies, storage, bugs."""

import json
import logging

import pytest
import webtest

import museum
import storage
from conftest import ADMIN, NOW, assert_problem
from storage.sqlite import SQLiteStore
from ticketing import write_locked

EVENTS = "/v1.1/special-events"


@pytest.mark.parametrize("path", ["/", "/v1.1", "/v1.1/nothing", "/v1.0/museum-hours",
                                  "/v1.1/museum-hours/", "/v1.1/tickets/x/qr/more"])
def test_unknown_paths_are_404_problems(client, path):
    assert_problem(client.get(path, headers=ADMIN, status=404), 404)


def test_a_wrong_method_is_405_with_allow(client):
    res = client.put("/v1.1/museum-hours", headers=ADMIN, status=405)
    assert_problem(res, 405)
    # Deny by default: only the methods the resource declares roles for (HEAD with GET).
    assert set(res.headers["Allow"].replace(" ", "").split(",")) == {"GET", "HEAD"}


@pytest.mark.parametrize("content_type", [None, "text/plain", "application/x-www-form-urlencoded",
                                          "application/jsonx", "text/json"])
def test_a_body_that_is_not_json_media_is_415(client, content_type):
    headers = dict(ADMIN, **({"Content-Type": content_type} if content_type else {}))
    res = client.post(EVENTS, b'{"name": "x"}', headers=headers, status=415)
    assert_problem(res, 415)


@pytest.mark.parametrize("content_type", ["application/json; charset=utf-8",
                                          "application/merge-patch+json", "APPLICATION/JSON"])
def test_json_media_types_are_accepted(client, content_type):
    headers = dict(ADMIN, **{"Content-Type": content_type})
    assert_problem(client.post(EVENTS, b"{}", headers=headers, status=400), 400, "name")


def test_a_body_over_64_kib_is_413(client):
    body = json.dumps({"name": "x" * (64 * 1024)}).encode()
    res = client.post(EVENTS, body, headers=dict(ADMIN, **{"Content-Type": "application/json"}),
                      status=413)
    assert_problem(res, 413)


def test_a_body_of_exactly_64_kib_is_read(client):
    body = json.dumps({"name": "x"}).encode()
    body += b" " * (64 * 1024 - len(body))
    res = client.post(EVENTS, body, headers=dict(ADMIN, **{"Content-Type": "application/json"}),
                      status=400)
    assert_problem(res, 400, "location")


@pytest.mark.parametrize("body", [b"{", b"{'name': 1}", b"NaN", b'{"price": Infinity}', b"\xff",
                                  b"", b"[1, 2"])
def test_malformed_json_is_400(client, body):
    res = client.post(EVENTS, body, headers=dict(ADMIN, **{"Content-Type": "application/json"}),
                      status=400)
    assert_problem(res, 400)


@pytest.mark.parametrize("value", [[], "text", 3, None, True])
def test_a_body_that_is_not_an_object_is_400(client, value):
    assert_problem(client.post_json(EVENTS, value, headers=ADMIN, status=400), 400)


def test_deeply_nested_json_is_400_not_a_crash(client):
    body = b"[" * 100_000 + b"]" * 100_000
    res = client.post(EVENTS, body[:60_000], headers=dict(ADMIN, **{
        "Content-Type": "application/json"}), status=400)
    assert_problem(res, 400)


class BrokenStore(SQLiteStore):
    """The real sqlite store with one method broken, as a bug would break it."""

    def get_event(self, event_id, cancelled_too=False):
        raise RuntimeError("SELECT secret FROM somewhere failed")


def test_an_unexpected_exception_is_a_generic_500_and_logged(config, tmp_path, caplog):
    app = webtest.TestApp(museum.create_app(config, store=BrokenStore(str(tmp_path / "db")),
                                            clock=lambda: NOW))
    with caplog.at_level(logging.ERROR, logger="museum"):
        res = app.get(f"{EVENTS}/3fa85f64-5717-4562-b3fc-2c963f66afa6", headers=ADMIN,
                      status=500)
    body = assert_problem(res, 500)
    assert "SELECT" not in res.text and "Traceback" not in res.text
    assert body["detail"] == "Something went wrong on our side; it has been logged."
    assert "RuntimeError: SELECT secret" in caplog.text


def test_a_locked_database_answers_503_and_writes_nothing(config, tmp_path, monkeypatch):
    monkeypatch.setattr("storage.sqlite.BUSY_TIMEOUT_MS", 200)
    path = str(tmp_path / "museum.sqlite3")
    app = webtest.TestApp(museum.create_app(config, store=storage.open_store(path),
                                            clock=lambda: NOW))
    with write_locked(path) as held:  # another writer holds the lock past the busy timeout
        res = app.post_json(EVENTS, {"name": "A", "location": "B", "eventDescription": "C",
                                     "dates": ["2026-12-01"], "price": 1},
                            headers=ADMIN, status=503)
        assert_problem(res, 503)
        assert res.headers["Retry-After"]
        assert held.execute("SELECT count(*) FROM events").fetchone()[0] == 0


def test_health_is_503_while_the_database_is_gone_and_recovers(config, tmp_path):
    directory = tmp_path / "volume"
    directory.mkdir()
    store = storage.open_store(str(directory / "museum.sqlite3"))
    app = webtest.TestApp(museum.create_app(config, store=store, clock=lambda: NOW))
    store.close()
    directory.rename(tmp_path / "unmounted")
    assert_problem(app.get("/healthz", status=503), 503)
    (tmp_path / "unmounted").rename(directory)
    assert app.get("/healthz", status=200).json == {**museum.Health.ANSWER,
                                                   "outbox": {"failed": 0, "oldest": None}}


def test_security_headers_on_json_answers(client):
    res = client.get("/v1.1/museum-hours", headers=ADMIN, status=200)
    assert res.headers["X-Content-Type-Options"] == "nosniff"
    assert res.headers["Cache-Control"] == "no-store"
    res = client.get("/nowhere", status=404)
    assert res.headers["Cache-Control"] == "no-store"
