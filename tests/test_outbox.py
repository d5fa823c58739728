"""The outbox through the real thing: a sale queues its mail in its own transaction, the
sender hands it to a real SMTP server on loopback (aiosmtpd), and the mail is read back as a
visitor's mail program would: the `email` parser, the attached PNG's QR admitted at the
door, the calendar file read by `icalendar`. A server that refuses, then accepts, gets the
mail exactly once; the backoff is waited out on the test's clock."""

import concurrent.futures
import email
import email.policy
import signal
import threading
import uuid
from datetime import timedelta

import icalendar
import pytest
import webtest
from aiosmtpd.controller import Controller

import museum
import museum_door
import museum_outbox
import storage
from commands import museum_command
from conftest import GATE, NOW, TODAY, VISITOR, Clock
from qr import read_qr
from serving import free_port, running_server, start_server, wait_until
from ticketing import TICKETS, UNKNOWN_ID, body, buy, open_days, query

ADMISSIONS = "/v1.1/admissions"


class Mailbox:
    """An SMTP server's handler keeping every mail it accepts; it answers `refusals` 554s
    before accepting."""

    def __init__(self, refusals=0):
        self.mails = []
        self.refusals = refusals

    async def handle_DATA(self, server, session, envelope):
        if self.refusals:
            self.refusals -= 1
            return "554 5.7.1 not now"
        self.mails.append(email.message_from_bytes(envelope.content,
                                                  policy=email.policy.default))
        return "250 2.0.0 queued"


@pytest.fixture
def smtp_server():
    """Start an SMTP server on loopback with a Mailbox; yields (its url, the mailbox)."""
    started = []

    def start(refusals=0):
        mailbox = Mailbox(refusals)
        controller = Controller(mailbox, hostname="127.0.0.1", port=free_port())
        controller.start()
        started.append(controller)
        return f"smtp://127.0.0.1:{controller.port}", mailbox

    yield start
    for controller in started:
        controller.stop()


def mail_config(config_text, url, more=""):
    return museum.parse_config(
        config_text + f"[mail]\nurl = {url}\nfrom = tickets@museum.example.org\n"
        f"reply_to = desk@museum.example.org\n{more}", "test.ini")


@pytest.fixture
def mailing(config_text, store, smtp_server):
    """A client selling with mail configured, the sender on the same store and clock, and
    the SMTP server's mailbox."""

    def make(refusals=0):
        url, mailbox = smtp_server(refusals)
        config = mail_config(config_text.replace("[museum]\n", "[museum]\nname = Museum "
                                                 "of Things\n"), url)
        clock = Clock()
        client = webtest.TestApp(museum.create_app(config, store=store, clock=clock),
                                 lint=True)
        return client, museum_outbox.Sender(config, store, clock), mailbox, clock

    return make


def attachments(mail, content_type):
    return [part for part in mail.iter_attachments() if part.get_content_type() == content_type]


def test_a_ticket_bought_with_an_email_is_mailed_and_its_png_admits_at_the_door(mailing, store):
    client, sender, mailbox, _ = mailing()
    ticket = buy(client, body(ticketDate=TODAY, email="ada@example.org"),
                 headers=VISITOR).json
    assert [message["state"] for message in store.list_messages()] == ["queued"]
    assert sender.send_due() == 1
    [mail] = mailbox.mails
    assert (mail["To"], mail["From"], mail["Reply-To"]) == (
        "ada@example.org", "tickets@museum.example.org", "desk@museum.example.org")
    assert mail["Subject"] == f"Your ticket for Museum of Things on {TODAY}"
    text = mail.get_body(("plain",)).get_content()
    page = mail.get_body(("html",)).get_content()
    for shown in ("Museum of Things", TODAY, ticket["confirmationCode"], "General entry"):
        assert shown in text and shown in page
    [png] = attachments(mail, "image/png")
    assert png.get_filename() == f"{ticket['confirmationCode']}.png"
    scanned = client.post_json(ADMISSIONS, {"code": read_qr(png.get_content())},
                               headers=GATE, status=201)
    assert scanned.json["ticketId"] == ticket["ticketId"]
    [message] = store.list_messages()
    assert (message["state"], message["attempts"]) == ("sent", 1)
    assert sender.send_due() == 0 and len(mailbox.mails) == 1  # sent is never sent again


