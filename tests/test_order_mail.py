"""An order's one mail and the resends, through the real thing: the store queues an order's
mail in the transaction that confirms it, the sender hands it to a real SMTP server on
loopback, and the mail is read back as a mail program would (every ticket's PNG admitted at
the door, each visit's calendar entry read by `icalendar`); the resend operations queue
mails again, at most three an hour, for the buyer's account, the door and an admin."""

import re
import uuid

import icalendar
import pytest
import webtest

import museum
import museum_outbox
import museum_sales
import storage
from conftest import ADMIN, GATE, NOW, TODAY, VISITOR, Clock
from qr import read_qr
from test_outbox import (attachments, each_store, each_url,  # noqa: F401 (fixtures)
                         mail_config, smtp_server)
from ticketing import TICKETS, body, buy, fresh_code

ADMISSIONS = "/v1.1/admissions"
CREATED = "2026-11-22T12:00:00Z"


def an_order(status="confirmed", email="family@example.org", created_by="visitor"):
    return {"orderId": str(uuid.uuid4()), "orderCode": fresh_code("general"),
            "status": status, "channel": "web", "payment": None, "email": email,
            "phone": None, "createdAt": CREATED,
            "expiresAt": "2026-11-22T12:15:00Z" if status == "pending" else None,
            "createdBy": created_by}


def a_ticket(entry_time=None, category="adult", persons=1):
    return {"ticketId": str(uuid.uuid4()), "ticketType": "general", "ticketDate": TODAY,
            "eventId": None, "confirmationCode": fresh_code("general"),
            "email": "family@example.org", "phone": None, "price": 0, "currency": "EUR",
            "entryTime": entry_time, "category": category, "persons": persons,
            "soldBy": "visitor", "soldAt": CREATED}


@pytest.fixture
def mailing(config_text, store, smtp_server):  # noqa: F811 (the fixture imported)
    """(client, sender, mailbox, config, clock) with mail configured in `language`."""

    def make(language="en"):
        url, mailbox = smtp_server()
        config = mail_config(config_text.replace(
            "[museum]\n", f"[museum]\nname = Museum of Things\nlanguage = {language}\n"), url)
        clock = Clock()
        client = webtest.TestApp(museum.create_app(config, store=store, clock=clock),
                                 lint=True)
        return client, museum_outbox.Sender(config, store, clock), mailbox, config, clock

    return make


def order_mails(config):
    return museum_sales.order_mails(config, lambda: str(uuid.uuid4()), CREATED)


def test_a_confirmed_order_gets_one_mail_with_every_ticket_and_one_calendar_per_visit(
        mailing, store):
    client, sender, mailbox, config, _ = mailing()
    family = [a_ticket(category="adult"), a_ticket(category="child"), a_ticket()]
    order = store.create_order(an_order(), family, CREATED, on_confirmed=order_mails(config))
    [message] = store.list_messages()
    assert (message["orderId"], message["target"]) == (order["orderId"], "family@example.org")
    assert sender.send_due() == 1
    [mail] = mailbox.mails
    assert mail["Subject"] == f"Your 3 tickets for Museum of Things on {TODAY}"
    text = mail.get_body(("plain",)).get_content()
    assert all(ticket["confirmationCode"] in text for ticket in family)
    pngs = attachments(mail, "image/png")
    assert sorted(png.get_filename() for png in pngs) == sorted(
        f"{ticket['confirmationCode']}.png" for ticket in family)
    admitted = {client.post_json(ADMISSIONS, {"code": read_qr(png.get_content())},
                                 headers=GATE, status=201).json["ticketId"] for png in pngs}
    assert admitted == {ticket["ticketId"] for ticket in family}
    [calendar] = attachments(mail, "text/calendar")  # one visit: the same day, no slot
    [visit] = icalendar.Calendar.from_ical(calendar.get_payload(decode=True)).walk("VEVENT")
    assert visit["DTSTAMP"].dt == NOW
    assert all(ticket["confirmationCode"] in str(visit["DESCRIPTION"]) for ticket in family)


def test_two_slots_are_two_visits(mailing, store):
    _, sender, mailbox, config, _ = mailing()
    store.create_order(an_order(), [a_ticket("10:00"), a_ticket("11:00")], CREATED,
                       on_confirmed=order_mails(config))
    sender.send_due()
    assert len(attachments(mailbox.mails[0], "text/calendar")) == 2


def test_a_hold_sends_nothing_until_confirmed_and_once(mailing, store):
    _, sender, mailbox, config, _ = mailing()
    held = store.create_order(an_order("pending"), [a_ticket()], CREATED,
                              on_confirmed=order_mails(config))
    assert store.list_messages() == []
    store.confirm_order(held["orderId"], CREATED, on_confirmed=order_mails(config))
    store.confirm_order(held["orderId"], CREATED, on_confirmed=order_mails(config))
    assert len(store.list_messages()) == 1
    assert sender.send_due() == 1 and len(mailbox.mails) == 1


def test_an_order_without_an_email_queues_nothing(mailing, store):
    _, _, _, config, _ = mailing()
    store.create_order(an_order(email=None), [a_ticket()], CREATED,
                       on_confirmed=order_mails(config))
    assert store.list_messages() == []


def test_an_order_voided_before_its_mail_is_sent_is_not_mailed(mailing, store):
    _, sender, mailbox, config, _ = mailing()
    order = store.create_order(an_order(), [a_ticket()], CREATED,
                               on_confirmed=order_mails(config))
    store.void_order(order["orderId"], CREATED)
    sender.send_due()
    assert mailbox.mails == []
    assert store.list_messages()[0]["lastAnswer"] == "not sent: its tickets were voided"


