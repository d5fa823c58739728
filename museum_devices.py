"""The door's devices signing in without a key in any address or a password kept.

- Pairing: `museum add-device` records a gate device with a one-time pairing code (128
  random bits, kept as a digest, valid PAIRING_MINUTES, usable once) and prints the link
  `/scan#pair=CODE`. The scanner page sends the code in `POST /v1.1/devices/pair`, which
  needs no credentials, and gets the device's name and a key made at that moment: the key
  never appears in an address, a history or a log. Unknown, used and expired codes count
  toward a limit per client address (`museum_auth.FailureCounts`).
- Sessions: a gate user's password is exchanged once, in `POST /v1.1/devices/session`,
  for a device of its own (named for the user and the moment, listed by `museum devices`,
  revoked like any device), whose key the page keeps instead of the password. Only the
  gate role signs in at the door: an admin's or a visitor's credentials are refused there.
  `DELETE /v1.1/devices/session` revokes the device a page signed in as (its sign-out).
"""

import hashlib
import math
import re
import secrets
from datetime import timedelta

import storage
from museum_auth import FailureCounts, client_key
from museum_credentials import hash_key, is_key_digest, new_device_key
from museum_http import Problem, json_response, read_json, rfc3339
from museum_openapi import Answer, Operation, trimmed_text
from museum_validation import Field, Validator, check_fields, checked_by
from museum_vocabulary import DESK_ROLE, GATE_ROLE, VISITOR_ROLE

PAIRING_MINUTES = 10
PAIRING_CODE_BYTES = 16  # 128 bits, 22 characters of URL-safe base64
PAIRING_CODE_LIMIT = 64  # characters a body's code may have at all
# Unknown, used or expired codes from one client address before it waits: a person who
# mistypes a link a few times is never held up, a guesser gets nowhere (2^128 codes).
PAIRING_FAILURES, PAIRING_WINDOW, PAIRING_LOCKOUT = 10, 60, 60

PAIRING_FIELDS = {
    "code": Field(checked_by(Validator.text, PAIRING_CODE_LIMIT), trimmed_text(
        PAIRING_CODE_LIMIT, "The one-time pairing code, from the link's `#pair=` "
        "fragment. "), "Xq3v9Jd0bq1mZr2Lw8Ya4g", True),
}

UNKNOWN_CODE = ("This pairing code is unknown: check the link, or have a new one made "
                "(museum add-device).")
SPENT_CODE = {
    "used": "This pairing code was used already: a code pairs one device, once. Have a new "
            "one made (museum revoke-device, then museum add-device).",
    "expired": f"This pairing code expired: a code is valid for {PAIRING_MINUTES} minutes. "
               "Have a new one made (museum revoke-device, then museum add-device).",
}
PAIRING_LIMITED = "Too many unknown pairing codes from this address; wait and retry."
NOT_A_STORED_DEVICE = ("These credentials are not a device of the database: nothing was "
                       "revoked (a user of [users] is removed from the config).")


def new_pairing_code():
    return secrets.token_urlsafe(PAIRING_CODE_BYTES)


def pairing_digest(code):
    """What the database keeps of a pairing code. Unsalted, as a token's digest is: 128
    random bits need no slow hash, and the code is found by its digest."""
    return hashlib.sha256(code.encode("utf-8", "surrogatepass")).hexdigest()


def new_pairing(now):
    """(code, (its digest, when it expires as RFC 3339 UTC text)) for a device added at
    `now`; the second is Store.add_device's `pairing`."""
    code = new_pairing_code()
    return code, (pairing_digest(code), rfc3339(now + timedelta(minutes=PAIRING_MINUTES)))


def pairing_path(code):
    """The scanner page's address that pairs with `code`, from the service's root."""
    return f"/scan#pair={code}"


def session_name(user_name, moment):
    """The name of a device session of `user_name` started at `moment` (UTC): the user's
    name (its characters a device name may hold), then the date and time."""
    stem = re.sub(r"[^A-Za-z0-9._-]", "-", user_name).lstrip("._-")[:40] or "gate"
    return f"{stem}-{moment:%Y%m%d-%H%M%S}"


def device_key_answer(name, role, key):
    return {"name": name, "role": role, "key": key}


_KEY_ANSWER = {"type": "object", "required": ["name", "role", "key"], "properties": {
    "name": {"type": "string", "description": "The device's name: the user name it signs "
             "in with."},
    "role": {"type": "string", "enum": [GATE_ROLE, DESK_ROLE, VISITOR_ROLE]},
    "key": {"type": "string", "description": "The device's key: its password from now on, "
            "shown only in this answer (the database keeps its digest)."}}}


