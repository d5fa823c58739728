"""Load on a real server with the shipped waitress settings (4 threads, 100 connections,
30 s channel timeout, 64 KiB headers, 1 MiB bodies).

* 64 clients on keep-alive connections for 20 seconds, mixing every kind of read and write:
  no 5xx, no `database is locked`, no dropped connection, every answer well-formed, and the
  store afterwards holds exactly what was acknowledged.
* 20 clients that stall (10 connect and send nothing, 10 send a body one byte a second) do
  not hold up the others: normal requests are answered before any slow client has sent its
  request, and the stalled clients are served too once they finish their requests.
"""

import http.client
import json
import random
import socket
import statistics
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest

from conftest import ADMIN, VISITOR
from serving import running_server, wait_until
from ticketing import EVENTS, PNG, TICKETS, check_store, event_body, open_days, ticket_body

pytestmark = pytest.mark.slow

CLIENTS = 64
DURATION = 20  # seconds
SEED_EVENTS = 12
# (operation, weight): reads dominate, as on a museum's site.
MIX = [("list events", 25), ("read event", 20), ("hours", 8), ("image", 15),
       ("buy ticket", 14), ("create event", 6), ("patch event", 12)]


class Load:
    """The shared state of the load clients: what exists, what was answered."""

    def __init__(self, server, days):
        self.server = server
        self.days = days
        self.lock = threading.Lock()
        self.events = {}  # eventId -> an acknowledged version (for picking dates)
        self.versions = {}  # eventId -> every version acknowledged (created, read, patched)
        self.tickets = {}  # ticketId -> (body, confirmation code)
        self.statuses = Counter()
        self.failures = []
        self.latencies = []
        self.sequence = 0

    def number(self):
        with self.lock:
            self.sequence += 1
            return self.sequence

    # Each operation: (method, path, body, headers, expected status, check of the answer).
    def operation(self, kind, rng):
        with self.lock:
            event_ids = list(self.events)
            ticket_ids = list(self.tickets)
        event_id = rng.choice(event_ids)
        if kind == "list events":
            query = (f"startDate={rng.choice(self.days)}&limit={rng.randint(1, 30)}"
                     f"&page={rng.randint(1, 3)}")
            return "GET", f"{EVENTS}?{query}", None, VISITOR, 200, self.listing
        if kind == "read event":
            return "GET", f"{EVENTS}/{event_id}", None, VISITOR, 200, self.event
        if kind == "hours":
            return "GET", f"/v1.1/museum-hours?limit={rng.randint(1, 30)}", None, \
                VISITOR, 200, self.json_list
        if kind == "image" and ticket_ids:
            return "GET", f"{TICKETS}/{rng.choice(ticket_ids)}/qr", None, VISITOR, 200, \
                self.image
        if kind in ("buy ticket", "image"):
            number = self.number()
            with self.lock:
                event = self.events[event_id]
            body = ticket_body(number, rng.choice(event["dates"]), event_id) if number % 2 \
                else ticket_body(number, rng.choice(self.days))
            return "POST", TICKETS, body, VISITOR, 201, self.ticket
        if kind == "create event":
            number = self.number()
            body = event_body(number, rng.sample(self.days, 3))
            return "POST", EVENTS, body, ADMIN, 201, self.event
        changes = rng.choice([{"price": rng.randint(0, 500)},
                              {"name": f"Renamed {self.number()}"},
                              {"eventDescription": "Changed under load."}])
        return "PATCH", f"{EVENTS}/{event_id}", changes, ADMIN, 200, self.event

    # Checks: each gets (request body, response headers, response body) and records state.
    @staticmethod
    def json_list(body, headers, data):
        assert headers["Content-Type"] == "application/json"
        assert isinstance(json.loads(data), list)

    def listing(self, body, headers, data):
        self.json_list(body, headers, data)
        assert int(headers["X-Total-Count"]) >= len(json.loads(data))

    def event(self, body, headers, data):
        assert headers["Content-Type"] == "application/json"
        event = json.loads(data)
        assert set(event) == {"eventId", "name", "location", "eventDescription", "dates",
                              "price"}
        with self.lock:
            self.events.setdefault(event["eventId"], event)
            self.versions.setdefault(event["eventId"], []).append(event)

    def ticket(self, body, headers, data):
        assert headers["Content-Type"] == "application/json"
        receipt = json.loads(data)
        assert headers["Location"] == f"{TICKETS}/{receipt['ticketId']}/qr"
        with self.lock:
            self.tickets[receipt["ticketId"]] = (body, receipt["confirmationCode"])

    @staticmethod
    def image(body, headers, data):
        assert headers["Content-Type"] == "image/png" and data.startswith(PNG)
        assert headers["Etag"]

    def client(self, seed, deadline):
        rng = random.Random(seed)
        kinds, weights = zip(*MIX)
        connection = self.server.connection(timeout=60)
        try:
            while time.monotonic() < deadline:
                kind = rng.choices(kinds, weights)[0]
                method, path, body, headers, expected, check = self.operation(kind, rng)
                payload = json.dumps(body).encode() if body is not None else None
                started = time.monotonic()
                try:
                    connection.request(method, path, payload, {
                        **headers, **({"Content-Type": "application/json"} if payload else {})})
                    response = connection.getresponse()
                    data = response.read()
                except (OSError, http.client.HTTPException) as error:
                    with self.lock:
                        self.failures.append((kind, repr(error)))
                    connection.close()
                    connection = self.server.connection(timeout=60)
                    continue
                elapsed = time.monotonic() - started
                response_headers = dict(response.getheaders())
                with self.lock:
                    self.statuses[response.status] += 1
                    self.latencies.append(elapsed)
                try:
                    assert response.status == expected, (response.status, data[:300])
                    check(body, response_headers, data)
                except (AssertionError, ValueError, KeyError) as error:
                    with self.lock:
                        self.failures.append((kind, repr(error)))
        finally:
            connection.close()


