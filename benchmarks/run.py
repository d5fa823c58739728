"""Benchmark the museum service with wrk: against a bare Falcon ceiling, and against itself.

    python benchmarks/run.py                    # every case, 3 rounds x 10 s: about 21 minutes
    python benchmarks/run.py --quick ceiling    # 1 round x 2 s: a smoke check, writes no file

Every server runs on one core and wrk on another. A case compares two setups, A and B, on
the same scenarios: a warm-up on each, then rounds that run every scenario on A and right
after on B, so both see the same machine. The report gives B's req/s, latencies and errors,
each side's CPU time per request, and B's speed against A's as A's CPU time per request ÷
B's (median over rounds, the target's measure) and as B's req/s ÷ A's, and is written to
benchmarks/RESULTS.md. See benchmarks/README.md.
"""

import argparse
import collections
import contextlib
import importlib.metadata
import json
import os
import platform
import shlex
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
# The checkout's code, its test helpers and seed.py.
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(BENCH)]

import museum_credentials  # noqa: E402
import museum_door  # noqa: E402
import psycopg  # noqa: E402
import pg_cluster  # noqa: E402
import storage  # noqa: E402
from conftest import basic  # noqa: E402
from password_flood import FLOOD_THREADS, p50_p99, password_flood  # noqa: E402
from seed import seed  # noqa: E402
from serving import start_process, start_server  # noqa: E402

CONNECTIONS = 16  # wrk's connections in all, split evenly over a setup's instances
THREADS = 4  # waitress threads of every server, the service's default
WINDOW = 200  # events inside the ceiling case's listing window
SMALL, LARGE = 1_000, 100_000  # events in the scale cases' databases, tickets in the sales case's
SALES_EVENTS = 20  # the sales case's events, each once a week over its year: 3 a day
GENERAL_CAPACITY = 1_000_000  # places a day: capacity is on, and the buy-ticket runs fit in it
UPCOMING_DAYS = 1_000  # the scale cases' events start on one of the next 1,000 days
ADMITS_PER_SECOND = 5_000  # tickets sold beforehand per second of admit runs: more than admitted
EVENTS, TICKETS, ADMISSIONS = "/v1.1/special-events", "/v1.1/tickets", "/v1.1/admissions"
ORDERS = "/v1.1/orders"
PASSWORD = "benchmark-password"
# The admin role: reads, buys, admits and reads the sales report; as cheap to check as a gate.
USER = basic("scanner", PASSWORD)
QR_SECRET = "benchmark-qr-secret-of-at-least-32-characters"
# The outbox case's settings: mail on (to a server the held sender never reaches), and
# receivers on loopback allowed.
OUTBOX_CONFIG = ("[mail]\nurl = smtp://127.0.0.1:9\nfrom = tickets@museum.example.org\n"
                 "[webhooks]\nallow_private = true\n")


# -- scenarios -------------------------------------------------------------------------------

@dataclass
class Scenario:
    requests: object  # Data -> the requests wrk cycles over, as (method, path, body)
    connections: int = CONNECTIONS
    fresh: bool = False  # each request uses up a record: no run repeats another's requests


SCENARIOS = {
    "healthz": Scenario(lambda data: [("GET", "/healthz", "")]),
    "get-event": Scenario(lambda data: [("GET", f"{EVENTS}/{event_id}", "")
                                        for event_id in data.window_ids]),
    # The default listing's first page: events from today on, 10 a page.
    "list-events": Scenario(lambda data: [("GET", EVENTS, "")]),
    # The same with one connection per waitress thread: no request waits in waitress's queue.
    "list-events-c4": Scenario(lambda data: [("GET", EVENTS, "")], connections=THREADS),
    # Slow over 100,000 events, so one connection per waitress thread: 16 would spend a
    # 10 s run mostly waiting in waitress's queue.
    "list-month": Scenario(lambda data: [("GET", data.window(30), "")], connections=THREADS),
    "list-year": Scenario(lambda data: [("GET", data.window(365), "")], connections=THREADS),
    "list-page-100": Scenario(lambda data: [("GET", f"{EVENTS}?page=100", "")],
                              connections=THREADS),
    "hours": Scenario(lambda data: [("GET", "/v1.1/museum-hours", "")]),
    "qr": Scenario(lambda data: [("GET", f"{TICKETS}/{ticket_id}/qr", "")
                                 for ticket_id in data.buy(200)]),
    "buy-ticket": Scenario(lambda data: [("POST", TICKETS, json.dumps(data.ticket))]),
    # An order of four general tickets, all or nothing; and its quote, which writes nothing.
    "order-4": Scenario(lambda data: [("POST", ORDERS, json.dumps(data.order))]),
    "quote-4": Scenario(lambda data: [("POST", f"{ORDERS}?simulate=true",
                                       json.dumps(data.order))]),
    # The places left on each of the next 31 days, read from the kept counts.
    "availability-31": Scenario(lambda data: [("GET", data.availability(31), "")],
                                connections=THREADS),
    # A year of sales, every ticket of it grouped by day, kind and event.
    "sales-report-year": Scenario(lambda data: [("GET", data.sales_report(365), "")],
                                  connections=THREADS),
    # A door: 8 scanners, each scan a ticket for today never admitted before.
    "admit": Scenario(lambda data: [("POST", ADMISSIONS, json.dumps({"code": code}))
                                    for code in data.door_codes], connections=8, fresh=True),
}


@dataclass
class Case:
    a: str  # what setup A is
    b: str
    start: object  # Bench -> (servers of A, servers of B)
    targets: dict  # scenario -> minimum ratio B ÷ A (None: reported only)
    about: str  # one line for the report
    p50_targets: dict = field(default_factory=dict)  # scenario -> B's maximum p50 in ms


SCALE_SCENARIOS = {"list-events": None, "list-events-c4": None, "list-month": None,
                   "list-year": None, "list-page-100": None}
SCALE_ABOUT = (f"Every request is a listing the cache has not seen (benchmarks/uncached.py: "
               f"a listing cache that keeps nothing, each request still reading the events' "
               f"version as a miss does). All events are upcoming, starting on one of the next "
               f"{UPCOMING_DAYS:,} days, each on two dates a week apart: a month holds about "
               f"3% of them, a year 37%.")

PG_CPU = ("CPU time is the service's alone, not PostgreSQL's: here the req/s ratio says more "
          "than the CPU ratio.")

