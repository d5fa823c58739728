"""Pairing a door device without a key in any address, and door sessions without a kept
password: a one-time pairing code exchanged for the device's key in a POST (once, within
ten minutes, limited against guessing), a gate user's password exchanged for a device of
its own, and the sign-out that revokes it. Through the WSGI app on a real sqlite file, and
`museum add-device` as a command."""

import io
import re
import stat

import pytest
import segno
import webtest

import museum
import museum_devices
from commands import museum_command
from conftest import ADMIN, GATE, VISITOR, assert_problem, basic
from museum_vocabulary import GATE_ROLE, needs_role

PAIR = "/v1.1/devices/pair"
SESSION = "/v1.1/devices/session"
SUMMARY = "/v1.1/admissions/summary"
ADMISSIONS = "/v1.1/admissions"


@pytest.fixture
def clocked_client(store, config, clock):
    """A client on the test's movable clock."""
    return webtest.TestApp(museum.create_app(config, store=store, clock=clock), lint=True)


def paired_device(store, clock, name="door-north"):
    """A gate device added with a pairing code at the clock's now, as add-device adds it:
    its code."""
    code, pairing = museum_devices.new_pairing(clock())
    store.add_device(name, "gate", "key$" + "0" * 32 + "$" + "0" * 64, "2026-11-22T12:00:00Z",
                     pairing)
    return code


def pair(client, code, status=200, address="127.0.0.1"):
    return client.post_json(PAIR, {"code": code}, status=status,
                            extra_environ={"REMOTE_ADDR": address})


# -- pairing --------------------------------------------------------------------------------

def test_a_pairing_code_gives_the_device_a_key_once(clocked_client, store, clock):
    code = paired_device(store, clock)
    answer = pair(clocked_client, code)
    assert answer.headers["Cache-Control"] == "no-store"
    assert answer.json.keys() == {"name", "role", "key"}
    assert (answer.json["name"], answer.json["role"]) == ("door-north", "gate")
    device = basic("door-north", answer.json["key"])
    clocked_client.get(SUMMARY, headers=device, status=200)

    again = assert_problem(pair(clocked_client, code, 410), 410)
    assert again["detail"] == museum_devices.SPENT_CODE["used"]
    clocked_client.get(SUMMARY, headers=device, status=200)  # the key paired stays


def test_a_pairing_code_expires_after_ten_minutes(clocked_client, store, clock):
    code = paired_device(store, clock)
    clock.advance(minutes=10)
    expired = assert_problem(pair(clocked_client, code, 410), 410)
    assert expired["detail"] == museum_devices.SPENT_CODE["expired"]


def test_a_code_of_a_revoked_device_is_unknown(clocked_client, store, clock):
    code = paired_device(store, clock)
    store.revoke_device("door-north", "2026-11-22T12:01:00Z")
    assert assert_problem(pair(clocked_client, code, 404), 404)["detail"] == \
        museum_devices.UNKNOWN_CODE


@pytest.mark.parametrize("body, field", [({}, "code"), ({"code": 12}, "code"),
                                         ({"code": "x" * 65}, "code"),
                                         ({"code": "a", "key": "b"}, "key")])
def test_a_malformed_pairing_request_names_its_field(clocked_client, body, field):
    assert_problem(clocked_client.post_json(PAIR, body, status=400), 400, field)


def test_guessed_codes_make_the_address_wait_and_no_other(clocked_client, store, clock):
    code = paired_device(store, clock)
    for number in range(museum_devices.PAIRING_FAILURES):
        pair(clocked_client, f"guess-{number}", 404, address="192.0.2.7")
    limited = pair(clocked_client, code, 429, address="192.0.2.7")
    assert assert_problem(limited, 429)["detail"] == museum_devices.PAIRING_LIMITED
    assert 1 <= int(limited.headers["Retry-After"]) <= museum_devices.PAIRING_LOCKOUT
    assert pair(clocked_client, code, address="192.0.2.8").json["name"] == "door-north"


# -- sessions of gate users --------------------------------------------------------------------

