"""Webhooks: a receiver's URL checked and its secret made (`museum add-webhook`), and one
delivery signed and handed to its receiver, for the outbox's sender.

Signed as Standard Webhooks 1.0 signs (https://www.standardwebhooks.com/): headers
`webhook-id` (the outbox row's id: the same on every attempt, so a receiver recognises a
resend after a crash), `webhook-timestamp` (seconds since the epoch, of this attempt) and
`webhook-signature`, `v1,` and the base64 HMAC-SHA256 over `id.timestamp.body` keyed with the
receiver's secret (`whsec_` and its base64 bytes). The body is stored with the change, so
every attempt sends the same bytes.

An answer 2xx within the timeout is success; 410 Gone disables the receiver; anything else
is tried again with the outbox's backoff. No server-side request forgery: the receiver's
name is resolved once per delivery, every address it resolves to must be public unless
`[webhooks] allow_private`, and the connection goes to the address checked (with TLS
verified against the name), so a second, rebinding answer of its DNS is never asked.
"""

import base64
import hashlib
import hmac
import http.client
import ipaddress
import json
import secrets
import socket
from urllib.parse import urlsplit

from museum_http import rfc3339
from museum_openapi import UUID_SCHEMA, ref
from museum_vocabulary import DESK_PAYMENTS

SECRET_PREFIX = "whsec_"
SECRET_BYTES = 24  # 192 random bits, as the Standard Webhooks libraries make them
TIMEOUT = 10  # seconds a receiver has to connect and answer, each step
SCHEMES = {"http": http.client.HTTPConnection, "https": http.client.HTTPSConnection}


class WebhookFailed(Exception):
    """The receiver did not take the delivery (its answer, or why it was not reached): the
    outbox tries again later."""


class ReceiverGone(Exception):
    """The receiver answered 410 Gone, or was removed or disabled: this delivery fails now,
    and no other is sent to it."""


class AddressRefused(ValueError):
    """A receiver's URL that may not be used: not http(s), unresolvable, or private."""


def new_secret():
    """A receiver's signing secret, `whsec_` and the base64 of random bytes."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode()


def signature(secret, message_id, timestamp, body):
    """The `webhook-signature` of `body` (bytes) sent as `message_id` at `timestamp`."""
    key = base64.b64decode(secret.removeprefix(SECRET_PREFIX))
    signed = f"{message_id}.{timestamp}.".encode() + body
    return "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()


def checked_address(url, allow_private):
    """The address to connect to for `url`: its name resolved once, each address it has
    public unless `allow_private`. `AddressRefused` saying why otherwise."""
    parts = urlsplit(url)
    if parts.scheme not in SCHEMES or not parts.hostname:
        raise AddressRefused(f"{url}: a receiver's URL is http:// or https:// with a host")
    try:
        found = socket.getaddrinfo(parts.hostname, parts.port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as error:
        raise AddressRefused(f"{parts.hostname}: cannot be resolved ({error})") from None
    addresses = [ipaddress.ip_address(entry[4][0].split("%")[0]) for entry in found]
    private = [address for address in addresses if not address.is_global]
    if private and not allow_private:
        raise AddressRefused(
            f"{parts.hostname} resolves to {private[0]}, a loopback, private or link-local "
            f"address: refused unless [webhooks] allow_private = true")
    return str(addresses[0])


def deliver(message, receiver, allow_private, now):
    """Send the outbox `message` (kind "webhook") to `receiver` (the store's webhook, or
    None when removed) at `now` (an aware datetime); return its answer, such as "204 No
    Content". `WebhookFailed` or `ReceiverGone` otherwise."""
    if receiver is None or receiver["disabledAt"]:
        raise ReceiverGone("not sent: the receiver was removed or disabled")
    try:
        address = checked_address(receiver["url"], allow_private)
    except AddressRefused as refusal:
        raise WebhookFailed(str(refusal)) from None
    body = _body(message["payload"])
    timestamp = str(int(now.timestamp()))
    headers = {"Content-Type": "application/json", "User-Agent": "museum-webhooks",
               "webhook-id": message["messageId"], "webhook-timestamp": timestamp,
               "webhook-signature": signature(receiver["secret"], message["messageId"],
                                              timestamp, body)}
    status, reason = _post(receiver["url"], address, headers, body)
    answer = f"{status} {reason}"
    if status == 410:
        raise ReceiverGone(f"{answer} at {rfc3339(now)}: the receiver asked for no more")
    if not 200 <= status < 300:
        raise WebhookFailed(answer)
    return answer


def _body(payload):
    """The bytes sent: the stored {"type", "timestamp", "data"}, compact."""
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()