def test_the_calendar_file_is_rfc_5545(mailing):
    client, sender, mailbox, _ = mailing()
    ticket = buy(client, body(ticketDate=TODAY), headers=VISITOR).json
    sender.send_due()
    [calendar_part] = attachments(mailbox.mails[0], "text/calendar")
    raw = calendar_part.get_payload(decode=True)
    lines = raw.split(b"\r\n")
    assert raw.endswith(b"\r\n") and b"\n" not in raw.replace(b"\r\n", b"")
    assert all(len(line) <= 75 for line in lines)
    assert not any(line.startswith(b"ORGANIZER") for line in lines)
    [visit] = icalendar.Calendar.from_ical(raw).walk("VEVENT")
    assert str(visit["UID"]) == f"{ticket['ticketId']}@museum-ticket"
    assert visit["DTSTAMP"].dt == NOW
    assert visit["DTSTART"].dt.isoformat() == TODAY
    assert ticket["confirmationCode"] in str(visit["DESCRIPTION"])


def test_long_lines_are_folded_at_75_octets():
    import museum_mail

    line = "SUMMARY:" + "Musée " * 30
    folded = museum_mail._folded(line)
    assert all(len(piece.encode()) <= 75 for piece in folded.split("\r\n"))
    assert folded.replace("\r\n ", "") == line


def test_a_refusing_server_gets_the_mail_once_after_the_backoff(mailing, store):
    client, sender, mailbox, clock = mailing(refusals=2)
    buy(client, body(), headers=VISITOR)
    assert sender.send_due() == 0
    [message] = store.list_messages()
    assert (message["state"], message["attempts"]) == ("queued", 1)
    assert message["lastAnswer"] == "554 5.7.1 not now"
    assert sender.send_due() == 0 and store.list_messages()[0]["attempts"] == 1  # not due
    clock.advance(minutes=1)
    assert sender.send_due() == 0
    clock.advance(minutes=4)
    assert sender.send_due() == 0  # the second wait is 5 minutes
    clock.advance(minutes=1)
    assert sender.send_due() == 1
    assert len(mailbox.mails) == 1
    clock.advance(days=4)
    assert sender.send_due() == 0 and len(mailbox.mails) == 1


def test_the_backoff_runs_1_5_10_20_30_minutes_then_hourly_for_3_days():
    waits = [museum_outbox.backoff(attempt) for attempt in range(1, 80)]
    assert waits[:6] == [timedelta(minutes=minutes) for minutes in (1, 5, 10, 20, 30, 60)]
    given_up = waits.index(None)
    assert sum(waits[:given_up], timedelta()) <= timedelta(days=3)
    assert sum(waits[:given_up], timedelta()) + timedelta(hours=1) > timedelta(days=3)


def test_a_message_failing_for_3_days_is_failed_and_reported(mailing, store):
    client, sender, mailbox, clock = mailing(refusals=10_000)
    buy(client, body(), headers=VISITOR)
    while store.list_messages()[0]["state"] == "queued":
        sender.send_due()
        clock.advance(hours=1)
    [message] = store.list_messages()
    assert (message["state"], message["lastAnswer"]) == ("failed", "554 5.7.1 not now")
    health = client.get("/healthz", status=200).json
    assert health["outbox"] == {"failed": 1, "oldest": message["createdAt"]}
    retried = store.retry_message(message["messageId"], "2026-11-22T12:00:00Z")
    assert (retried["state"], retried["attempts"]) == ("queued", 0)
    mailbox.refusals = 0
    clock.advance(minutes=1)
    assert sender.send_due() == 1