CASES = {
    "ceiling": Case(
        "ceiling", "service",
        lambda bench: ([bench.baseline()], [bench.service(bench.sqlite(
            "service", [*bench.window, *(past_event(n, bench.today)
                                         for n in range(SMALL - WINDOW))], door=True))]),
        {"healthz": 0.80, "get-event": 0.70, "list-events": 0.65, "hours": 0.75, "qr": 0.65,
         "buy-ticket": 0.18, "admit": None},
        f"The ceiling: benchmarks/baseline.py, a bare Falcon app on waitress. The service: "
        f"{SMALL:,} events ({WINDOW} in the listing window, cached), 200 tickets for qr, "
        f"tickets for today sold beforehand for admit.",
        p50_targets={"admit": 20}),
    "scale": Case(
        f"{SMALL:,} events", f"{LARGE:,} events",
        lambda bench: tuple([bench.service(bench.sqlite(f"scale-{count}",
                                                        upcoming_events(count, bench.today)),
                                           uncached=True)] for count in (SMALL, LARGE)),
        SCALE_SCENARIOS, f"sqlite. {SCALE_ABOUT}", p50_targets={"list-events": 50}),
    "scale-postgres": Case(
        f"{SMALL:,} events", f"{LARGE:,} events",
        lambda bench: tuple([bench.service(bench.postgres_db(f"scale_{count}",
                                                             upcoming_events(count, bench.today)),
                                           uncached=True)] for count in (SMALL, LARGE)),
        SCALE_SCENARIOS, f"PostgreSQL (fsync on, statistics up to date: ANALYZE after "
                         f"seeding), on the servers' core. {SCALE_ABOUT} {PG_CPU}"),
    "sales": Case(
        f"{SMALL:,} tickets", f"{LARGE:,} tickets",
        lambda bench: tuple([bench.service(bench.sqlite_sales(count))] for count in (SMALL, LARGE)),
        {"availability-31": None, "sales-report-year": None},
        f"sqlite. Tickets sold over the year that ends 30 days from today, half general entry "
        f"(capacity {GENERAL_CAPACITY:,} a day), half for {SALES_EVENTS} events taking place "
        f"once a week (capacity 1,000 each date).",
        p50_targets={"availability-31": 10, "sales-report-year": 100}),
    "before-after": Case(
        "before", "after", lambda bench: bench.before_and_after(LARGE),
        {"healthz": None, "get-event": None, "list-events": None, "hours": None,
         "availability-31": None, "sales-report-year": None, "buy-ticket": None},
        f"sqlite. Before: the service of the checkout `--before` names; after: this one, on "
        f"a copy of before's database migrated by this checkout. Both hold the ceiling "
        f"case's {WINDOW} events and the sales case's {LARGE:,} tickets (seeded by before's "
        f"store). A CPU ratio below 1 is a scenario that costs more CPU per request after.",
        p50_targets={"availability-31": 10, "sales-report-year": 100}),
    "orders": Case(
        "service", "service",
        lambda bench: tuple([bench.service(bench.sqlite(f"orders-{side}", bench.window))]
                            for side in ("a", "b")),
        {"buy-ticket": None, "order-4": None, "quote-4": None},
        f"sqlite, {WINDOW} events. A and B are the same service: the case compares the "
        f"scenarios, an order of 4 tickets (`order-4`) and its quote (`quote-4`) against one "
        f"ticket's sale (`buy-ticket`), by their CPU time per request (the goal: an order at "
        f"most 2x a sale's, a quote at most 1x)."),
    "outbox": Case(
        "without", "mail + 2 webhooks", lambda bench: bench.with_and_without_outbox(),
        {"buy-ticket": 1 / 1.3, "admit": 1 / 1.3},
        "sqlite, the ceiling case's records. Without: no mail, no webhook receiver. With: "
        "[mail] url set (a sale queues its buyer's mail) and two receivers of every change "
        "(an admission queues a delivery to each), all in the request's own transaction. "
        "The sender is held (benchmarks/unsent.py): what is measured is the request's cost, "
        "not the deliveries' later; the target is at most 1.3 times the CPU without."),
    "scale-out": Case(
        "1 instance", "2 instances", lambda bench: (bench.postgres(1), bench.postgres(2)),
        {"buy-ticket": None},
        "Instances on one durable PostgreSQL (fsync on), which shares the servers' core: what "
        f"a second process buys there, a floor for a second machine. {PG_CPU}"),
}


# -- servers and data --------------------------------------------------------------------------

# `python -c` this, then a checkout's path, then museum's arguments: runs that checkout's
# `museum` (its directory first on sys.path, before this checkout's).
RUN_OTHER_CHECKOUT = ("import runpy, sys; sys.path.insert(0, sys.argv.pop(1)); "
                      "runpy.run_module('museum_cli', run_name='__main__', alter_sys=True)")


