"""Benchmark the museum service with wrk: against a bare Falcon ceiling, and against itself.

    python benchmarks/run.py                    # every case, 3 rounds x 10 s: about 12 minutes
    python benchmarks/run.py --quick ceiling    # 1 round x 2 s: a smoke check, writes no file

Every server runs on one core and wrk on another. A case compares two setups, A and B, on
the same scenarios: a warm-up on each, then rounds that run every scenario on A and right
after on B, so both see the same machine. The report gives B's req/s, latencies and errors,
each side's CPU time per request, and the ratio B ÷ A (median over rounds) against the
case's target, and is written to benchmarks/RESULTS.md. See benchmarks/README.md.
"""

import argparse
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
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]  # the checkout's code and its test helpers

import museum_config  # noqa: E402
import pg_cluster  # noqa: E402
import storage  # noqa: E402
from conftest import basic  # noqa: E402
from serving import start_process, start_server  # noqa: E402

CONNECTIONS = 16  # in all, split evenly over a setup's instances
THREADS = 4  # waitress threads of every server, the service's default
WINDOW = 200  # events inside the listing window, in every database
SMALL, LARGE = 1_000, 100_000  # events in the scale case's databases
EVENTS, TICKETS = "/v1.1/special-events", "/v1.1/tickets"
VISITOR = basic("visitor", "benchmark-visitor-password")


# -- scenarios -------------------------------------------------------------------------------
# Each: the requests wrk cycles over, as (method, path, body), built from the seeded data.

SCENARIOS = {
    "healthz": lambda data: [("GET", "/healthz", "")],
    "get-event": lambda data: [("GET", f"{EVENTS}/{event_id}", "")
                               for event_id in data.window_ids],
    "list-events": lambda data: [("GET", f"{EVENTS}?startDate={data.today}&limit=10", "")],
    "hours": lambda data: [("GET", "/v1.1/museum-hours", "")],
    "qr": lambda data: [("GET", f"{TICKETS}/{ticket_id}/qr", "") for ticket_id in data.buy(200)],
    "buy-ticket": lambda data: [("POST", TICKETS, json.dumps(data.ticket))],  # each a new sale
}


@dataclass
class Case:
    a: str  # what setup A is
    b: str
    start: object  # Bench -> (servers of A, servers of B)
    targets: dict  # scenario -> minimum ratio B ÷ A (None: reported only)
    about: str  # one line for the report


CASES = {
    "ceiling": Case(
        "ceiling", "service", lambda bench: ([bench.baseline()], [bench.service(SMALL)]),
        {"healthz": 0.85, "get-event": 0.70, "list-events": 0.35, "hours": 0.70, "qr": 0.55,
         "buy-ticket": 0.18},
        f"The ceiling: benchmarks/baseline.py, a bare Falcon app on waitress. The service: "
        f"{SMALL:,} events ({WINDOW} in the listing window), 200 tickets for qr."),
    "scale": Case(
        f"{SMALL:,} events", f"{LARGE:,} events",
        lambda bench: ([bench.service(SMALL)], [bench.service(LARGE)]),
        {"list-events": 0.80, "get-event": None},
        f"Whether a request's cost grows with history: the same {WINDOW} events in the "
        f"window, the others past."),
    "scale-out": Case(
        "1 instance", "2 instances", lambda bench: (bench.postgres(1), bench.postgres(2)),
        {"buy-ticket": None},
        "Instances on one durable PostgreSQL (fsync on), which shares the servers' core: what "
        "a second process buys there, a floor for a second machine."),
}


# -- servers and data --------------------------------------------------------------------------