def seed(load):
    for number in range(SEED_EVENTS):
        status, _, data = load.server.request("POST", EVENTS, event_body(
            1000 + number, load.days[number:number + 3]), ADMIN)
        assert status == 201
        load.event(None, {"Content-Type": "application/json"}, data)
    assert load.server.request("GET", "/v1.1/museum-hours", headers=VISITOR)[0] == 200


def test_64_clients_for_20_seconds_get_no_5xx_and_no_locked_database(tmp_path, config_text):
    db_path = str(tmp_path / "museum.sqlite3")
    with running_server(tmp_path, config_text) as server:
        load = Load(server, open_days(config_text, 20))
        seed(load)
        deadline = time.monotonic() + DURATION
        started = time.monotonic()
        with ThreadPoolExecutor(CLIENTS) as pool:
            for future in [pool.submit(load.client, number, deadline)
                           for number in range(CLIENTS)]:
                future.result()
        elapsed = time.monotonic() - started
        server.stop()
        log = server.log()

    total = sum(load.statuses.values())
    latencies = sorted(load.latencies)
    print(f"load: {total} requests from {CLIENTS} clients in {elapsed:.1f} s "
          f"({total / elapsed:.0f}/s), statuses {dict(load.statuses)}, latency median "
          f"{statistics.median(latencies) * 1000:.0f} ms, p99 "
          f"{latencies[int(len(latencies) * 0.99)] * 1000:.0f} ms, max "
          f"{latencies[-1] * 1000:.0f} ms; {len(load.tickets)} tickets bought")
    assert load.failures == []
    assert not [status for status in load.statuses if status >= 500]
    assert total > CLIENTS * 10, "the clients got through a meaningful number of requests"
    assert "database is locked" not in log and "Traceback" not in log
    assert not [line for line in log.splitlines() if " museum.access: " in line
                and line.split()[7].startswith("5")]
    events, tickets = check_store(db_path)
    # Concurrent patches commit in some order: the stored event is one acknowledged version.
    assert set(events) == set(load.versions)
    for event_id, (event, cancelled) in events.items():
        assert event in load.versions[event_id] and not cancelled
    assert load.tickets == tickets


# -- slow and stalled clients --------------------------------------------------------------

STALLED = 10  # connect, then send nothing
DRIBBLING = 10  # send a purchase's body one byte a second
NORMAL_ROUNDS = 10  # of three normal requests, while the slow clients hold their connections


def still_open(sock):
    """Whether the server has not closed `sock` (nothing to read, and no end of stream)."""
    timeout = sock.gettimeout()
    sock.setblocking(False)
    try:
        return sock.recv(1, socket.MSG_PEEK) != b""
    except BlockingIOError:
        return True
    finally:
        sock.settimeout(timeout)


def test_stalled_and_dribbling_clients_do_not_starve_the_others(tmp_path, config_text):
    days = open_days(config_text, 2)
    with running_server(tmp_path, config_text) as server:
        assert server.request("GET", "/v1.1/museum-hours", headers=VISITOR)[0] == 200
        stalled = [socket.create_connection(("127.0.0.1", server.port), timeout=10)
                   for _ in range(STALLED)]
        dribblers = []
        for number in range(DRIBBLING):
            body = json.dumps(ticket_body(number, days[0])).encode()
            sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
            sock.sendall(f"POST {TICKETS} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                         f"Authorization: {VISITOR['Authorization']}\r\n"
                         f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
                         f"Connection: close\r\n\r\n".encode())
            dribblers.append([sock, body])
        try:
            stop, ticks = threading.Event(), []

            def dribble():
                while not stop.wait(1.0):
                    for entry in dribblers:
                        entry[0].sendall(entry[1][:1])
                        entry[1] = entry[1][1:]
                    ticks.append(len(ticks))

            dribbling = threading.Thread(target=dribble)
            dribbling.start()
            try:
                wait_until(lambda: len(ticks) >= 2, 30, what="two bytes from every dribbling client")
                for number in range(100, 100 + NORMAL_ROUNDS):
                    for method, path, body, headers, expected in [
                            ("GET", "/healthz", None, {}, 200),
                            ("GET", f"{EVENTS}?limit=5", None, VISITOR, 200),
                            ("POST", TICKETS, ticket_body(number, days[1]), VISITOR, 201)]:
                        assert server.request(method, path, body, headers,
                                              timeout=30)[0] == expected
                # Answered before any slow client had sent its whole request: none of them
                # waited for a worker thread a slow client held.
                assert all(rest for _, rest in dribblers)
            finally:
                stop.set()
                dribbling.join()
            assert all(still_open(sock) for sock in stalled)
            assert all(still_open(sock) for sock, _ in dribblers)
            # The slow ones finish their requests and are served like anyone else.
            for sock, rest in dribblers:
                sock.sendall(rest)
                assert sock.recv(65536).startswith(b"HTTP/1.1 201 ")
            for sock in stalled:
                sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                assert sock.recv(65536).startswith(b"HTTP/1.1 200 ")
        finally:
            for sock in stalled + [sock for sock, _ in dribblers]:
                sock.close()
        log = server.log()
    assert "Traceback" not in log