class Bench:
    """One case's fixtures, and every process it started (stopped by `close`)."""

    def __init__(self, workdir, server_core, client_core, admit_seconds, before=None):
        self.workdir = workdir
        self.before = before  # another checkout, for the before-after case
        self.server_core, self.client_core = server_core, client_core
        self.admit_seconds = admit_seconds  # of every admit run on B, warm-up included
        self.servers = []
        self.pg_dir = self.pg_url = None
        # A realistic hash (N=2^17): each server checks it once, when `warm` logs in.
        self.config = (f"[server]\nthreads = {THREADS}\n[museum]\ntimezone = UTC\n"
                       f"[tickets]\nqr_secret = {QR_SECRET}\n"
                       f"[capacity]\ngeneral_per_day = {GENERAL_CAPACITY}\n[users]\n"
                       f"scanner = admin:{museum_credentials.hash_password(PASSWORD)}\n")
        self.today = datetime.now(timezone.utc).date()
        self.window = [{"eventId": str(uuid.uuid4()), "name": f"Exhibition {number:03d}",
                        "location": f"Gallery {number % 12 + 1}",
                        "eventDescription": "A guided tour, with a curator's questions at the end.",
                        "dates": [(self.today + timedelta(days=number % 60 + week)).isoformat()
                                  for week in (0, 7)], "price": 12.5}
                       for number in range(WINDOW)]  # the first takes place today
        tuesday = self.today + timedelta(days=(1 - self.today.weekday()) % 7 or 7)  # open
        self.ticket = {"ticketType": "general", "ticketDate": tuesday.isoformat(),
                       "email": "visitor@example.org"}
        self.order = {"items": [{"ticketType": "general", "ticketDate": tuesday.isoformat(),
                                 "quantity": 4}], "email": "family@example.org"}
        self.door_codes = []

    def on_server_core(self, start, *args, **options):
        """Call `start` with this process on the servers' core: what it forks stays there."""
        os.sched_setaffinity(0, {self.server_core})
        try:
            return start(*args, **options)
        finally:
            os.sched_setaffinity(0, {self.client_core})

    def spawn(self, start, *args, **options):
        """Start a server on the servers' core; `close` stops it."""
        self.servers.append(self.on_server_core(start, *args, **options))
        return self.servers[-1]

    def directory(self, name):
        path = self.workdir / name
        path.mkdir()
        return path

    def baseline(self):
        return self.spawn(start_process, self.directory("baseline"), "baseline",
                          str(BENCH / "baseline.py"), "--threads", str(THREADS))

    def sqlite(self, name, events, door=False):
        """A fresh sqlite file holding `events` and, with `door`, the admit scenario's tickets."""
        path = str(self.directory(name) / "museum.sqlite3")
        seed(path, events, self.door_tickets() if door else [])
        return path

    def sqlite_sales(self, count):
        """A fresh sqlite file with the sales case's `count` tickets (see `sales`)."""
        events, tickets = self.sales(count)
        path = str(self.directory(f"sales-{count}") / "museum.sqlite3")
        seed(path, events, tickets, general_capacity=GENERAL_CAPACITY)
        return path

    def sales(self, count):
        """(events, tickets): `count` tickets sold over the year that ends 30 days from
        today, every other one general entry, the others for SALES_EVENTS weekly events."""
        first = self.today - timedelta(days=334)
        events = [{"eventId": str(uuid.uuid4()), "name": f"Weekly tour {number:03d}",
                   "location": "Gallery 1", "eventDescription": "Every week.", "price": 15,
                   "capacity": 1000,
                   "dates": [(first + timedelta(days=number % 7 + 7 * week)).isoformat()
                             for week in range(52)]} for number in range(SALES_EVENTS)]
        tickets = []
        for n in range(count):
            ticket = {"ticketId": str(uuid.uuid4()), "ticketType": "general",
                      "ticketDate": (first + timedelta(days=n % 365)).isoformat(),
                      "email": "visitor@example.org", "price": 8.5, "currency": "EUR",
                      "confirmationCode": f"ticket-general-{n:06x}-{n % 2**20:05x}"}
            if n % 2:
                event = events[n // 2 % SALES_EVENTS]
                ticket.update(ticketType="event", eventId=event["eventId"],
                              ticketDate=event["dates"][n // 200 % 52],
                              confirmationCode=f"ticket-event-{n:06x}-{n % 2**20:05x}")
            tickets.append(ticket)
        return events, tickets

    def before_and_after(self, count):
        """([before's service], [this checkout's]) on the same records: the window's events
        and the sales case's `count` tickets, seeded by before's own store; after runs on a
        copy that this checkout migrates (the time it took is printed)."""
        if self.before is None:
            raise RuntimeError("the before-after case needs --before CHECKOUT")
        events, tickets = self.sales(count)
        directory = self.directory("before-after")
        records = directory / "records.json"
        records.write_text(json.dumps({"events": [*self.window, *events], "tickets": tickets,
                                       "general_capacity": GENERAL_CAPACITY}))
        before, after = directory / "before.sqlite3", directory / "after.sqlite3"
        subprocess.run([sys.executable, str(BENCH / "seed.py"), str(before), str(records)],
                       check=True, env={**os.environ, "PYTHONPATH": str(self.before)})
        shutil.copy(before, after)  # with its owner-only mode
        started = time.perf_counter()
        storage.open_store(str(after)).close()
        print(f"before-after: {count:,} tickets migrated in "
              f"{time.perf_counter() - started:.1f} s", flush=True)
        server = self.directory("server-before")
        return [self.warm(self.spawn(start_process, server, "server", "-c",
                                     RUN_OTHER_CHECKOUT, str(self.before), "serve",
                                     "--config", str(self.config_file(server)),
                                     "--port", "0", "--db", str(before)))], \
            [self.service(str(after))]

    def config_file(self, directory, more=""):
        """The benchmark's museum.ini, with `more` settings, written in `directory`."""
        path = directory / "museum.ini"
        path.write_text(self.config + more, encoding="utf-8")
        return path

    def postgres_db(self, name, events):
        """A fresh database holding `events` on this case's durable PostgreSQL cluster."""
        self.start_postgres()
        with psycopg.connect(self.pg_url, autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        url = self.pg_url.rsplit("/", 1)[0] + f"/{name}"
        seed(url, events, [])
        # What autovacuum does to a database that grew to this size; just after a bulk
        # insert, with no statistics yet, PostgreSQL plans page 100 about 40 times slower.
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("ANALYZE")
        return url

    def door_tickets(self):
        """Event tickets for today, enough for every admit run; their QR texts go to
        `door_codes`."""
        event_id = self.window[0]["eventId"]
        tickets = [{"ticketId": str(uuid.uuid4()), "ticketType": "event", "eventId": event_id,
                    "ticketDate": self.today.isoformat(), "email": "visitor@example.org",
                    "phone": None, "confirmationCode": f"ticket-event-{n:06x}-{n % 2**20:05x}",
                    "currency": "EUR"}
                   for n in range(ADMITS_PER_SECOND * self.admit_seconds + 1)]
        self.door_codes = [museum_door.qr_text(QR_SECRET, ticket["ticketId"],
                                               ticket["confirmationCode"]) for ticket in tickets]
        return tickets

    def service(self, db, uncached=False, unsent=False):
        """`museum serve` on database `db`; with `uncached` benchmarks/uncached.py's, with
        `unsent` benchmarks/unsent.py's, on the config with mail and webhooks allowed."""
        directory = self.directory(f"server-{len(self.servers)}")
        if not uncached and not unsent:
            return self.warm(self.spawn(start_server, directory, self.config, db=db))
        config = self.config_file(directory, OUTBOX_CONFIG if unsent else "")
        return self.warm(self.spawn(start_process, directory, "server",
                                    str(BENCH / ("unsent.py" if unsent else "uncached.py")),
                                    "serve", "--config", str(config), "--port", "0",
                                    "--db", db))

    def with_and_without_outbox(self):
        """([the service], [the same with mail and two webhook receivers of every change,
        its sender held]) on copies of one database: the ceiling case's window and the
        door's tickets."""
        plain = self.sqlite("outbox-without", self.window, door=True)
        hooked = str(self.directory("outbox-with") / "museum.sqlite3")
        shutil.copy(plain, hooked)
        store = storage.open_store(hooked)
        try:
            for number in range(2):
                store.add_webhook({
                    "webhookId": str(uuid.uuid4()), "url": f"http://127.0.0.1:9/{number}",
                    "secret": f"whsec_{'A' * 32}", "events": list(storage.WEBHOOK_EVENTS),
                    "createdAt": "2026-01-01T00:00:00Z"})
        finally:
            store.close()
        return [self.service(plain)], [self.service(hooked, unsent=True)]

    def postgres(self, instances):
        """`instances` servers on one durable PostgreSQL database (fsync on, as sqlite's)."""
        self.start_postgres()
        return [self.warm(self.spawn(start_server,
                                     self.directory(f"postgres-{instances}-{number}"),
                                     self.config, db=self.pg_url))
                for number in range(instances)]

    def start_postgres(self):
        if self.pg_url is None:
            self.pg_dir = tempfile.mkdtemp(prefix="museum-pg-")  # one the postgres user reaches
            self.pg_url = self.on_server_core(pg_cluster.start, self.pg_dir, durable=True)

    @staticmethod
    def warm(server):
        """Log in once: the one password check (about a second) is paid before measuring,
        and later requests find the credentials verified."""
        status, _, answer = server.request("GET", "/v1.1/museum-hours", headers=USER,
                                           timeout=60)
        if status != 200:
            raise RuntimeError(f"logging in answered {status}: {answer[:300]!r}")
        return server

    def close(self):
        for server in self.servers:
            server.stop()
        if self.pg_dir:
            pg_cluster.stop(self.pg_dir)


def past_event(number, today):
    first = today - timedelta(days=number % 3650 + 8)
    return {"eventId": str(uuid.uuid4()), "name": f"Past exhibition {number:06d}",
            "location": "Gallery 1", "eventDescription": "An exhibition that has closed.",
            "dates": [first.isoformat(), (first + timedelta(days=7)).isoformat()],
            "price": 10.0}


def upcoming_events(count, today):
    """`count` events, each starting on one of the next UPCOMING_DAYS days and returning a
    week later: all in the default listing."""
    events = []
    for number in range(count):
        first = today + timedelta(days=number % UPCOMING_DAYS)
        events.append({"eventId": str(uuid.uuid4()), "name": f"Exhibition {number:06d}",
                       "location": f"Gallery {number % 12 + 1}",
                       "eventDescription": "A guided tour, with a curator's questions.",
                       "dates": [first.isoformat(), (first + timedelta(days=7)).isoformat()],
                       "price": 12.5})
    return events


class Data:
    """What scenarios are built from: the seeded data, and tickets bought on `server`."""

    def __init__(self, bench, server):
        self.today, self.ticket, self.server = bench.today, bench.ticket, server
        self.order = bench.order
        self.window_ids = [event["eventId"] for event in bench.window]
        self.door_codes = bench.door_codes

    def window(self, days):
        """The listing of `days` days from today."""
        end = self.today + timedelta(days=days - 1)
        return f"{EVENTS}?startDate={self.today}&endDate={end}"

    def availability(self, days):
        return f"/v1.1/availability?startDate={self.today}&endDate=" \
               f"{self.today + timedelta(days=days - 1)}"

    def sales_report(self, days):
        """The report of the `days` days that end 30 days from today, as the sales case
        sold them."""
        end = self.today + timedelta(days=30)
        return f"/v1.1/reports/sales?startDate={end - timedelta(days=days - 1)}&endDate={end}"

    def buy(self, count):
        answers = [self.server.request("POST", TICKETS, self.ticket, USER)
                   for _ in range(count)]
        if any(status != 201 for status, _, _ in answers):
            raise RuntimeError(f"buying a ticket answered {answers[0][0]}: {answers[0][2]!r}")
        return [json.loads(body)["ticketId"] for _, _, body in answers]


# -- measuring ---------------------------------------------------------------------------------

@dataclass
class Measurement:
    rps: float
    p50_ms: float
    p99_ms: float
    errors: int  # non-2xx/3xx answers plus socket errors
    cpu_us: float  # the servers' CPU time per answered request: little moved by other load


def cpu_seconds(server):
    fields = Path(f"/proc/{server.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def peak_rss_mb(server):
    for line in Path(f"/proc/{server.process.pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024 / 1e6


def wrk(server, connections, seconds, requests_file):
    """One wrk run (it inherits this process's core); the figures scenario.lua prints."""
    result = subprocess.run(
        ["wrk", "-t", "1", "-c", str(connections), "-d", f"{seconds}s", "--timeout", "10s",
         "-H", f"Authorization: {USER['Authorization']}", "-s", str(BENCH / "scenario.lua"),
         f"http://127.0.0.1:{server.port}", "--", str(requests_file)],
        capture_output=True, text=True, timeout=seconds + 60)
    line = next((line for line in result.stdout.splitlines() if line.startswith("wrk-result ")),
                None)
    if result.returncode or line is None:
        raise RuntimeError(f"wrk failed ({result.returncode}):\n{result.stdout}{result.stderr}")
    return json.loads(line.removeprefix("wrk-result "))


def measure(servers, requests_file, seconds, connections):
    """Load every server of a setup at once, the connections split between them."""
    cpu_before = sum(map(cpu_seconds, servers))
    with ThreadPoolExecutor(len(servers)) as pool:
        reports = list(pool.map(lambda server: wrk(server, connections // len(servers),
                                                   seconds, requests_file), servers))
    requests = sum(report["requests"] for report in reports)
    if not requests or any(server.process.poll() is not None for server in servers):
        raise RuntimeError(f"no answers, or a server stopped:\n{servers[0].log()[-3000:]}")
    return Measurement(
        rps=sum(report["requests"] * 1e6 / report["duration_us"] for report in reports),
        p50_ms=max(report["p50_us"] for report in reports) / 1000,
        p99_ms=max(report["p99_us"] for report in reports) / 1000,
        errors=sum(report["status_errors"] + report["socket_errors"] for report in reports),
        cpu_us=(sum(map(cpu_seconds, servers)) - cpu_before) * 1e6 / requests)


def probe(servers, requests):
    """Send every read once (warming the image cache) and the first write; any failure
    stops the run, since a 401 answered quickly is no result."""
    reads = [request for request in requests if request[0] == "GET"]
    writes = [request for request in requests if request[0] != "GET"][:1]
    for server in servers:
        for method, path, body in reads + writes:
            status, _, answer = server.request(method, path, json.loads(body) if body else None,
                                               USER)
            if not 200 <= status < 400:
                raise RuntimeError(f"{method} {path} answered {status}: {answer[:300]!r}")


def run_case(bench, name, args):
    """{scenario: [(A, B) per round]} and B's peak RSS in MB."""
    case = CASES[name]
    a, b = case.start(bench)
    data = Data(bench, b[0])
    runs = {}  # scenario -> Runs
    scenarios = [each for each in case.targets if each in (args.scenarios or case.targets)]
    for scenario in scenarios:
        runs[scenario] = Runs(bench.workdir / f"{name}-{scenario}", SCENARIOS[scenario], data)
        probe(a + b, runs[scenario].probed)
        runs[scenario].measure(a, args.warmup)
        runs[scenario].measure(b, args.warmup, uses_up=True)
    pairs = {scenario: [] for scenario in scenarios}
    for round_number in range(1, args.rounds + 1):
        for scenario in scenarios:
            pair = (runs[scenario].measure(a, args.seconds),
                    runs[scenario].measure(b, args.seconds, uses_up=True))
            pairs[scenario].append(pair)
            print(f"{name} round {round_number}: {scenario:<13} {pair[0].rps:8.0f} "
                  f"{pair[1].rps:8.0f} req/s, {pair[0].cpu_us:6.0f} {pair[1].cpu_us:6.0f} "
                  f"CPU µs/req, CPU ratio {cpu_ratios([pair])[0]:.2f}, p50 "
                  f"{pair[0].p50_ms:.1f} / {pair[1].p50_ms:.1f} ms", flush=True)
    return pairs, max(map(peak_rss_mb, b))


class Runs:
    """A scenario's request files for wrk. A fresh scenario's requests are each sent to
    the service once: the first by the probe, then every run on B takes the next
    ADMITS_PER_SECOND per second of its length. A run on A is sent the slice B gets next:
    A is the ceiling there, which uses up nothing."""

    def __init__(self, prefix, scenario, data):
        self.prefix, self.scenario = prefix, scenario
        self.requests = scenario.requests(data)
        self.probed = self.requests[:1] if scenario.fresh else self.requests
        self.unused = self.requests[1:]
        self.files = 0

    def measure(self, servers, seconds, uses_up=False):
        requests = self.requests
        if self.scenario.fresh:
            count = ADMITS_PER_SECOND * seconds
            requests = self.unused[:count]
            if uses_up:
                self.unused = self.unused[count:]
            if len(requests) < count:
                raise RuntimeError(f"{self.prefix.name}: too few fresh records for a run")
        self.files += 1
        path = self.prefix.with_name(f"{self.prefix.name}-{self.files}.txt")
        path.write_text("".join(" ".join(request) + "\n" for request in requests))
        return measure(servers, path, seconds, self.scenario.connections)


# -- the login case: sign-ins under floods of wrong credentials ----------------------------------

FLOODERS = 16  # the flood's threads, in a process of its own
FLOOD_ADDRESSES = 200  # it rotates through 127.0.1.1 .. 127.0.1.200
FLOODS = {  # flood -> (name, password) of the n-th guess of a thread
    "one repeated wrong password": lambda thread, number: ("admin", "password123"),
    "random passwords": lambda thread, number: ("admin", f"guess-{thread}-{number}"),
    "random user names": lambda thread, number: (f"user-{thread}-{number}", "password123"),
}
LOGIN_TARGETS_MS = {"verified p99": 100, "device key first login": 100,
                    "password first login": 5000}


def flood(port, kind, seconds, answers):
    """FLOODERS threads sending the guesses of `kind` for `seconds`, each request from the
    next loopback address; the count of each status (or error) goes on `answers`. Runs at
    a lower priority: a remote attacker spends its own CPU, not the server's."""
    import http.client
    import itertools
    import threading
    from collections import Counter

    os.nice(10)
    deadline = time.monotonic() + seconds
    counts, lock = Counter(), threading.Lock()

    def guess(thread):
        for number in itertools.count():
            if time.monotonic() > deadline:
                return
            address = f"127.0.1.{(thread * 13 + number) % FLOOD_ADDRESSES + 1}"
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30,
                                                    source_address=(address, 0))
            try:
                connection.request("GET", "/v1.1/museum-hours",
                                   headers=basic(*FLOODS[kind](thread, number)))
                status = connection.getresponse().status
            except OSError as error:
                status = type(error).__name__
            finally:
                connection.close()
            with lock:
                counts[status] += 1

    workers = [threading.Thread(target=guess, args=(thread,)) for thread in range(FLOODERS)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    answers.put(dict(counts))


def timed(server, headers):
    started = time.perf_counter()
    status = server.request("GET", "/v1.1/museum-hours", headers=headers, timeout=60)[0]
    return status, (time.perf_counter() - started) * 1000


def read_until(server, deadline):
    """The verified user's reads, one every 10 ms until `deadline`: (status, ms) each."""
    reads = []
    while time.monotonic() < deadline:
        reads.append(timed(server, USER))
        time.sleep(0.01)
    return reads


def run_login(workdir, server_core, client_core, seconds):
    """Per flood, on a fresh server: the verified user's reads (p50/p99), a device key's and
    a password user's first login, the flood's answers and the server's peak RSS."""
    import multiprocessing

    key = museum_credentials.new_device_key()
    config = (f"[server]\nthreads = {THREADS}\n[museum]\ntimezone = UTC\n[log]\naccess = off\n"
              f"[users]\nadmin = admin:{museum_credentials.hash_password(PASSWORD)}\n"
              f"scanner = gate:{museum_credentials.hash_password(PASSWORD)}\n"
              f"staff = gate:{museum_credentials.hash_password(PASSWORD)}\n"
              f"door = gate:{museum_credentials.hash_key(key)}\n")
    results = {}
    for number, kind in enumerate(FLOODS):
        bench = Bench(workdir / f"login-{number}", server_core, client_core, admit_seconds=0)
        bench.config = config
        bench.workdir.mkdir()
        try:
            server = bench.warm(bench.spawn(start_server, bench.directory("server"), config,
                                            db=str(bench.workdir / "museum.sqlite3")))
            answers = multiprocessing.get_context("fork").Queue()
            flooder = multiprocessing.get_context("fork").Process(
                target=flood, args=(server.port, kind, seconds, answers))
            flooder.start()
            ends = time.monotonic() + seconds
            time.sleep(1)  # the flood is under way
            with ThreadPoolExecutor(1) as reader:
                reading = reader.submit(read_until, server, ends - 0.5)
                time.sleep(1)
                device = timed(server, basic("door", key))
                staff = timed(server, basic("staff", PASSWORD))
                reads = reading.result()
            counts = answers.get(timeout=60)
            flooder.join()
            quantiles = statistics.quantiles([ms for _, ms in reads], n=100)
            checks = server.log().count("wrong password for")
            results[kind] = {
                "verified reads": len(reads),
                "verified failed": sum(status != 200 for status, _ in reads),
                "verified p50": quantiles[49], "verified p99": quantiles[98],
                "device key first login": device[1], "device status": device[0],
                "password first login": staff[1], "password status": staff[0],
                "flood": counts, "checks": checks, "rss": peak_rss_mb(server)}
            print(f"login {kind}: {results[kind]}", flush=True)
        finally:
            bench.close()
    return results


def login_section(results, seconds, loadavg):
    """The login case's section of RESULTS.md."""
    rows = ["## login: sign-ins under floods of wrong credentials", "",
            f"Written by `benchmarks/run.py login` on "
            f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC; `/proc/loadavg` at start: `{loadavg}`. Per flood, a fresh `museum "
            f"serve` ({THREADS} threads, on one core) with passwords at the default cost "
            f"(scrypt N=2^17) and one device key; {FLOODERS} threads in another process (on "
            f"the other core, at nice 10) send {seconds} s of wrong credentials, each request "
            f"from the next of {FLOOD_ADDRESSES} loopback addresses. Meanwhile a user verified "
            f"before reads the hours every 10 ms; 2 s into the flood a device key and a "
            f"password user sign in for the first time. Targets: verified p99 < "
            f"{LOGIN_TARGETS_MS['verified p99']} ms, a device key's first login < "
            f"{LOGIN_TARGETS_MS['device key first login']} ms, a password's < "
            f"{LOGIN_TARGETS_MS['password first login'] / 1000:.0f} s, every one answered 200 "
            f"(the password's may be 429: told at once to retry while another check runs).",
            "",
            "| Flood | verified reads (failed) | p50 / p99 ms | device key first login ms "
            "| password first login ms | flood's answers | password checks run "
            "| server peak RSS MB | Result |",
            "|---|--:|--:|--:|--:|---|--:|--:|---|"]
    for kind, result in results.items():
        met = (result["verified failed"] == 0 and result["device status"] == 200
               # A first login without a device cookie is told at once to retry while
               # the flood keeps the one password lane busy: answered, never held.
               and result["password status"] in (200, 429)
               and all(result[name] < limit for name, limit in LOGIN_TARGETS_MS.items()))
        answers = ", ".join(f"{status}: {count:,}" for status, count in
                            sorted(result["flood"].items(), key=lambda item: str(item[0])))
        rows.append(
            f"| {kind} | {result['verified reads']:,} ({result['verified failed']}) "
            f"| {result['verified p50']:.1f} / {result['verified p99']:.1f} "
            f"| {result['device key first login']:.1f} ({result['device status']}) "
            f"| {result['password first login']:.0f} ({result['password status']}) "
            f"| {answers} | {result['checks']:,} | {result['rss']:.0f} "
            f"| {'met' if met else 'not met'} |")
    return "\n".join(rows + [""])


# -- the password-flood case: device keys and verified users beside a flood over every name --

FLOODED = {"admin": "admin", "gate": "gate", "gate2": "gate", "visitor": "visitor"}
OWNER, VERIFIED_NAME = "gate", "gate2"  # the flooded owner's device; a user verified before
FLOOD_TARGET_MS = 100  # p99 of device keys and of verified users, flooded


def run_password_flood(workdir, server_core, client_core, seconds):
    """Device keys and a verified user, timed one request after another (one every 10 ms)
    for `seconds` without a flood, then as long with one over every known name; then the
    flooded owner's one try without its device cookie and one with it. The server is a
    restart of the one that gave the owner's device its cookie: nothing is verified."""
    key = museum_credentials.new_device_key()
    with ThreadPoolExecutor(2) as pool:
        hashes = list(pool.map(museum_credentials.hash_password, [PASSWORD] * len(FLOODED)))
    config = (f"[server]\nthreads = {THREADS}\n[museum]\ntimezone = UTC\n[log]\naccess = off\n"
              "[users]\n" + "".join(f"{name} = {role}:{password_hash}\n" for (name, role),
                                     password_hash in zip(FLOODED.items(), hashes))
              + f"door = gate:{museum_credentials.hash_key(key)}\n")
    bench = Bench(workdir / "password-flood", server_core, client_core, admit_seconds=0)
    bench.workdir.mkdir()
    db = str(bench.workdir / "museum.sqlite3")
    try:
        first = bench.spawn(start_server, bench.directory("first"), config, db=db)
        owner = basic(OWNER, PASSWORD)
        _, headers, _ = first.request("GET", "/v1.1/admissions/summary", headers=owner,
                                      timeout=60)
        # (Versions before device cookies set none: then the try "with it" has none either.)
        cookie = headers.get("Set-Cookie", "none=").split(";")[0]
        first.stop()
        server = bench.spawn(start_server, bench.directory("server"), config, db=db)
        server.log_in(basic(VERIFIED_NAME, PASSWORD))
        timed = {"door": basic("door", key), "verified": basic(VERIFIED_NAME, PASSWORD)}
        results = {"quiet": flood_side(server, timed, seconds, flood=None),
                   "without credentials": flood_side(server, timed, seconds, flood=[])}
        results["flooded"] = flood_side(server, timed, seconds, flood=list(FLOODED),
                                        owner=owner, cookie=cookie)
        results["rss"] = peak_rss_mb(server)
    finally:
        bench.close()
    return results


def flood_side(server, timed, seconds, flood, owner=None, cookie=None):
    """The timed requests' p50/p99 per kind, the server's CPU ms per request and req/s over
    the side: without a flood (`flood` None), beside one with no credentials (`[]`) or
    with wrong passwords for the names `flood`; with `owner`, the owner's two tries."""
    flooding = contextlib.nullcontext({}) if flood is None \
        else password_flood(server.port, flood)
    times = {kind: [] for kind in timed}
    statuses = collections.Counter()
    with flooding as answers:
        cpu, began = cpu_seconds(server), time.monotonic()
        # At least 20 of each, however slow: enough for a p99 to mean something.
        while time.monotonic() < began + seconds or len(times["door"]) < 20:
            for kind, headers in timed.items():
                status, ms = timed_request(server, headers)
                statuses[status] += 1
                times[kind].append(ms)
                time.sleep(0.01)
        if owner:
            tries = {"owner without cookie": timed_request(server, owner),
                     "owner with cookie": timed_request(server, {**owner, "Cookie": cookie})}
        elapsed, cpu = time.monotonic() - began, cpu_seconds(server) - cpu
    requests = sum(statuses.values()) + sum(answers.values())
    side = {kind: p50_p99(values) for kind, values in times.items()}
    side.update(statuses=dict(statuses), flood=dict(answers), rps=requests / elapsed,
                cpu_ms=cpu * 1000 / requests)
    if owner:
        side.update(tries)
    print(f"password-flood {flood}: {side}", flush=True)
    return side


def timed_request(server, headers):
    """(status, ms) of one admission-summary request; a minute without an answer is
    "timeout" (as the versions before one password lane could take)."""
    started = time.perf_counter()
    try:
        status = server.request("GET", "/v1.1/admissions/summary", headers=headers,
                                timeout=60)[0]
    except TimeoutError:
        status = "timeout"
    return status, (time.perf_counter() - started) * 1000


def password_flood_section(results, seconds, loadavg):
    """The password-flood case's section of RESULTS.md."""
    rows = [
        "## password-flood: device keys and verified users beside a flood over every name", "",
        f"Written by `benchmarks/run.py password-flood` on "
        f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC; `/proc/loadavg` at start: "
        f"`{loadavg}`. A `museum serve` ({THREADS} threads, on one core) with {len(FLOODED)} "
        f"password users at the default cost (scrypt N=2^17) and one device key, restarted "
        f"after `{OWNER}` signed in once and got its device cookie. For {seconds} s a device "
        f"key and a user verified before each read the admission summary, one request every "
        f"10 ms; then as long while {FLOOD_THREADS} threads in another process (on the other "
        f"core, at nice 10) send requests without credentials, each from the next loopback "
        f"address; then as long while they send wrong passwords for every known name "
        f"instead. Then `{OWNER}`'s right password, once without its device "
        f"cookie and once with it. Target: both p99 < {FLOOD_TARGET_MS} ms under the flood, "
        f"every timed request 200, the owner's try with its cookie 200.", "",
        "| Side | device key p50 / p99 ms | verified p50 / p99 ms | timed answers "
        "| flood's answers | server req/s | server CPU ms per request |",
        "|---|--:|--:|---|---|--:|--:|"]
    for name in ("quiet", "without credentials", "flooded"):
        side = results[name]
        answers = ", ".join(f"{status}: {count:,}" for status, count in
                            sorted(side["flood"].items(), key=lambda item: str(item[0])))
        rows.append(f"| {name} | {side['door'][0]:.1f} / {side['door'][1]:.1f} "
                    f"| {side['verified'][0]:.1f} / {side['verified'][1]:.1f} "
                    f"| {side['statuses']} | {answers or '-'} | {side['rps']:,.0f} "
                    f"| {side['cpu_ms']:.2f} |")
    flooded = results["flooded"]
    met = (flooded["door"][1] < FLOOD_TARGET_MS and flooded["verified"][1] < FLOOD_TARGET_MS
           and set(flooded["statuses"]) == {200} and flooded["owner with cookie"][0] == 200)
    rows += ["", f"The flooded owner: without its device cookie "
             f"{flooded['owner without cookie'][0]} in "
             f"{flooded['owner without cookie'][1]:.0f} ms; with it "
             f"{flooded['owner with cookie'][0]} in {flooded['owner with cookie'][1]:.0f} ms. "
             f"Server peak RSS {results['rss']:.0f} MB. Result: "
             f"{'met' if met else 'not met'}.", ""]
    return "\n".join(rows)


def main_password_flood(args):
    """The password-flood case alone: its section of RESULTS.md is replaced, the rest kept."""
    return run_one_section(args, 4, run_password_flood, password_flood_section)


# -- the lookup case: a lost ticket found among a busy day's ----------------------------------

LOOKUP_TICKETS = 100_000  # tickets for today
LOOKUP_DEVICES = 60  # every lookup counts toward its user's limit: spread over device keys
LOOKUPS_PER_DEVICE = 20  # of the 30 a user may make in a minute
LOOKUP_TARGET_MS = 20  # p50 of every lookup


def seed_lookup(path, today):
    """LOOKUP_TICKETS general tickets for `today`, two per buyer, in one transaction (one
    fsynced sale each would take many minutes); then 25 more for one buyer, more than a
    lookup answers. Returns the tickets as (confirmation code, email)."""
    storage.open_store(path).close()  # this version's schema
    tickets = [(f"ticket-general-{number:06x}-{number * 7919 % 2**20:05x}",
                f"visitor{number // 2}@example.org") for number in range(LOOKUP_TICKETS)]
    tickets += [(f"ticket-general-{number:06x}-00000", "family@example.org")
                for number in range(LOOKUP_TICKETS, LOOKUP_TICKETS + 25)]
    with contextlib.closing(sqlite3.connect(path)) as conn, conn:
        conn.executemany(
            "INSERT INTO tickets (id, type, date, event_id, confirmation_code, email, phone) "
            "VALUES (?, 'general', ?, NULL, ?, ?, NULL)",
            [(str(uuid.uuid4()), today.isoformat(), code, email) for code, email in tickets])
    return tickets


def lookup_requests(tickets, count):
    """`count` lookups of four kinds in turn, each of another random ticket: by the buyer's
    email (its domain in capitals, as typed), by the code's random part, by the whole code,
    and by an email no one bought with."""
    import random

    chosen = random.Random(20261124).sample(tickets[:LOOKUP_TICKETS], count)
    kinds = [("email", lambda code, email: {"email": email.replace("example.org",
                                                                    "EXAMPLE.ORG")}),
             ("random part", lambda code, email: {"code": code[-12:]}),
             ("whole code", lambda code, email: {"code": code}),
             ("unknown email", lambda code, email: {"email": "x" + email})]
    return [(kinds[number % 4][0], kinds[number % 4][1](*ticket))
            for number, ticket in enumerate(chosen)]


def query_plans(path, today):
    """sqlite's plan of each lookup query, one line each: which index serves it."""
    from storage.sql import LOOKUP_BY_CODES, LOOKUP_BY_EMAIL

    plans = {}
    with contextlib.closing(sqlite3.connect(path)) as conn:
        for kind, query, params in (
                ("email", LOOKUP_BY_EMAIL, (today.isoformat(), "a@example.org", 20)),
                ("code", LOOKUP_BY_CODES, (today.isoformat(), "a", "b", 20))):
            rows = conn.execute(f"EXPLAIN QUERY PLAN {query}", params).fetchall()
            plans[kind] = "; ".join(row[-1] for row in rows)
    return plans


def run_lookup(workdir, server_core, client_core):
    """A fresh `museum serve` on LOOKUP_TICKETS tickets for today; lookups one after the
    other, each user (device key) making LOOKUPS_PER_DEVICE: {kind: [(status, ms, found)]}."""
    keys = [museum_credentials.new_device_key() for _ in range(LOOKUP_DEVICES)]
    config = (f"[server]\nthreads = {THREADS}\n[museum]\ntimezone = UTC\n[users]\n"
              + "".join(f"door-{number} = gate:{museum_credentials.hash_key(key)}\n"
                        for number, key in enumerate(keys)))
    bench = Bench(workdir, server_core, client_core, admit_seconds=0)
    bench.workdir.mkdir()
    path = str(bench.directory("db") / "museum.sqlite3")
    tickets = seed_lookup(path, bench.today)
    results = {}
    try:
        server = bench.spawn(start_server, bench.directory("server"), config, db=path)
        requests = lookup_requests(tickets, LOOKUP_DEVICES * LOOKUPS_PER_DEVICE)
        for number, (kind, body) in enumerate(requests):
            headers = basic(f"door-{number % LOOKUP_DEVICES}", keys[number % LOOKUP_DEVICES])
            started = time.perf_counter()
            status, _, answer = server.request("POST", f"{ADMISSIONS}/lookup", body, headers,
                                               timeout=60)
            elapsed = (time.perf_counter() - started) * 1000
            found = len(json.loads(answer)["tickets"]) if status == 200 else 0
            results.setdefault(kind, []).append((status, elapsed, found))
        family = server.request("POST", f"{ADMISSIONS}/lookup",
                                {"email": "family@example.org"}, basic("door-0", keys[0]))
        capped = len(json.loads(family[2])["tickets"])
        rss = peak_rss_mb(server)
    finally:
        bench.close()
    return results, capped, rss, query_plans(path, bench.today)


def lookup_section(results, capped, rss, plans, loadavg):
    """The lookup case's section of RESULTS.md."""
    every = [entry for entries in results.values() for entry in entries]
    rows = ["## lookup: a lost ticket found among 100,000 of the day", "",
            f"Written by `benchmarks/run.py lookup` on "
            f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC; `/proc/loadavg` at start: "
            f"`{loadavg}`. A fresh `museum serve` ({THREADS} threads, on one core) on sqlite "
            f"with {LOOKUP_TICKETS:,} general tickets for today (two per buyer); "
            f"{len(every):,} lookups one after the other from the other core, by "
            f"{LOOKUP_DEVICES} device keys ({LOOKUPS_PER_DEVICE} each: every lookup counts "
            f"toward its user's limit of 30 a minute), each of another random ticket. Target: "
            f"p50 <= {LOOKUP_TARGET_MS} ms over every lookup, every one answered 200. A buyer "
            f"with 25 tickets gets {capped} of them. Server peak RSS: {rss:.0f} MB.", "",
            "| Lookup | lookups (failed) | tickets found (median) | p50 / p99 ms |",
            "|---|--:|--:|--:|"]
    for kind, entries in [*results.items(), ("all", every)]:
        quantiles = statistics.quantiles([ms for _, ms, _ in entries], n=100)
        failed = sum(status != 200 for status, _, _ in entries)
        found = statistics.median(count for _, _, count in entries)
        rows.append(f"| {kind} | {len(entries):,} ({failed}) | {found:g} "
                    f"| {quantiles[49]:.2f} / {quantiles[98]:.2f} |")
    p50 = statistics.quantiles([ms for _, ms, _ in every], n=100)[49]
    met = p50 <= LOOKUP_TARGET_MS and all(status == 200 for status, _, _ in every)
    rows += ["", f"Result: {'met' if met else 'not met'}. sqlite's plans: by email "
             f"`{plans['email']}`; by code `{plans['code']}`.", ""]
    return "\n".join(rows)


def main_lookup(args):
    """The lookup case alone: its section of RESULTS.md is replaced, the rest kept."""
    cores = sorted(os.sched_getaffinity(0))
    loadavg = Path("/proc/loadavg").read_text().strip()
    os.sched_setaffinity(0, {cores[-1]})
    with tempfile.TemporaryDirectory(prefix="museum-bench-") as workdir:
        section = lookup_section(*run_lookup(Path(workdir) / "lookup", cores[0], cores[-1]),
                                 loadavg)
    print("\n" + section)
    output = args.output or (None if args.quick else BENCH / "RESULTS.md")
    if output:
        write_section(output, section)
    return 0


# -- the door's list -------------------------------------------------------------------------

LIST_TICKETS = 10_000  # tickets for today
LIST_ADMITTED = 3_000  # of those, admitted already: a morning's list
LIST_EVENTS = 4  # events of the day; a fifth of the tickets are for them
LIST_READS = 200  # GETs of the whole list, one after the other
LIST_ADMITS = 500  # admissions measured, one after the other, beside the list
LIST_TARGETS = {"size bytes": 1_000_000, "list p50 ms": 200, "admit p50 ms": 20}


def seed_door_list(path, today):
    """LIST_TICKETS tickets for `today` (a fifth for LIST_EVENTS events), LIST_ADMITTED of
    them admitted, written in one transaction; returns [(ticket id, code)] of the others."""
    store = storage.open_store(path)
    events = [{"eventId": str(uuid.uuid4()), "name": f"Gallery talk {number}",
               "location": "Hall", "eventDescription": "A talk.", "dates": [today.isoformat()],
               "price": 5} for number in range(LIST_EVENTS)]
    store.create_events(events)
    store.close()
    tickets = []
    for number in range(LIST_TICKETS):
        event = events[number % LIST_EVENTS] if number % 5 == 0 else None
        kind = "event" if event else "general"
        tickets.append((str(uuid.uuid4()), kind, event and event["eventId"],
                        museum_door.new_confirmation_code(kind)))
    admitted_at = f"{today.isoformat()}T08:30:00Z"
    with contextlib.closing(sqlite3.connect(path)) as conn, conn:
        conn.executemany(
            "INSERT INTO tickets (id, type, date, event_id, confirmation_code, email, phone, "
            "price_minor, currency) VALUES (?, ?, ?, ?, ?, 'visitor@example.org', NULL, 500, "
            "'EUR')", [(ticket_id, kind, today.isoformat(), event_id, code)
                       for ticket_id, kind, event_id, code in tickets])
        conn.executemany("INSERT INTO admissions (ticket_id, admitted_at, admitted_by) "
                         "VALUES (?, ?, 'door-north')",
                         [(ticket[0], admitted_at) for ticket in tickets[:LIST_ADMITTED]])
    return [(ticket_id, code) for ticket_id, _, _, code in tickets[LIST_ADMITTED:]]


def run_door_list(workdir, server_core, client_core):
    """A fresh `museum serve` on the seeded day: the whole list read LIST_READS times, as
    many with its ETag (304) and since its cursor, then LIST_ADMITS admissions by QR code,
    each request on a new connection: {scenario: [ms]}, the list's size and the server's
    peak RSS."""
    key = museum_credentials.new_device_key()
    config = (f"[server]\nthreads = {THREADS}\n[museum]\ntimezone = Europe/Berlin\n"
              f"[tickets]\nqr_secret = {QR_SECRET}\n"
              f"[users]\ndoor-north = gate:{museum_credentials.hash_key(key)}\n")
    headers = basic("door-north", key)
    bench = Bench(workdir, server_core, client_core, admit_seconds=0)
    bench.workdir.mkdir()
    path = str(bench.directory("db") / "museum.sqlite3")
    waiting = seed_door_list(path, bench.today)
    timings = {}

    def timed_request(scenario, method, target, body=None, extra=None):
        started = time.perf_counter()
        status, answer_headers, answer = server.request(method, target, body,
                                                        {**headers, **(extra or {})})
        timings.setdefault(scenario, []).append((time.perf_counter() - started) * 1000)
        return status, answer_headers, answer

    try:
        server = bench.spawn(start_server, bench.directory("server"), config, db=path)
        server.log_in(headers)
        for _ in range(LIST_READS):
            status, answer_headers, whole = timed_request("list", "GET", f"{ADMISSIONS}/list")
            assert status == 200, status
        etag = {name.lower(): value for name, value in answer_headers.items()}["etag"]
        listed = json.loads(whole)
        assert len(listed["tickets"]) == LIST_TICKETS, len(listed["tickets"])
        for _ in range(LIST_READS):
            status = timed_request("list 304", "GET", f"{ADMISSIONS}/list",
                                   extra={"If-None-Match": etag})[0]
            assert status == 304, status
            status = timed_request("list since", "GET",
                                   f"{ADMISSIONS}/list?since={listed['cursor']}")[0]
            assert status == 200, status
        for ticket_id, code in waiting[:LIST_ADMITS]:
            status = timed_request("admit", "POST", ADMISSIONS, {
                "code": museum_door.qr_text(QR_SECRET, ticket_id, code)}, {
                    "Idempotency-Key": f"scan-{ticket_id}"})[0]
            assert status == 201, status
        rss = peak_rss_mb(server)
    finally:
        bench.close()
    return timings, len(whole), rss


def door_list_section(timings, size, rss, loadavg):
    """The door-list case's section of RESULTS.md."""
    p50 = {scenario: statistics.median(values) for scenario, values in timings.items()}
    figures = {"size bytes": size, "list p50 ms": p50["list"], "admit p50 ms": p50["admit"]}
    met = all(figures[name] <= target for name, target in LIST_TARGETS.items())
    rows = [f"## door-list: the day's list of {LIST_TICKETS:,} tickets at the door", "",
            f"Written by `benchmarks/run.py door-list` on "
            f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC; `/proc/loadavg` at start: "
            f"`{loadavg}`. A fresh `museum serve` ({THREADS} threads, on one core) on sqlite "
            f"with {LIST_TICKETS:,} tickets for today ({LIST_ADMITTED:,} admitted, a fifth "
            f"for {LIST_EVENTS} events), requests one after the other from the other core, "
            f"each on a new connection with a device key: the whole list {LIST_READS} times, "
            f"then with its ETag (304) and since its cursor as many times each, then "
            f"{LIST_ADMITS} admissions by QR code with an Idempotency-Key. Targets: the list "
            f"under {LIST_TARGETS['size bytes']:,} bytes, its p50 under "
            f"{LIST_TARGETS['list p50 ms']} ms, admitting p50 <= "
            f"{LIST_TARGETS['admit p50 ms']} ms. Server peak RSS: {rss:.0f} MB.", "",
            f"The whole list: {size:,} bytes.", "",
            "| Request | requests | p50 / p99 ms |", "|---|--:|--:|"]
    for scenario, values in timings.items():
        quantiles = statistics.quantiles(values, n=100)
        rows.append(f"| {scenario} | {len(values):,} | {quantiles[49]:.2f} / "
                    f"{quantiles[98]:.2f} |")
    rows += ["", f"Result: {'met' if met else 'not met'}.", ""]
    return "\n".join(rows)


def main_door_list(args):
    """The door-list case alone: its section of RESULTS.md is replaced, the rest kept."""
    cores = sorted(os.sched_getaffinity(0))
    loadavg = Path("/proc/loadavg").read_text().strip()
    os.sched_setaffinity(0, {cores[-1]})
    with tempfile.TemporaryDirectory(prefix="museum-bench-") as workdir:
        section = door_list_section(*run_door_list(Path(workdir) / "door-list", cores[0],
                                                   cores[-1]), loadavg)
    print("\n" + section)
    output = args.output or (None if args.quick else BENCH / "RESULTS.md")
    if output:
        write_section(output, section)
    return 0


def write_section(path, section):
    """Replace the section of `path` that starts with the same heading, or append it."""
    heading = section.splitlines()[0]
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    before, found, after = text.partition(heading)
    if found:
        following = after.find("\n## ")
        after = after[following + 1:] if following >= 0 else ""
    else:
        before, after = text.rstrip("\n") + "\n\n", ""
    path.write_text(before + section + ("\n" + after if after else ""), encoding="utf-8")


# -- the report ------------------------------------------------------------------------------

def medians(rounds, side):
    """One setup's figures (side 0: A, 1: B), each the median over the rounds."""
    return {figure: statistics.median(getattr(pair[side], figure) for pair in rounds)
            for figure in ("rps", "p50_ms", "p99_ms", "cpu_us")}


def cpu_ratios(rounds):
    """Per round, A's CPU time per request ÷ B's: B's speed against A's, from what each
    server spent rather than from what it answered in a period that other programs share."""
    return [first.cpu_us / second.cpu_us for first, second in rounds]


def rps_ratios(rounds):
    return [second.rps / first.rps for first, second in rounds]


def verdict(case, scenario, rounds):
    """(the scenario's targets as text, its result): the median CPU ratio and B's p50,
    each met only with no failed request."""
    ratio_target, p50_target = case.targets[scenario], case.p50_targets.get(scenario)
    targets = ([f">= {ratio_target:.2f}"] if ratio_target is not None else []) + \
        ([f"p50 <= {p50_target} ms"] if p50_target is not None else [])
    if not targets:
        return "-", "reported only"
    if any(pair[side].errors for pair in rounds for side in (0, 1)):
        return ", ".join(targets), "not met (errors)"
    ratio = statistics.median(cpu_ratios(rounds))
    met = (ratio_target is None or ratio >= ratio_target) and \
        (p50_target is None or medians(rounds, 1)["p50_ms"] <= p50_target)
    return ", ".join(targets), "met" if met else "not met"


def case_table(name, pairs, rss_mb):
    case = CASES[name]
    rows = [f"## {name}: {case.b} ÷ {case.a}", "",
            f"{case.about} Peak RSS of {case.b} at the end: {rss_mb:.1f} MB.", "",
            f"| Scenario | connections | {case.b} req/s | p50 / p99 ms | errors "
            f"| {case.a} req/s | p50 / p99 ms | errors | CPU µs/req ({case.b} / {case.a}) "
            f"| CPU ratio (median) | CPU ratio per round | req/s ratio (median) | Target "
            f"| Result |",
            "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|--:|---|---|"]
    for scenario, rounds in pairs.items():
        a, b = medians(rounds, 0), medians(rounds, 1)
        a_errors, b_errors = (sum(pair[side].errors for pair in rounds) for side in (0, 1))
        ratios = cpu_ratios(rounds)
        target, result = verdict(case, scenario, rounds)
        rows.append(
            f"| {scenario} | {SCENARIOS[scenario].connections} | {b['rps']:,.0f} "
            f"| {b['p50_ms']:.2f} / {b['p99_ms']:.2f} | {b_errors} | {a['rps']:,.0f} "
            f"| {a['p50_ms']:.2f} / {a['p99_ms']:.2f} | {a_errors} "
            f"| {b['cpu_us']:,.0f} / {a['cpu_us']:,.0f} "
            f"| **{statistics.median(ratios):.2f}** | {', '.join(f'{r:.2f}' for r in ratios)} "
            f"| {statistics.median(rps_ratios(rounds)):.2f} | {target} | {result} |")
    return rows + [""]


def summary(results):
    """One line: how many targets were met, and which were not."""
    verdicts = [(f"{name} {scenario}", verdict(CASES[name], scenario, rounds)[1])
                for name, (pairs, _) in results.items() for scenario, rounds in pairs.items()]
    judged = [(what, result) for what, result in verdicts if result != "reported only"]
    missed = [what for what, result in judged if result != "met"]
    return (f"**Targets met: {len(judged) - len(missed)} of {len(judged)}**"
            + (f" (not met: {', '.join(missed)})." if missed else "."))


def machine(workdir, load_at_start):
    cpu = next((line.split(":", 1)[1].strip() for line in
                Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("model name")),
               "unknown")
    mounts = [line.split() for line in Path("/proc/mounts").read_text().splitlines()]
    filesystem = max((m for m in mounts if str(workdir).startswith(m[1].rstrip("/") + "/")),
                     key=lambda m: len(m[1]))[2]  # tmpfs would make fsync, so buy-ticket, free
    wrk_version = subprocess.run(["wrk", "-v"], capture_output=True, text=True).stdout
    return [("nproc / CPU", f"{os.cpu_count()} / {cpu}"),
            ("Python / Falcon / waitress", f"{platform.python_version()} / "
             f"{importlib.metadata.version('falcon')} / {importlib.metadata.version('waitress')}"),
            ("SQLite / database filesystem", f"{sqlite3.sqlite_version} / {filesystem}"),
            ("wrk", wrk_version.split(" Copyright")[0].removeprefix("wrk ").strip()),
            ("Load average (1 min) at start / end",
             f"{load_at_start:.2f} / {os.getloadavg()[0]:.2f}")]


def report(results, args, facts, elapsed):
    lines = ["# Benchmark results", "",
             f"Written by `benchmarks/run.py` on {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC "
             f"in {elapsed / 60:.1f} minutes. Do not edit: run it again.", "",
             f"Command: `{shlex.join(['python', 'benchmarks/run.py', *sys.argv[1:]])}`", "",
             f"{args.rounds} round(s) of {args.seconds} s per scenario and setup after a "
             f"{args.warmup} s warm-up; wrk with the scenario's connections (split evenly over "
             f"a setup's instances) on one core, every server on the other, {THREADS} waitress "
             f"threads each. Latencies are the slowest instance's, medians over rounds. A target "
             f"is met only when no request failed.", "", summary(results), "",
             "| Machine | |", "|---|---|", *(f"| {name} | {value} |" for name, value in facts), ""]
    for name, (pairs, rss_mb) in results.items():
        lines += case_table(name, pairs, rss_mb)
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cases", nargs="*", metavar="CASE",
                        help=f"any of {', '.join(CASES)} (default: all); or login alone, "
                             f"or password-flood, lookup or door-list alone")
    parser.add_argument("--scenarios", nargs="+", metavar="SCENARIO",
                        help="only these of each case's scenarios (default: all)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=10, help="per measurement")
    parser.add_argument("--warmup", type=int, default=2, help="seconds per scenario and setup")
    parser.add_argument("--quick", action="store_true",
                        help="1 round of 2 s after 1 s: a smoke check; writes no file")
    parser.add_argument("--output", type=Path, help="default: benchmarks/RESULTS.md, "
                                                    "none with --quick")
    parser.add_argument("--before", type=Path, metavar="CHECKOUT",
                        help="the before-after case's other checkout (a git worktree of an "
                             "earlier commit); that case runs only when named")
    args = parser.parse_args(argv)
    args.cases = args.cases or [name for name in CASES if name != "before-after"]
    if "before-after" in args.cases and args.before is None:
        parser.error("the before-after case needs --before CHECKOUT")
    if args.cases == ["login"]:
        return main_login(args)
    if args.cases == ["password-flood"]:
        return main_password_flood(args)
    if args.cases == ["lookup"]:
        return main_lookup(args)
    if args.cases == ["door-list"]:
        return main_door_list(args)
    if set(args.cases) - set(CASES):
        parser.error(f"unknown case: {', '.join(set(args.cases) - set(CASES))}")
    if set(args.scenarios or ()) - set(SCENARIOS):
        parser.error(f"unknown scenario: {', '.join(set(args.scenarios) - set(SCENARIOS))}")
    if args.quick:
        args.rounds, args.seconds, args.warmup = 1, 2, 1
    elif args.output is None:
        args.output = BENCH / "RESULTS.md"
    if shutil.which("wrk") is None:
        parser.exit(2, "wrk is missing: apt-get install wrk\n")
    cores = sorted(os.sched_getaffinity(0))
    if len(cores) < 2:
        parser.exit(2, "needs two CPUs: one for the servers, one for wrk\n")
    load_at_start, began = os.getloadavg()[0], time.monotonic()
    os.sched_setaffinity(0, {cores[1]})  # this script and wrk stay off the servers' core
    with tempfile.TemporaryDirectory(prefix="museum-bench-") as workdir:
        results = {}
        for name in args.cases:
            bench = Bench(Path(workdir) / name, cores[0], cores[1],
                          admit_seconds=args.warmup + args.rounds * args.seconds,
                          before=args.before and args.before.resolve())
            bench.workdir.mkdir()
            try:
                results[name] = run_case(bench, name, args)
            finally:
                bench.close()
        text = report(results, args, machine(Path(workdir), load_at_start),
                      time.monotonic() - began)
    print("\n" + text)
    if args.output:
        args.output.write_text(text, encoding="utf-8")
    return 0


def main_login(args):
    """The login case alone: its section of RESULTS.md is replaced, the rest kept."""
    return run_one_section(args, 6, run_login, login_section)


def run_one_section(args, quick_seconds, run, section_of):
    """Run one case (`run`, server on the first core, clients on the last) and replace its
    section of RESULTS.md (or --output; --quick writes none) with `section_of` its results."""
    cores = sorted(os.sched_getaffinity(0))
    seconds = quick_seconds if args.quick else args.seconds
    loadavg = Path("/proc/loadavg").read_text().strip()
    os.sched_setaffinity(0, {cores[-1]})
    with tempfile.TemporaryDirectory(prefix="museum-bench-") as workdir:
        results = run(Path(workdir), cores[0], cores[-1], seconds)
    section = section_of(results, seconds, loadavg)
    print("\n" + section)
    output = args.output or (None if args.quick else BENCH / "RESULTS.md")
    if output:
        write_section(output, section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
