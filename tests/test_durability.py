"""Acknowledged means durable: a real server is killed with SIGKILL in the middle of a burst.

Eight clients create 50 events and buy 200 tickets (250 POSTs, each ticket with its own
Idempotency-Key). The moment the N-th acknowledgement (a 201 with its body) reaches a client,
that client sends SIGKILL to the server; the other clients' requests are then in flight and
unacknowledged. The server is restarted on the same database, and:

* every acknowledged event and ticket is there, exactly as acknowledged;
* every unacknowledged request left either nothing or its whole record (never half of one),
  and a retry of an unacknowledged purchase with its Idempotency-Key gives exactly one ticket;
* the file passes sqlite's integrity and foreign-key checks, the listing index matches the
  events, and no record appears that no client asked for.

The kill comes after N = 1, 40, 125, 210 and 250 acknowledgements (250: right after the
last). SIGKILL ends the process, not the machine: this proves that a commit is complete when
it is acknowledged, and that a crash never leaves half a write; a power cut additionally
relies on sqlite's fsync (synchronous = FULL), which no test here can cut.
"""

import http.client
import json
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import pytest

from conftest import ADMIN, VISITOR
from serving import running_server, start_server
from ticketing import EVENTS, PNG, TICKETS, check_store, event_body, open_days, query, ticket_body

CLIENTS = 8
EVENT_COUNT, TICKET_COUNT = 50, 200
KILL_AFTER = (1, 40, 125, 210, 250)

pytestmark = pytest.mark.slow


@dataclass
class Operation:
    number: int
    path: str
    body: dict
    headers: dict
    answer: dict = None  # the acknowledged 201 body

    @property
    def is_event(self):
        return self.path == EVENTS

    @property
    def key(self):
        return self.headers.get("Idempotency-Key")


@dataclass
class Burst:
    """250 POSTs from `CLIENTS` threads; the server is SIGKILLed at the `kill_after`-th 201."""

    server: object
    kill_after: int
    days: list
    acknowledged: list = field(default_factory=list)
    in_flight: list = field(default_factory=list)  # sent, never acknowledged
    refused: list = field(default_factory=list)  # answered with anything but 201
    next_number: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    killed: threading.Event = field(default_factory=threading.Event)

    def next_operation(self):
        """The next POST: every fifth an event, the others tickets, half of those for an
        event already acknowledged."""
        with self.lock:
            number = self.next_number
            if number >= EVENT_COUNT + TICKET_COUNT or self.killed.is_set():
                return None
            self.next_number += 1
            if number % 5 == 0:
                dates = self.days[number % 7: number % 7 + 3]
                return Operation(number, EVENTS, event_body(number, dates), ADMIN)
            events = [op.answer for op in self.acknowledged if op.is_event]
            if events and number % 2:
                event = events[number * 7 % len(events)]
                body = ticket_body(number, event["dates"][-1], event["eventId"])
            else:
                body = ticket_body(number, self.days[number % len(self.days)])
            key = f"crash-{self.kill_after}-{number}"
            return Operation(number, TICKETS, body, {**VISITOR, "Idempotency-Key": key})

    def client(self):
        while (operation := self.next_operation()) is not None:
            try:
                status, _, data = self.server.request("POST", operation.path, operation.body,
                                                      operation.headers)
            except (OSError, http.client.HTTPException):
                with self.lock:
                    self.in_flight.append(operation)
                continue
            if status != 201:
                with self.lock:
                    self.refused.append((operation, status, data))
                continue
            operation.answer = json.loads(data)
            with self.lock:
                self.acknowledged.append(operation)
                if len(self.acknowledged) == self.kill_after:
                    self.server.process.kill()  # SIGKILL, to the process this test started
                    self.killed.set()

    def run(self):
        with ThreadPoolExecutor(CLIENTS) as pool:
            for future in [pool.submit(self.client) for _ in range(CLIENTS)]:
                future.result()
        assert self.killed.is_set(), "the burst ended before the kill"
        self.server.process.wait(timeout=15)


def warm_up(server):
    """Log both users in once, so the burst does not wait on password hashing."""
    for credentials in (ADMIN, VISITOR):
        assert server.request("GET", "/v1.1/museum-hours", headers=credentials)[0] == 200


def assert_acknowledged_records_are_intact(server, db_path, burst, events, tickets):
    for operation in burst.acknowledged:
        answer = operation.answer
        if operation.is_event:
            assert events[answer["eventId"]] == (answer, False)
            status, _, data = server.request("GET", f"{EVENTS}/{answer['eventId']}",
                                             headers=VISITOR)
            assert (status, json.loads(data)) == (200, answer)
        else:
            assert tickets[answer["ticketId"]] == (operation.body, answer["confirmationCode"])
    for operation in [op for op in burst.acknowledged if not op.is_event][:10]:
        status, headers, data = server.request(
            "GET", f"{TICKETS}/{operation.answer['ticketId']}/qr", headers=VISITOR)
        assert status == 200 and data.startswith(PNG)


def assert_unacknowledged_requests_left_all_or_nothing(server, db_path, burst, events,
                                                       tickets):
    """Returns how many unacknowledged requests had landed whole."""
    acknowledged_ids = {op.answer.get("eventId") if op.is_event else op.answer["ticketId"]
                        for op in burst.acknowledged}
    by_name = {event["name"]: event for event, _ in events.values()}
    keys = dict(query(db_path, "SELECT key, ticket_id FROM idempotency_keys"))
    landed = set()
    for operation in burst.in_flight:
        if operation.is_event and operation.body["name"] in by_name:
            event = by_name[operation.body["name"]]
            assert {**operation.body, "eventId": event["eventId"]} == event
            landed.add(event["eventId"])
        elif not operation.is_event and operation.key in keys:
            assert tickets[keys[operation.key]][0] == operation.body
            landed.add(keys[operation.key])
    # Nothing stored that no client asked for.
    assert set(events) | set(tickets) == acknowledged_ids | landed
    # A client that never heard back retries with its key: one ticket, whatever happened.
    for operation in [op for op in burst.in_flight if not op.is_event]:
        status, _, data = server.request("POST", TICKETS, operation.body, operation.headers)
        assert status == 201, data
        ticket_id = json.loads(data)["ticketId"]
        assert ticket_id == keys.get(operation.key, ticket_id)
        assert query(db_path, "SELECT count(*) FROM idempotency_keys WHERE key = ?",
                    operation.key) == [(1,)]
    return len(landed)


@pytest.mark.parametrize("kill_after", KILL_AFTER)
def test_every_acknowledged_write_survives_sigkill_and_nothing_is_half_written(
        tmp_path, config_text, kill_after):
    db_path = str(tmp_path / "museum.sqlite3")
    days = open_days(config_text, 12)
    server = start_server(tmp_path, config_text)
    try:
        warm_up(server)
        burst = Burst(server, kill_after, days)
        burst.run()
    finally:
        if server.process.poll() is None:
            server.process.kill()
            server.process.wait()
    first_log = server.log()
    assert burst.refused == []
    assert "Traceback" not in first_log and " 500 " not in first_log

    with running_server(tmp_path, config_text) as restarted:
        events, tickets = check_store(db_path)
        assert_acknowledged_records_are_intact(restarted, db_path, burst, events, tickets)
        landed = assert_unacknowledged_requests_left_all_or_nothing(
            restarted, db_path, burst, events, tickets)
        check_store(db_path)
    print(f"kill after {kill_after}: {len(burst.acknowledged)} acknowledged, "
          f"{len(burst.in_flight)} in flight ({landed} of them stored whole), "
          f"0 acknowledged records lost")