class Bench:
    """One case's fixtures, and every process it started (stopped by `close`)."""

    def __init__(self, workdir, server_core, client_core):
        self.workdir = workdir
        self.server_core, self.client_core = server_core, client_core
        self.servers = []
        self.pg_dir = self.pg_url = None
        self.config = (f"[server]\nthreads = {THREADS}\n[museum]\ntimezone = UTC\n[users]\n"
                       f"visitor = visitor:{museum_config.hash_password('benchmark-visitor-password')}\n")
        self.today = datetime.now(timezone.utc).date()
        self.window = [{"eventId": str(uuid.uuid4()), "name": f"Exhibition {number:03d}",
                        "location": f"Gallery {number % 12 + 1}",
                        "eventDescription": "A guided tour, with a curator's questions at the end.",
                        "dates": [(self.today + timedelta(days=number % 60 + week)).isoformat()
                                  for week in (0, 7)], "price": 12.5}
                       for number in range(WINDOW)]
        tuesday = self.today + timedelta(days=(1 - self.today.weekday()) % 7 or 7)  # open
        self.ticket = {"ticketType": "general", "ticketDate": tuesday.isoformat(),
                       "email": "visitor@example.org"}

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

    def service(self, events):
        """`museum serve` on a fresh sqlite file with `events` events, the window's among them."""
        directory = self.directory(f"service-{events}")
        store = storage.open_store(str(directory / "museum.sqlite3"))
        try:
            for event in self.window:
                store.create_event(event)
        finally:
            store.close()
        add_history(directory / "museum.sqlite3", events - WINDOW, self.today)
        return self.spawn(start_server, directory, self.config)

    def postgres(self, instances):
        """`instances` servers on one durable PostgreSQL database (fsync on, as sqlite's)."""
        if self.pg_url is None:
            self.pg_dir = tempfile.mkdtemp(prefix="museum-pg-")  # one the postgres user reaches
            self.pg_url = self.on_server_core(pg_cluster.start, self.pg_dir, durable=True)
        return [self.spawn(start_server, self.directory(f"postgres-{instances}-{number}"),
                           self.config, db=self.pg_url) for number in range(instances)]

    def close(self):
        for server in self.servers:
            server.stop()
        if self.pg_dir:
            pg_cluster.stop(self.pg_dir)


def add_history(db_path, count, today):
    """`count` past events, stored in one transaction: one fsynced transaction each would
    take a minute or more for 100,000."""
    store = storage.open_store(str(db_path))
    try:
        store.create_events([past_event(number, today) for number in range(count)])
    finally:
        store.close()


def past_event(number, today):
    first = today - timedelta(days=number % 3650 + 8)
    return {"eventId": str(uuid.uuid4()), "name": f"Past exhibition {number:06d}",
            "location": "Gallery 1", "eventDescription": "An exhibition that has closed.",
            "dates": [first.isoformat(), (first + timedelta(days=7)).isoformat()],
            "price": 10.0}


class Data:
    """What scenarios are built from: the seeded data, and tickets bought on `server`."""

    def __init__(self, bench, server):
        self.today, self.ticket, self.server = bench.today, bench.ticket, server
        self.window_ids = [event["eventId"] for event in bench.window]

    def buy(self, count):
        answers = [self.server.request("POST", TICKETS, self.ticket, VISITOR)
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
         "-H", f"Authorization: {VISITOR['Authorization']}", "-s", str(BENCH / "scenario.lua"),
         f"http://127.0.0.1:{server.port}", "--", str(requests_file)],
        capture_output=True, text=True, timeout=seconds + 60)
    line = next((line for line in result.stdout.splitlines() if line.startswith("wrk-result ")),
                None)
    if result.returncode or line is None:
        raise RuntimeError(f"wrk failed ({result.returncode}):\n{result.stdout}{result.stderr}")
    return json.loads(line.removeprefix("wrk-result "))


