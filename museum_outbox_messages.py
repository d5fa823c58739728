"""The outbox's messages for admins over HTTP (`/v1.1/outbox`): the mails and webhook
deliveries kept, listed by state (the desk page shows the failed ones), one sent again or
dropped. The same store methods as `museum outbox --retry/--drop`; museum_outbox sends.
A mail's recipient is a buyer's address, personal data: every operation is the admin's,
and the messages go with the contacts they hold when museum_privacy erases them.
"""

import contextlib
import functools

import storage
from museum_http import BAD_QUERY, Problem, json_response, parse_query, rfc3339
from museum_openapi import UUID_SCHEMA, Answer, Operation, query
from museum_validation import Validator, path_uuid
from museum_vocabulary import ADMIN_ROLE, MESSAGE_BUSY, MESSAGE_STATES

LIST_MAX = 100  # messages listed at once, the newest first
# What a message shows: who it goes to and how its sending went, not its payload.
SHOWN = ("messageId", "kind", "target", "state", "attempts", "lastAnswer", "createdAt",
         "nextAttemptAt", "sentAt")
_TIME = {"type": ["string", "null"], "format": "date-time"}
MESSAGE_SCHEMA = {"type": "object", "required": list(SHOWN), "properties": {
    "messageId": UUID_SCHEMA,
    "kind": {"type": "string", "enum": ["email", storage.WEBHOOK_MESSAGE],
             "description": "A mail to a buyer, or a webhook delivery."},
    "target": {"type": "string", "description": "The mail's address or the receiver's URL."},
    "state": {"type": "string", "enum": list(MESSAGE_STATES)},
    "attempts": {"type": "integer", "minimum": 0},
    "lastAnswer": {"type": ["string", "null"], "description": "What the receiver or the "
                   "sender said at the last attempt: the error of a failed message."},
    "createdAt": {**_TIME, "type": "string", "description": "When it was queued."},
    "nextAttemptAt": {**_TIME, "description": "When it is due (queued), or when the claim of "
                      "its last attempt ended."},
    "sentAt": _TIME}}
MESSAGE_ID = {**query("messageId", "The message's id.", UUID_SCHEMA,
                      "6f1c2b7e-0d3a-4e5f-9a8b-1c2d3e4f5a6b", True), "in": "path"}


def shown(message):
    return {name: message[name] for name in SHOWN}


class OutboxMessages:
    """The outbox's messages, the newest first; `state=failed` those given up on."""

    needed_roles = {"GET": ADMIN_ROLE}
    described = {"get": Operation("listOutboxMessages", "Outbox", "The outbox's messages", (
        query("state", "Only the messages in this state.",
              {"type": "string", "enum": list(MESSAGE_STATES)}, "failed"),
        query("limit", f"At most this many (default and most: {LIST_MAX}).",
              {"type": "integer", "minimum": 1, "maximum": LIST_MAX}, 20)),
        {200: Answer("The messages, the newest first.",
                     {"type": "array", "items": MESSAGE_SCHEMA})})}

    def __init__(self, store):
        self.store = store

    def on_get(self, req, resp):
        validator = Validator()
        state = parse_query(req, validator, "state", functools.partial(
            Validator.choice, choices=MESSAGE_STATES), None)
        limit = parse_query(req, validator, "limit", functools.partial(
            Validator.integer, low=1, high=LIST_MAX), LIST_MAX)
        validator.raise_if_invalid(BAD_QUERY)
        json_response(resp, [shown(message)
                             for message in self.store.list_messages(state, limit)])


class OutboxMessage:
    """One message, dropped: it is never sent."""

    needed_roles = {"DELETE": ADMIN_ROLE}
    described = {"delete": Operation("dropOutboxMessage", "Outbox", "Drop a message",
                                     (MESSAGE_ID,), {204: Answer("Dropped.", None),
                                                     404: "NotFound", 409: "MessageBusy"})}

    def __init__(self, store):
        self.store = store

    def on_delete(self, req, resp, message_id):
        with busy_as_conflict():
            self.store.drop_message(path_uuid(message_id, "messageId"))
        resp.status = 204


class OutboxRetry:
    """A queued or failed message sent again: due now, its attempts counted afresh."""

    needed_roles = {"POST": ADMIN_ROLE}
    described = {"post": Operation("retryOutboxMessage", "Outbox", "Send a message again",
                                   (MESSAGE_ID,), {
                                       200: Answer("Queued again, due now.", MESSAGE_SCHEMA),
                                       404: "NotFound", 409: "MessageBusy"})}

    def __init__(self, store, clock):
        self.store = store
        self.clock = clock

    def on_post(self, req, resp, message_id):
        with busy_as_conflict():
            message = self.store.retry_message(path_uuid(message_id, "messageId"),
                                               rfc3339(self.clock()))
        json_response(resp, shown(message))


@contextlib.contextmanager
def busy_as_conflict():
    """The store's refusal of a message being sent (or, to send again, sent) as a 409."""
    try:
        yield
    except storage.NotAllowed as refusal:
        raise Problem(409, MESSAGE_BUSY) from refusal