def test_no_mail_is_queued_without_a_mail_url(client, store):
    buy(client, body(), headers=VISITOR)
    assert store.list_messages() == []


def test_a_refused_sale_queues_nothing(mailing, store):
    client, _, _, _ = mailing()
    # Refused inside the store's transaction, which would have queued the mail.
    buy(client, body("event", eventId=UNKNOWN_ID), headers=VISITOR, status=404)
    assert store.list_messages() == []


@pytest.fixture(params=["sqlite", "postgres"])
def each_url(request, db_path):
    """A new database of each backend (PostgreSQL: a fresh one on the test server)."""
    return db_path if request.param == "sqlite" else request.getfixturevalue("postgres_url")


@pytest.fixture
def each_store(each_url):
    opened = storage.open_store(each_url)
    yield opened
    opened.close()


def test_a_claim_whose_lease_ended_is_claimed_again_and_the_late_sender_records_nothing(
        each_store):
    store = each_store
    store.create_ticket(ticket_for_store(), messages=[message_for_store()])
    first = store.claim_messages("2026-11-22T12:00:00Z", "2026-11-22T12:05:00Z", 10)
    assert [message["attempts"] for message in first] == [1]
    assert store.claim_messages("2026-11-22T12:04:59Z", "2026-11-22T12:09:59Z", 10) == []
    again = store.claim_messages("2026-11-22T12:05:00Z", "2026-11-22T12:10:00Z", 10)
    assert [message["attempts"] for message in again] == [2]
    assert not store.settle_message(MESSAGE_ID, 1, "sent", "250", "2026-11-22T12:05:01Z")
    assert store.settle_message(MESSAGE_ID, 2, "sent", "250", "2026-11-22T12:05:02Z")
    assert store.claim_messages("2026-11-30T00:00:00Z", "2026-11-30T00:05:00Z", 10) == []
    with pytest.raises(storage.NotAllowed):
        store.retry_message(MESSAGE_ID, "2026-11-30T00:00:00Z")


def test_claimants_at_once_each_take_other_messages(each_store):
    """Four threads claim 60 messages at once, each on its own connection (PostgreSQL:
    SKIP LOCKED; sqlite: one writer at a time): every message is claimed exactly once."""
    store = each_store
    for number in range(60):
        ticket_id = str(uuid.UUID(int=number + 1))
        store.create_ticket({**ticket_for_store(), "ticketId": ticket_id,
                             "confirmationCode": museum_door.new_confirmation_code("general")},
                            messages=[{**message_for_store(), "ticketId": ticket_id,
                                       "messageId": str(uuid.UUID(int=1000 + number)),
                                       "payload": {"ticketId": ticket_id}}])
    start = threading.Barrier(4)

    def claim_all():
        start.wait()
        claimed = []
        while batch := store.claim_messages("2026-11-22T12:00:00Z", "2026-11-22T12:05:00Z", 5):
            claimed += [message["messageId"] for message in batch]
        return claimed

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        claims = [future.result() for future in [pool.submit(claim_all) for _ in range(4)]]
    every = [message_id for claim in claims for message_id in claim]
    assert len(every) == 60 and len(set(every)) == 60


def test_messages_are_erased_with_the_contacts(each_store):
    store = each_store
    store.create_ticket(ticket_for_store(), messages=[message_for_store()])
    assert store.erase_contacts("2026-12-01", 10) == 1
    assert store.list_messages() == []


TICKET_ID = "6b0c7c4e-1f7a-4a51-9d43-0c8f1f7e2a10"
MESSAGE_ID = "0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9"


def ticket_for_store():
    return {"ticketId": TICKET_ID, "ticketType": "general", "ticketDate": "2026-11-24",
            "confirmationCode": "ticket-general-0a1b2c-3d4e5", "email": "ada@example.org",
            "price": 0, "currency": "EUR"}