def measure(servers, requests_file, seconds):
    """Load every server of a setup at once, the connections split between them."""
    cpu_before = sum(map(cpu_seconds, servers))
    with ThreadPoolExecutor(len(servers)) as pool:
        reports = list(pool.map(lambda server: wrk(server, CONNECTIONS // len(servers),
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
                                               VISITOR)
            if not 200 <= status < 400:
                raise RuntimeError(f"{method} {path} answered {status}: {answer[:300]!r}")


def run_case(bench, name, args):
    """{scenario: [(A, B) per round]} and B's peak RSS in MB."""
    case = CASES[name]
    a, b = case.start(bench)
    data = Data(bench, b[0])
    files = {}
    for scenario in case.targets:
        requests = SCENARIOS[scenario](data)
        probe(a + b, requests)
        files[scenario] = bench.workdir / f"{name}-{scenario}.txt"
        files[scenario].write_text("".join(" ".join(request) + "\n" for request in requests))
        for setup in (a, b):
            measure(setup, files[scenario], args.warmup)
    pairs = {scenario: [] for scenario in case.targets}
    for round_number in range(1, args.rounds + 1):
        for scenario in case.targets:
            pair = (measure(a, files[scenario], args.seconds),
                    measure(b, files[scenario], args.seconds))
            pairs[scenario].append(pair)
            print(f"{name} round {round_number}: {scenario:<12} {pair[0].rps:8.0f} "
                  f"{pair[1].rps:8.0f} req/s, ratio {pair[1].rps / pair[0].rps:.2f}", flush=True)
    return pairs, max(map(peak_rss_mb, b))


# -- the report ------------------------------------------------------------------------------

def medians(rounds, side):
    """One setup's figures (side 0: A, 1: B), each the median over the rounds."""
    return {figure: statistics.median(getattr(pair[side], figure) for pair in rounds)
            for figure in ("rps", "p50_ms", "p99_ms", "cpu_us")}


def case_table(name, pairs, rss_mb):
    case = CASES[name]
    rows = [f"## {name}: {case.b} ÷ {case.a}", "",
            f"{case.about} Peak RSS of {case.b} at the end: {rss_mb:.1f} MB.", "",
            f"| Scenario | {case.b} req/s | p50 ms | p99 ms | errors | {case.a} req/s "
            f"| errors | CPU µs/req ({case.b} / {case.a}) | Ratio (median) | Ratio per round "
            f"| Target | Result |",
            "|---|--:|--:|--:|--:|--:|--:|--:|--:|---|--:|---|"]
    for scenario, rounds in pairs.items():
        a, b = medians(rounds, 0), medians(rounds, 1)
        a_errors, b_errors = (sum(pair[side].errors for pair in rounds) for side in (0, 1))
        ratios = [second.rps / first.rps for first, second in rounds]
        ratio, target = statistics.median(ratios), case.targets[scenario]
        result = ("reported only" if target is None else "not met (errors)"
                  if a_errors or b_errors else "met" if ratio >= target else "not met")
        rows.append(
            f"| {scenario} | {b['rps']:,.0f} | {b['p50_ms']:.2f} | {b['p99_ms']:.2f} "
            f"| {b_errors} | {a['rps']:,.0f} | {a_errors} "
            f"| {b['cpu_us']:,.0f} / {a['cpu_us']:,.0f} "
            f"| **{ratio:.2f}** | {', '.join(f'{r:.2f}' for r in ratios)} "
            f"| {'-' if target is None else f'>= {target:.2f}'} | {result} |")
    return rows + [""]


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
             f"{args.warmup} s warm-up; wrk with {CONNECTIONS} connections (split evenly over a "
             f"setup's instances) on one core, every server on the other, {THREADS} waitress "
             f"threads each. Latencies are the slowest instance's, medians over rounds. A target "
             f"is met only when no request failed.", "",
             "| Machine | |", "|---|---|", *(f"| {name} | {value} |" for name, value in facts), ""]
    for name, (pairs, rss_mb) in results.items():
        lines += case_table(name, pairs, rss_mb)
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cases", nargs="*", metavar="CASE",
                        help=f"any of {', '.join(CASES)} (default: all)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=10, help="per measurement")
    parser.add_argument("--warmup", type=int, default=2, help="seconds per scenario and setup")
    parser.add_argument("--quick", action="store_true",
                        help="1 round of 2 s after 1 s: a smoke check; writes no file")
    parser.add_argument("--output", type=Path, help="default: benchmarks/RESULTS.md, "
                                                    "none with --quick")
    args = parser.parse_args(argv)
    args.cases = args.cases or list(CASES)
    if set(args.cases) - set(CASES):
        parser.error(f"unknown case: {', '.join(set(args.cases) - set(CASES))}")
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
            bench = Bench(Path(workdir) / name, cores[0], cores[1])
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


if __name__ == "__main__":
    sys.exit(main())
