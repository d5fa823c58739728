"""The outbox's sender: it claims the messages that are due (queued in the transaction of
what caused them: `Store.create_ticket`, `create_order`, `confirm_order`,
`queue_mail_again`), delivers each by the function of its kind, and records the answer:
sent, or due again after a backoff of 1, 5, 10, 20 and 30 minutes, then hourly, until 3
days of attempts have failed. A thread of `museum serve` runs it every few seconds; `museum send`
drains the due messages once, for hosts without the thread and for cron.

Nothing promised is lost: a claim is a lease, so a message whose sender died mid-send is
claimed again once the lease ends, and a message marked sent is never claimed again. A crash
between the SMTP server's acceptance and the record of it sends the mail once more, with the
same Message-ID, which is how receivers recognise it.
"""

import logging
import threading
from datetime import timedelta

import storage
from museum_http import rfc3339
from museum_mail import MailFailed, MailSettings, compose_mail, load_templates, send_mail
from museum_services import qr_secret
from museum_vocabulary import EMAIL_MESSAGE
from museum_webhooks import ReceiverGone, WebhookFailed, deliver

log = logging.getLogger("museum.outbox")


class NoDelivery(Exception):
    """A message this sender cannot deliver now (a kind it has no delivery for, mail off)."""


# What a delivery raises when it did not deliver, saying why (the receiver's answer): the
# message is tried again later. Each kind's module has its own.
FAILURES = (MailFailed, NoDelivery, WebhookFailed)

# Minutes to wait after each failed attempt; after the last, the message has failed.
FIRST_WAITS = (1, 5, 10, 20, 30)
RETRY_FOR = timedelta(days=3)
BACKOFF = (*FIRST_WAITS, *[60] * ((RETRY_FOR // timedelta(minutes=1) - sum(FIRST_WAITS)) // 60))
LEASE = timedelta(minutes=5)  # a claim outlives any one send (SMTP waits 30 s at most)
BATCH = 20  # messages claimed at once
POLL_EVERY = 5  # seconds between the thread's looks at the outbox


def backoff(attempts):
    """How long to wait after failed attempt number `attempts`; None: stop, it failed."""
    if attempts > len(BACKOFF):
        return None
    return timedelta(minutes=BACKOFF[attempts - 1])


class Sender:
    """Delivers the store's due messages by the config's [mail] settings; `clock` gives an
    aware datetime (tests move it past the backoff)."""

    def __init__(self, config, store, clock):
        self.store = store
        self.clock = clock
        self.url = config["mail"]["url"]
        self.mail = MailSettings(
            sender=config["mail"], museum=config["museum"]["name"],
            language=config["museum"]["language"],
            templates=load_templates(config["mail"]["templates"],
                                     config["museum"]["language"]),
            zone=config["museum"]["timezone"], secret=qr_secret(config, store),
            public_url=config["server"]["public_url"])
        # How each kind of message is delivered: a function of the claimed message that
        # returns the receiver's answer, or raises one of FAILURES with it.
        self.deliveries = {EMAIL_MESSAGE: self._send_mail,
                           storage.WEBHOOK_MESSAGE: self._send_webhook}
        self.allow_private = config["webhooks"]["allow_private"]

    def send_due(self):
        """Deliver every message due now, batch after batch; return how many were sent."""
        sent = 0
        while True:
            now = self.clock()
            claimed = self.store.claim_messages(rfc3339(now), rfc3339(now + LEASE), BATCH)
            sent += sum(self._deliver(message) for message in claimed)
            if len(claimed) < BATCH:
                return sent

    def _deliver(self, message):
        """Send one claimed message and record the outcome; True when it was sent."""
        try:
            answer = self._send(message)
        except FAILURES as failure:
            self._retry_later(message, str(failure))
            return False
        except ReceiverGone as gone:
            self._give_up(message, str(gone))
            return False
        self.store.settle_message(message["messageId"], message["attempts"], "sent", answer,
                                  rfc3339(self.clock()))
        return True

    def _send(self, message):
        deliver = self.deliveries.get(message["kind"])
        if deliver is None:
            raise NoDelivery(f"no sender for messages of kind {message['kind']!r}")
        return deliver(message)

    def _send_mail(self, message):
        """Compose the mail of the message's ticket or order as it stands now, and send it."""
        if not self.url:
            raise NoDelivery("[mail] url is not set: no email is sent")
        now = self.clock()
        if message["payload"].get("orderId"):
            order = self.store.get_order(message["payload"]["orderId"], rfc3339(now))
            tickets = order["tickets"]
        else:
            tickets = [self.store.get_ticket(message["payload"]["ticketId"])]
        tickets = [ticket for ticket in tickets if not ticket["voidedAt"]]
        if not tickets:  # voided since: nothing is left to send
            return "not sent: its tickets were voided"
        return send_mail(self.url, compose_mail(message["messageId"], message["target"],
                                                tickets, self.mail, now))

    def _send_webhook(self, message):
        """Sign the delivery and post it to its receiver; a 410 disables the receiver."""
        try:
            return deliver(message, self.store.webhook(message["webhookId"]),
                           self.allow_private, self.clock())
        except ReceiverGone as gone:
            self.store.disable_webhook(message["webhookId"], rfc3339(self.clock()), str(gone))
            raise

    def _retry_later(self, message, answer):
        wait = backoff(message["attempts"])
        if wait is None:
            self._give_up(message, answer)
            return
        at = rfc3339(self.clock())
        log.warning("outbox: %s to %s not delivered (attempt %d), trying again in %s: %s",
                    message["kind"], message["target"], message["attempts"], wait, answer)
        self.store.settle_message(message["messageId"], message["attempts"], "queued", answer,
                                  at, rfc3339(self.clock() + wait))

    def _give_up(self, message, answer):
        log.error("outbox: gave up on %s to %s after %d attempts: %s", message["kind"],
                  message["target"], message["attempts"], answer)
        self.store.settle_message(message["messageId"], message["attempts"], "failed",
                                  answer, rfc3339(self.clock()))

    def run_in_background(self, stop):
        """Send the due messages every POLL_EVERY seconds until the event `stop` is set, on
        a thread of its own that dies with the process."""
        def run():
            while not stop.is_set():
                try:
                    self.send_due()
                except storage.StorageError as error:
                    log.warning("outbox: the database failed, trying again: %s", error)
                stop.wait(POLL_EVERY)

        thread = threading.Thread(target=run, name="outbox-sender", daemon=True)
        thread.start()
        return thread