def test_a_ticket_voided_before_its_mail_is_sent_is_not_mailed(mailing, store):
    client, sender, mailbox, _, _ = mailing()
    ticket = buy(client, body(ticketDate=TODAY), headers=VISITOR).json
    client.delete(f"{TICKETS}/{ticket['ticketId']}", headers=ADMIN, status=204)
    sender.send_due()
    assert mailbox.mails == []


def test_an_order_s_mail_is_erased_with_its_contacts(mailing, store):
    _, _, _, config, _ = mailing()
    store.create_order(an_order(), [a_ticket()], CREATED, on_confirmed=order_mails(config))
    store.erase_contacts("2099-01-01", 10)
    assert store.list_messages() == []


def test_a_mail_in_german(mailing, store):
    client, sender, mailbox, _, _ = mailing("de")
    ticket = buy(client, body(ticketDate=TODAY), headers=VISITOR).json
    sender.send_due()
    [mail] = mailbox.mails
    assert mail["Subject"] == f"Ihr Ticket für Museum of Things am {TODAY}"
    text = mail.get_body(("plain",)).get_content()
    assert "Eintritt" in text and f"Code: {ticket['confirmationCode']}" in text


# -- resending ---------------------------------------------------------------------------------

def resend(client, path, headers=VISITOR, status=202):
    return client.post(f"/v1.1/{path}/resend", headers=headers, status=status)


def test_a_ticket_is_resent_at_most_three_times_an_hour_and_202_each_time(mailing, store):
    client, sender, mailbox, _, clock = mailing()
    ticket = buy(client, body(ticketDate=TODAY), headers=VISITOR).json
    for _ in range(4):
        assert resend(client, f"tickets/{ticket['ticketId']}").body == b""
    assert len(store.list_messages()) == 3  # the sale's own and two resends
    assert sender.send_due() == 3 and len(mailbox.mails) == 3
    clock.advance(hours=1)
    resend(client, f"tickets/{ticket['ticketId']}", headers=GATE)
    assert sender.send_due() == 1


def test_an_order_is_resent_to_its_buyer_by_the_door_and_an_admin(mailing, store):
    client, sender, mailbox, config, _ = mailing()
    order = store.create_order(an_order(), [a_ticket(), a_ticket()], CREATED,
                               on_confirmed=order_mails(config))
    resend(client, f"orders/{order['orderId']}", headers=VISITOR)
    resend(client, f"orders/{order['orderId']}", headers=ADMIN)
    assert sender.send_due() == 3
    assert {len(attachments(mail, "image/png")) for mail in mailbox.mails} == {2}


def test_another_account_s_order_or_an_unknown_ticket_is_404(mailing, store):
    client, _, _, _, _ = mailing()
    order = store.create_order(an_order(created_by="shop"), [a_ticket()], CREATED)
    resend(client, f"orders/{order['orderId']}", status=404)
    resend(client, f"tickets/{uuid.uuid4()}", status=404)
    resend(client, "tickets/not-a-uuid", status=400)
    assert store.list_messages() == []


def test_without_mail_a_resend_queues_nothing(client, store):
    ticket = buy(client, body(), headers=VISITOR).json
    resend(client, f"tickets/{ticket['ticketId']}")
    assert store.list_messages() == []


def test_a_resend_needs_credentials(client):
    client.post(f"{TICKETS}/{uuid.uuid4()}/resend", status=401)


def test_resends_are_counted_per_ticket_and_order_and_checked_for_their_buyer(each_store):
    """The store's rule on both backends: three in the hour, the buyer's own, nothing for a
    void ticket."""
    store = each_store
    ticket = a_ticket()
    store.create_ticket(ticket)
    order = store.create_order(an_order(), [a_ticket()], CREATED)
    mail = {"kind": "email", "payload": {}, "createdAt": CREATED}
    hour_ago = "2026-11-22T11:00:00Z"

    def again(user="visitor", **named):
        return store.queue_mail_again({**mail, **named, "messageId": str(uuid.uuid4())},
                                      hour_ago, 3, user)

    assert [again(ticketId=ticket["ticketId"]) for _ in range(4)] == [True] * 3 + [False]
    assert again(orderId=order["orderId"], user=None)
    with pytest.raises(storage.NotFound):
        again(orderId=order["orderId"], user="shop")
    assert {message["target"] for message in store.list_messages()} == {
        "family@example.org"}
    store.void_ticket(order["tickets"][0]["ticketId"], CREATED)
    assert not again(ticketId=order["tickets"][0]["ticketId"])


def test_each_tickets_page_is_linked_in_the_mail_and_opens_without_credentials(
        config_text, store, smtp_server):  # noqa: F811 (the fixture imported)
    url, mailbox = smtp_server()
    config = mail_config(config_text.replace(
        "[museum]\n", "[server]\npublic_url = https://tickets.museum.example\n[museum]\n"), url)
    client = webtest.TestApp(museum.create_app(config, store=store, clock=Clock()), lint=True)
    family = [a_ticket(category="adult"), a_ticket(category="child")]
    store.create_order(an_order(), family, CREATED, on_confirmed=order_mails(config))
    assert museum_outbox.Sender(config, store, Clock()).send_due() == 1
    [mail] = mailbox.mails
    text = mail.get_body(("plain",)).get_content()
    links = re.findall(r"Ticket page: (https://tickets\.museum\.example/t/\S+)", text)
    assert len(links) == 2
    html = mail.get_body(("html",)).get_content()
    assert all(f'<a href="{link}">' in html for link in links)
    for link in links:
        page = client.get(link.removeprefix("https://tickets.museum.example"), status=200)
        assert any(ticket["confirmationCode"] in page.text for ticket in family)