def _post(url, address, headers, body):
    """POST `body` to `url`, connected to `address` (its name's checked address); the
    status and reason of the answer, whose body is read and dropped."""
    parts = urlsplit(url)
    connection = SCHEMES[parts.scheme](parts.hostname, parts.port, timeout=TIMEOUT)
    # Connect to the checked address, not to what the name resolves to by then; TLS still
    # verifies the certificate against the name (HTTPSConnection's server_hostname).
    connection._create_connection = lambda where, *more: socket.create_connection(
        (address, where[1]), *more)
    path = parts.path or "/"
    try:
        connection.request("POST", f"{path}?{parts.query}" if parts.query else path,
                           body=body, headers=headers)
        answer = connection.getresponse()
        answer.read(64 * 1024)
        return answer.status, answer.reason
    except (OSError, http.client.HTTPException) as error:
        raise WebhookFailed(f"{type(error).__name__}: {error}") from error
    finally:
        connection.close()


# -- the description ---------------------------------------------------------------------

_TIME = {"type": "string", "format": "date-time"}
_USER = {"type": "string", "description": "The user who did it."}
_IDS = {"type": "array", "items": UUID_SCHEMA}


def _object(**properties):
    return {"type": "object", "required": list(properties), "properties": properties}


_ORDER = {"orderId": {"type": "string"}, "ticketIds": _IDS}
_EVENT_GONE = {"allOf": [ref("schemas", "SpecialEvent"), _object(cancelled={"const": True})]}
# Each type of change: the operationId and summary of its delivery, and its "data". The
# first is the Redocly Museum API's own (1.2.0), a new event as read.
DELIVERIES = {
    "event.published": ("publishNewEvent", "New special event added",
                        ref("schemas", "SpecialEvent")),
    "event.changed": ("publishEventChange", "Special event changed",
                      ref("schemas", "SpecialEvent")),
    "event.cancelled": ("publishEventCancellation", "Special event cancelled", _EVENT_GONE),
    "order.confirmed": ("publishOrderConfirmation", "Order confirmed",
                        _object(orderCode={"type": "string"}, **_ORDER)),
    "order.voided": ("publishOrderVoid", "Order voided", _object(**_ORDER, voidedAt=_TIME)),
    "order.paid": ("publishOrderPayment", "Order's payment due taken at the desk", _object(
        orderId={"type": "string"}, orderCode={"type": "string"},
        payment={"type": "string", "enum": list(DESK_PAYMENTS)}, paidAt=_TIME)),
    "ticket.voided": ("publishTicketVoid", "Ticket voided",
                      _object(ticketId=UUID_SCHEMA, voidedAt=_TIME)),
    "ticket.admitted": ("publishTicketAdmission", "Ticket admitted at the door",
                        _object(ticketId=UUID_SCHEMA, admittedAt=_TIME, admittedBy=_USER)),
    "ticket.admission-undone": ("publishAdmissionUndo", "Ticket's admission undone",
                                _object(ticketId=UUID_SCHEMA, undoneAt=_TIME,
                                        undoneBy=_USER)),
}
_SIGNED = [
    ("webhook-id", "The delivery's id, the same on every attempt: a receiver that saw it "
     "already answers 2xx and does nothing more."),
    ("webhook-timestamp", "When this attempt was sent, in seconds since the epoch: refuse "
     "one more than a few minutes from your clock."),
    ("webhook-signature", "`v1,` and the base64 HMAC-SHA256 of `id.timestamp.body` keyed "
     "with the receiver's secret (the bytes of the base64 after `whsec_`).")]
_ANSWERS = {
    "200": {"description": f"Any 2xx within {TIMEOUT} seconds: received."},
    "410": {"description": "The receiver is gone: it is disabled and gets nothing more "
                           "(`museum webhooks` shows it)."},
    "default": {"description": "Anything else, or no answer in time: sent again, with the "
                               "same `webhook-id`, after 1, 5, 10, 20 and 30 minutes, then "
                               "hourly for up to 3 days."}}


def described():
    """The OpenAPI document's `webhooks`: what a receiver registered with `museum
    add-webhook` is sent, one POST per type of change, signed as Standard Webhooks 1.0
    signs."""
    return {event_type: {"post": {
        "operationId": operation_id, "summary": summary, "tags": ["Webhooks"],
        "description": f"Sent to each receiver of `{event_type}` once the change commits. "
                       "Verify the signature before reading the body (docs/email.md).",
        "security": [],
        "parameters": [{"name": name, "in": "header", "required": True,
                        "description": meaning, "schema": {"type": "string"}}
                       for name, meaning in _SIGNED],
        "requestBody": {"required": True, "content": {"application/json": {"schema": _object(
            type={"const": event_type}, timestamp={**_TIME, "description": "When the "
                                                   "change was made."}, data=data)}}},
        "responses": _ANSWERS}}
        for event_type, (operation_id, summary, data) in DELIVERIES.items()}