def message_for_store():
    return {"messageId": MESSAGE_ID, "kind": "email", "target": "ada@example.org",
            "payload": {"ticketId": TICKET_ID}, "ticketId": TICKET_ID,
            "createdAt": "2026-11-22T12:00:00Z"}


def test_a_sale_committed_before_a_kill_9_is_mailed_once_after_the_restart(
        tmp_path, config_text, smtp_server):
    """kill -9 of a real `museum serve` between a sale's commit and its send: the restarted
    service sends the mail, once."""
    url, mailbox = smtp_server()
    text = (config_text + f"[mail]\nurl = {url}\nfrom = tickets@museum.example.org\n")
    db = tmp_path / "museum.sqlite3"
    day = open_days(config_text, 1)[0]
    server = start_server(tmp_path, text, db=str(db))
    try:
        # The sender looked at the outbox as the service started, and looks again 5
        # seconds later: the sale and the kill come in between.
        status, _, _ = server.request("POST", TICKETS, body(ticketDate=day), VISITOR)
        assert status == 201
        server.stop(signal.SIGKILL)
    finally:
        server.process.kill()
    assert query(db, "SELECT state, attempts FROM outbox") == [("queued", 0)]
    assert mailbox.mails == []
    with running_server(tmp_path, text, db=str(db)):
        wait_until(lambda: query(db, "SELECT state FROM outbox") == [("sent",)], 30,
                   what="the mail's delivery")
        assert len(mailbox.mails) == 1


def test_museum_check_reports_failed_messages_and_still_exits_0(tmp_path, config_text,
                                                                  each_url, each_store):
    store, url = each_store, each_url
    store.create_ticket(ticket_for_store(), messages=[message_for_store()])
    store.claim_messages("2026-11-22T12:00:00Z", "2026-11-22T12:05:00Z", 10)
    store.settle_message(MESSAGE_ID, 1, "failed", "550 5.1.1 no such user",
                         "2026-11-22T12:00:01Z")
    checked = museum_command(tmp_path, config_text, "check", "--db", url)
    assert checked.status == 0
    assert checked.out.splitlines()[-1] == (
        "outbox: 1 failed messages (the oldest made 2026-11-22T12:00:00Z); 'museum outbox "
        "--state failed' lists them")
    listed = museum_command(tmp_path, config_text, "outbox", "--db", url, "--state", "failed")
    assert "550 5.1.1 no such user" in listed.out and MESSAGE_ID in listed.out
    retried = museum_command(tmp_path, config_text, "outbox", "--db", url, "--retry",
                             MESSAGE_ID)
    assert retried.status == 0
    assert store.list_messages()[0]["state"] == "queued"
    dropped = museum_command(tmp_path, config_text, "outbox", "--db", url, "--drop", MESSAGE_ID)
    assert dropped.status == 0 and store.list_messages() == []


def test_a_museum_s_own_template_replaces_the_shipped_one_of_its_name(
        tmp_path, config_text, store, smtp_server):
    (tmp_path / "ticket-subject.txt").write_text("Ihr Ticket: $date, $code\n", "utf-8")
    url, mailbox = smtp_server()
    config = mail_config(config_text, url, f"templates = {tmp_path}\n")
    client = webtest.TestApp(museum.create_app(config, store=store, clock=Clock()))
    ticket = buy(client, body(), headers=VISITOR).json
    museum_outbox.Sender(config, store, Clock()).send_due()
    [mail] = mailbox.mails
    assert mail["Subject"] == f"Ihr Ticket: {ticket['ticketDate']}, {ticket['confirmationCode']}"
    assert "Show the attached ticket images" in mail.get_body(("plain",)).get_content()


def test_a_templates_directory_that_is_not_one_is_a_config_error(config_text, store):
    config = mail_config(config_text, "smtp://127.0.0.1:25",
                         "templates = /nonexistent/templates\n")
    with pytest.raises(museum.ConfigError, match=r"\[mail\] templates"):
        museum_outbox.Sender(config, store, Clock())