def test_a_gate_password_becomes_a_device_session_revoked_at_sign_out(clocked_client, store):
    started = clocked_client.post(SESSION, headers=GATE, status=201).json
    assert started["name"] == "gate-20261122-120000" and started["role"] == "gate"
    session = basic(started["name"], started["key"])
    admitted = clocked_client.post_json(ADMISSIONS, {"confirmationCode":
                                                     "ticket-general-abcdef-12345"},
                                        headers=session, status=404)
    assert admitted.json["result"] == "unknown"
    listed = [(device["name"], device["revokedAt"]) for device in store.list_devices()]
    assert listed == [("gate-20261122-120000", None)]

    # A second sign-in within the same second is a device of its own.
    other = clocked_client.post(SESSION, headers=GATE, status=201).json
    assert re.fullmatch(r"gate-20261122-120000-[0-9a-f]{4}", other["name"])

    clocked_client.delete(SESSION, headers=session, status=204)
    assert_problem(clocked_client.get(SUMMARY, headers=session, status=401), 401)
    clocked_client.get(SUMMARY, headers=basic(other["name"], other["key"]), status=200)


def test_a_device_key_signs_in_as_it_is(clocked_client, store, clock):
    key = pair(clocked_client, paired_device(store, clock)).json["key"]
    device = basic("door-north", key)
    clocked_client.post(SESSION, headers=device, status=204)
    assert [each["name"] for each in store.list_devices()] == ["door-north"]
    # Signing out revokes the paired device too: its key was only in that browser.
    clocked_client.delete(SESSION, headers=device, status=204)
    assert_problem(clocked_client.get(SUMMARY, headers=device, status=401), 401)


@pytest.mark.parametrize("headers", [ADMIN, VISITOR], ids=["admin", "visitor"])
def test_an_admin_or_a_visitor_cannot_sign_in_at_the_door(clocked_client, store, headers):
    for method in ("POST", "DELETE"):
        refused = clocked_client.request(SESSION, method=method, headers=headers, status=403)
        assert assert_problem(refused, 403)["detail"] == needs_role(GATE_ROLE)
    assert store.list_devices() == []


def test_a_password_revokes_nothing(clocked_client):
    refused = clocked_client.delete(SESSION, headers=GATE, status=409)
    assert assert_problem(refused, 409)["detail"] == museum_devices.NOT_A_STORED_DEVICE


def test_a_session_name_holds_only_a_device_names_characters():
    from datetime import datetime, timezone

    moment = datetime(2027, 10, 29, 9, 14, 5, tzinfo=timezone.utc)
    assert museum_devices.session_name("Anna Weiß", moment) == "Anna-Wei--20271029-091405"
    assert museum_devices.session_name("_x" * 40, moment).startswith("x_x")


# -- museum add-device --------------------------------------------------------------------------

def test_add_device_prints_a_one_time_pairing_link_and_no_key(tmp_path, config_text):
    assert museum_command(tmp_path, config_text, "init").status == 0
    qr = tmp_path / "pair.png"
    qr.write_bytes(b"")
    qr.chmod(0o644)  # an older file in its place keeps no wider mode
    done = museum_command(tmp_path, config_text, "add-device", "door-north", "--role",
                          "gate", "--qr", str(qr), "--url", "https://museum.example")
    assert done.status == 0, done.err
    [link] = re.findall(r"^  (https://museum\.example/scan#pair=[A-Za-z0-9_-]{22})$",
                        done.out, re.MULTILINE)
    assert "key=" not in done.out and not re.search(r"^  [A-Za-z0-9_-]{32}$", done.out,
                                                     re.MULTILINE)
    assert stat.S_IMODE(qr.stat().st_mode) == 0o600
    expected = io.BytesIO()
    segno.make_qr(link).save(expected, kind="png", scale=8)
    assert qr.read_bytes() == expected.getvalue()

    listed = museum_command(tmp_path, config_text, "devices")
    assert re.search(r"^door-north +gate ", listed.out, re.MULTILINE), listed.out


def test_add_device_gives_a_visitor_device_its_key_and_no_pairing_qr(tmp_path, config_text):
    assert museum_command(tmp_path, config_text, "init").status == 0
    refused = museum_command(tmp_path, config_text, "add-device", "web-shop", "--role",
                             "visitor", "--qr", str(tmp_path / "pair.png"))
    assert refused.status == 2 and "--qr is for a gate device" in refused.err
    done = museum_command(tmp_path, config_text, "add-device", "web-shop", "--role",
                          "visitor")
    assert done.status == 0, done.err
    assert re.search(r"^  [A-Za-z0-9_-]{32}$", done.out, re.MULTILINE)
    assert "#pair=" not in done.out
