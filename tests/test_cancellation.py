"""A cancellation is never starved by sales: on PostgreSQL, with sixteen sellers selling
tickets for an event without pause, an admin's cancellation of it waits only for the sales
under way when it was sent, and nothing is sold for the event once it has answered.

The store runs under threads, as the worker threads of instances sharing the database do:
the sellers share one store (one instance), the admin has its own (another instance). The
bounds are counts taken in the test's own run, never a fixed time: how many sales sold while
the cancellation waited (its duration, counted in sales) and how many of them were sent
after it, how many tickets exist after it answered.
"""

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

import storage
from test_storage import event, event_ticket

pytestmark = pytest.mark.slow

SELLERS = 16
SOLD_BEFORE = 300  # tickets sold before the cancellation is sent: the sales are in full flow
REFUSED_AFTER = 3  # each seller goes on until this many of its sales after it were refused
# ... or until this many were sold in all: a starved cancellation then answers, and the test
# fails on its counts rather than waiting for ever.
MOST_SOLD = 10 * SOLD_BEFORE
DAY = "2026-12-01"


class Sellers:
    """SELLERS threads selling tickets for one event until each has been refused
    REFUSED_AFTER times after the cancellation answered (or MOST_SOLD were sold); every
    sale's (sent, answered, sold) is kept."""

    def __init__(self, store, event_id):
        self.store, self.event_id = store, event_id
        self.sales = []  # (sent, answered, sold: True, or the refusal's class name)
        self.sold = 0
        self.lock = threading.Lock()
        self.enough_sold = threading.Event()
        self.cancelled_at = None  # when the cancellation answered

    def sell(self):
        refused_after = 0
        while refused_after < REFUSED_AFTER and self.sold < MOST_SOLD:
            sent = time.monotonic()
            try:
                self.store.create_ticket(event_ticket(self.event_id, ticketDate=DAY))
                outcome = True
            except storage.NotFound:  # the event is cancelled
                outcome = "NotFound"
            answered = time.monotonic()
            with self.lock:
                self.sales.append((sent, answered, outcome))
                self.sold += outcome is True
                if self.sold >= SOLD_BEFORE:
                    self.enough_sold.set()
                if self.cancelled_at is not None and sent > self.cancelled_at:
                    refused_after += 1

    def sold_after(self, moment):
        """The sales sent after `moment` that sold a ticket."""
        return [sale for sale in self.sales if sale[2] is True and sale[0] > moment]


def cancel_timed(admin, event_id):
    """(sent, answered) of the cancellation."""
    sent = time.monotonic()
    admin.cancel_event(event_id)
    return sent, time.monotonic()


def tickets_of(url, event_id):
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        return conn.execute("SELECT count(*) FROM tickets WHERE event_id = %s",
                            (event_id,)).fetchone()[0]


def test_a_cancellation_waits_only_for_the_sales_under_way(postgres_url):
    # A connection for every seller: none waits for the pool rather than for the database.
    sellers_store = storage.open_store(postgres_url, limits=storage.Limits(
        pool_size=SELLERS, pool_timeout=30))
    admin = storage.open_store(postgres_url)
    try:
        # A capacity, so every sale counts its event date's places under their lock point.
        quiet, busy = (admin.create_event(event(dates=[DAY], capacity=1_000_000))
                       for _ in range(2))
        admin.create_ticket(event_ticket(quiet["eventId"], ticketDate=DAY))
        quiet_sent, quiet_answered = cancel_timed(admin, quiet["eventId"])

        sellers = Sellers(sellers_store, busy["eventId"])
        with ThreadPoolExecutor(SELLERS) as pool:
            selling = [pool.submit(sellers.sell) for _ in range(SELLERS)]
            assert sellers.enough_sold.wait(timeout=120)
            sent, answered = cancel_timed(admin, busy["eventId"])
            stored_when_answered = tickets_of(postgres_url, busy["eventId"])
            with sellers.lock:
                sellers.cancelled_at = answered
            for running in selling:
                running.result()
    finally:
        sellers_store.close()
        admin.close()

    ahead = sellers.sold_after(sent)
    waited_for = [sale for sale in sellers.sales
                  if sale[2] is True and sent < sale[1] < answered]
    after = [sale for sale in sellers.sales if sale[0] > answered]
    print(f"cancel: {(answered - sent) * 1000:.1f} ms with {SELLERS} sellers, "
          f"{(quiet_answered - quiet_sent) * 1000:.1f} ms alone; sales sold while it waited: "
          f"{len(waited_for)}, of them sent after it: {len(ahead)}; sales in all: "
          f"{len(sellers.sales)}")
    # Not starved: once the cancellation was sent, at most one sale per seller got in ahead
    # of it (sent in the moment before it took its turn); a cancellation starved by a
    # stream of sales would see hundreds.
    assert len(ahead) <= SELLERS
    # Its duration, counted in sales: it waited for the sales under way when it was sent
    # (one per seller) and those that got in ahead, no more.
    assert len(waited_for) <= 2 * SELLERS
    # Nothing sold after it answered: every sale sent later was refused, and the tickets
    # stored then are all there are.
    assert len(after) >= SELLERS * REFUSED_AFTER
    assert {sold for _, _, sold in after} == {"NotFound"}
    assert tickets_of(postgres_url, busy["eventId"]) == stored_when_answered
    assert stored_when_answered == sellers.sold
