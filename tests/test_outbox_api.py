"""The outbox's messages over HTTP, for admins (`/v1.1/outbox`): the failed ones listed
with their recipient and last error, one sent again or dropped, as `museum outbox` does on
the same store methods. A mail's address is personal data: no other role reads it, and
the contacts' eraser takes the messages with it."""

import pytest

from conftest import ADMIN, DESK, GATE, VISITOR, assert_problem

OUTBOX = "/v1.1/outbox"
TICKET_ID = "6b0c7c4e-1f7a-4a51-9d43-0c8f1f7e2a10"
MESSAGE_ID = "0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9"
UNKNOWN_ID = "00000000-0000-4000-8000-000000000000"


def failed_mail(store, answer="550 5.1.1 no such user"):
    """A ticket's mail, tried once and given up on with `answer`."""
    store.create_ticket(
        {"ticketId": TICKET_ID, "ticketType": "general", "ticketDate": "2026-11-24",
         "confirmationCode": "ticket-general-0a1b2c-3d4e5", "email": "ada@example.org",
         "price": 0, "currency": "EUR"},
        messages=[{"messageId": MESSAGE_ID, "kind": "email", "target": "ada@example.org",
                   "payload": {"ticketId": TICKET_ID}, "ticketId": TICKET_ID,
                   "createdAt": "2026-11-22T11:00:00Z"}])
    store.claim_messages("2026-11-22T11:00:00Z", "2026-11-22T11:05:00Z", 10)
    store.settle_message(MESSAGE_ID, 1, "failed", answer, "2026-11-22T11:00:01Z")


def test_an_admin_reads_the_failed_messages_with_their_recipient_and_error(client, store):
    failed_mail(store)
    listed = client.get(OUTBOX, params={"state": "failed"}, headers=ADMIN, status=200).json
    assert listed == [{"messageId": MESSAGE_ID, "kind": "email", "target": "ada@example.org",
                       "state": "failed", "attempts": 1,
                       "lastAnswer": "550 5.1.1 no such user",
                       "createdAt": "2026-11-22T11:00:00Z",
                       "nextAttemptAt": "2026-11-22T11:05:00Z", "sentAt": None}]
    assert client.get(OUTBOX, params={"state": "queued"}, headers=ADMIN, status=200).json == []
    assert client.get(OUTBOX, params={"limit": "1"}, headers=ADMIN, status=200).json == listed


def test_sending_again_queues_it_due_now_and_a_message_being_sent_is_left_alone(client,
                                                                                  store):
    failed_mail(store)
    retried = client.post(f"{OUTBOX}/{MESSAGE_ID}/retry", headers=ADMIN, status=200).json
    assert (retried["state"], retried["attempts"], retried["nextAttemptAt"]) == (
        "queued", 0, "2026-11-22T12:00:00Z")  # conftest's NOW
    assert store.outbox_summary()["failed"] == 0
    [claimed] = store.claim_messages("2026-11-22T12:00:00Z", "2026-11-22T12:05:00Z", 10)
    for refused in (client.post(f"{OUTBOX}/{MESSAGE_ID}/retry", headers=ADMIN, status=409),
                    client.delete(f"{OUTBOX}/{MESSAGE_ID}", headers=ADMIN, status=409)):
        assert_problem(refused, 409)
    assert store.list_messages()[0]["state"] == "sending"
    store.settle_message(MESSAGE_ID, claimed["attempts"], "failed", "554 not now",
                         "2026-11-22T12:00:01Z")
    client.delete(f"{OUTBOX}/{MESSAGE_ID}", headers=ADMIN, status=204)
    assert store.list_messages() == []
    assert_problem(client.delete(f"{OUTBOX}/{MESSAGE_ID}", headers=ADMIN, status=404), 404)


@pytest.mark.parametrize("method, path, status, field", [
    ("GET", f"{OUTBOX}?state=lost", 400, "state"),
    ("GET", f"{OUTBOX}?limit=101", 400, "limit"),
    ("POST", f"{OUTBOX}/not-a-uuid/retry", 400, "messageId"),
    ("POST", f"{OUTBOX}/{UNKNOWN_ID}/retry", 404, None),
    ("DELETE", f"{OUTBOX}/not-a-uuid", 400, "messageId"),
])
def test_bad_requests_are_refused(client, method, path, status, field):
    res = client.request(path, method=method, headers=ADMIN, status=status)
    assert_problem(res, status, field)


@pytest.mark.parametrize("headers", [DESK, GATE, VISITOR])
def test_only_an_admin_sees_or_touches_the_outbox(client, store, headers):
    failed_mail(store)
    assert "ada@example.org" not in client.get(OUTBOX, headers=headers, status=403).text
    client.post(f"{OUTBOX}/{MESSAGE_ID}/retry", headers=headers, status=403)
    client.delete(f"{OUTBOX}/{MESSAGE_ID}", headers=headers, status=403)
    assert store.list_messages()[0]["state"] == "failed"


def test_a_failed_mail_goes_with_the_contacts_it_holds(client, store):
    failed_mail(store)
    assert store.erase_contacts("2026-12-01", 10) == 1
    assert client.get(OUTBOX, headers=ADMIN, status=200).json == []