class DevicePairing:
    """A pairing code exchanged for its device's name and a new key, once."""

    auth_required = False
    described = {"post": Operation("pairDevice", "Door", "Pair a device with its one-time "
                                   "code", (), {
                                       200: Answer("The device's name, role and new key.",
                                                   "DeviceKey"),
                                       400: "BadRequest", 404: "UnknownPairingCode",
                                       410: "PairingCodeSpent", 429: "PairingLimited",
                                       503: "ServiceUnavailable"}, "PairingRequest")}

    def __init__(self, store, clock, failures=None):
        self.store = store
        self.clock = clock  # an aware datetime: now
        self.failures = failures or FailureCounts(PAIRING_FAILURES, PAIRING_WINDOW,
                                                  PAIRING_LOCKOUT)

    def on_post(self, req, resp):
        client = client_key(req.remote_addr)
        remaining = self.failures.locked_for(client)
        if remaining > 0:
            raise Problem(429, PAIRING_LIMITED,
                          headers={"Retry-After": str(math.ceil(remaining))})
        validator = Validator()
        code = check_fields(read_json(req), PAIRING_FIELDS, validator).get("code")
        validator.raise_if_invalid()
        key = new_device_key()
        try:
            device = self.store.pair_device(pairing_digest(code), hash_key(key),
                                            rfc3339(self.clock()))
        except storage.NotFound:
            self.failures.count(client)
            raise Problem(404, UNKNOWN_CODE) from None
        except storage.PairingSpent as spent:
            self.failures.count(client)
            raise Problem(410, SPENT_CODE[spent.why]) from None
        json_response(resp, device_key_answer(device["name"], device["role"], key))


class DeviceSession:
    """A staff device's sign-in (the door's, the desk's): a gate or desk user's password
    exchanged for a device of its own and of its role (its key answered once), a device's
    key taken as it is; and its end."""

    # The gate and desk roles only: the door's and the desk's pages sign in no admin (nor
    # visitor), whose powers a device left at the entrance or the desk has no need of.
    needed_roles = {"POST": (GATE_ROLE, DESK_ROLE), "DELETE": (GATE_ROLE, DESK_ROLE)}
    described = {
        "post": Operation("startDeviceSession", "Door", "Sign a door device in", (), {
            204: Answer("The credentials are a gate device's key already: they sign in "
                        "as they are.", None),
            201: Answer("A device session for the gate user: a new device, and its key.",
                        "DeviceKey")}),
        "delete": Operation("endDeviceSession", "Door", "Revoke the device signing in", (), {
            204: Answer("The device is revoked: its key signs in nowhere from now on.", None),
            409: "NotAStoredDevice"})}

    def __init__(self, store, clock):
        self.store = store
        self.clock = clock

    def on_post(self, req, resp):
        user = req.context.user
        if is_key_digest(user.password_hash):
            resp.status = 204
            return
        now = self.clock()
        key = new_device_key()
        name = session_name(user.name, now)
        try:
            self.store.add_device(name, user.role, hash_key(key), rfc3339(now))
        except storage.DeviceExists:  # a second session of the user within the second
            name = f"{name}-{secrets.token_hex(2)}"
            self.store.add_device(name, user.role, hash_key(key), rfc3339(now))
        json_response(resp, device_key_answer(name, user.role, key), 201)

    def on_delete(self, req, resp):
        user = req.context.user
        device = self.store.device(user.name)
        if device is None or device["keyDigest"] != user.password_hash:
            raise Problem(409, NOT_A_STORED_DEVICE)
        try:
            self.store.revoke_device(user.name, rfc3339(self.clock()))
        except storage.NotFound:
            pass  # revoked meanwhile, as asked
        resp.status = 204


# What museum_openapi describes of these operations, by name (museum.py hands them over).
DEVICE_FACTS = {"PAIRING_FIELDS": PAIRING_FIELDS, "PAIRING_MINUTES": PAIRING_MINUTES,
                "PAIRING_FAILURES": PAIRING_FAILURES, "PAIRING_WINDOW": PAIRING_WINDOW,
                "UNKNOWN_CODE": UNKNOWN_CODE, "SPENT_CODE": SPENT_CODE,
                "PAIRING_LIMITED": PAIRING_LIMITED,
                "NOT_A_STORED_DEVICE": NOT_A_STORED_DEVICE, "KEY_ANSWER": _KEY_ANSWER}
