"""How fast the outbox drains (the goal: 1,000 queued mails drain against a local SMTP server
within 60 s). 1,000 tickets are sold into a fresh sqlite database, each queuing its mail in
its sale's transaction as the service does; then one sender (`museum send`'s) delivers them
to an aiosmtpd server on loopback, which accepts every mail. The wall time of the drain and
the sender's CPU time per mail (composing the mail, its PNG and calendar file, the SMTP
conversation, the claims and records) are printed.

    python benchmarks/outbox_drain.py [MAILS]  # default 1000

Needs the test extras (aiosmtpd). Only the sender's own cost: the sale's is run.py's.
"""

import sys
import tempfile
import time
import uuid
from datetime import date
from pathlib import Path

from aiosmtpd.controller import Controller

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import museum_door  # noqa: E402
import museum_outbox  # noqa: E402
import museum_sales  # noqa: E402
import storage  # noqa: E402
from museum_config import parse_config  # noqa: E402
from museum_services import utc_now  # noqa: E402
from serving import free_port  # noqa: E402

TARGET_SECONDS = 60
QR_SECRET = "benchmark-qr-secret-of-at-least-32-characters"


class Accepting:
    """An SMTP handler that accepts and counts every mail."""

    def __init__(self):
        self.accepted = 0

    async def handle_DATA(self, server, session, envelope):
        self.accepted += 1
        return "250 2.0.0 queued"


def queue_sales(store, config, mails):
    """`mails` tickets sold, each with its mail queued in its own transaction."""
    today = date.today().isoformat()
    for number in range(mails):
        ticket = {"ticketId": str(uuid.uuid4()), "ticketType": "general",
                  "ticketDate": today, "eventId": None,
                  "confirmationCode": museum_door.new_confirmation_code("general"),
                  "email": f"visitor-{number}@example.org", "phone": None, "price": 0,
                  "currency": "EUR"}
        store.create_ticket(ticket, messages=museum_sales.ticket_mails(
            config, ticket, lambda: str(uuid.uuid4()), "2000-01-01T00:00:00Z"))


def main(mails=1000):
    handler = Accepting()
    smtp = Controller(handler, hostname="127.0.0.1", port=free_port())
    smtp.start()
    try:
        config = parse_config(
            f"[tickets]\nqr_secret = {QR_SECRET}\n[mail]\nurl = smtp://127.0.0.1:{smtp.port}\n"
            "from = tickets@museum.example.org\n", "benchmark.ini")
        with tempfile.TemporaryDirectory() as directory:
            store = storage.open_store(str(Path(directory) / "museum.sqlite3"))
            try:
                queue_sales(store, config, mails)
                sender = museum_outbox.Sender(config, store, utc_now)
                started, cpu = time.perf_counter(), time.process_time()
                sent = sender.send_due()
                wall = time.perf_counter() - started
                cpu = time.process_time() - cpu
            finally:
                store.close()
    finally:
        smtp.stop()
    verdict = "within" if sent == mails == handler.accepted and wall <= TARGET_SECONDS \
        else "NOT within"
    print(f"{sent} of {mails} mails sent, {handler.accepted} accepted, in {wall:.1f} s "
          f"({sent / wall:.0f} mails/s), {cpu / max(sent, 1) * 1000:.1f} ms CPU per mail: "
          f"{verdict} the {TARGET_SECONDS} s target")
    return 0 if verdict == "within" else 1


if __name__ == "__main__":
    sys.exit(main(*(int(arg) for arg in sys.argv[1:])))
