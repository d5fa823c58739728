"""Benchmark the museum service against a bare Falcon ceiling, in one command.

    python benchmarks/run.py            # 3 rounds x 10 s per scenario, about 10 minutes
    python benchmarks/run.py --quick    # 1 round x 3 s: a smoke check, writes no RESULTS.md

One run starts two servers pinned to one core: `benchmarks/baseline.py` (a Falcon app that
answers a constant JSON object, served by waitress with the same thread count: the ceiling)
and `museum serve` on a fresh database in a temporary directory. It seeds the database,
drives every scenario with wrk pinned to the other core, alternating baseline and service
in each round, and reports req/s, p50/p99 latency, errors and the ratio service ÷ ceiling
(the median over rounds). A scale run then compares `list-events` and `get-event` on
1,000 against 100,000 events, and reads the peak RSS of the 100,000-event service after
10,000 ticket image fetches. The table is printed and written to benchmarks/RESULTS.md.

Only the Python standard library is used here, plus the project's own `storage` package to
seed databases; wrk (Debian package `wrk`) and taskset must be installed.
"""

import argparse
import base64
import http.client
import importlib.metadata
import json
import os
import platform
import re
import shlex
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, closing
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
LUA_SCRIPT = BENCH_DIR / "scenario.lua"
DEFAULT_OUTPUT = BENCH_DIR / "RESULTS.md"
sys.path.insert(0, str(REPO))  # seeding uses the checkout's own storage package

from storage import open_store  # noqa: E402

CONNECTIONS = 16
HOST = "127.0.0.1"
USER, PASSWORD = "visitor", "benchmark-visitor-password"

WINDOW_EVENTS = 200  # events dated inside the listing window, in every database
SMALL_EVENTS = 1_000
TICKETS = 200  # distinct tickets the qr scenario cycles over
IMAGE_FETCHES = 10_000  # ticket images fetched before the peak RSS is read
RSS_LIMIT_MB = 150

# Minimum ratio service req/s ÷ ceiling req/s, median over rounds.
TARGETS = {
    "healthz": 0.85,
    "get-event": 0.70,
    "list-events": 0.35,
    "hours": 0.70,
    "buy-ticket": 0.18,
    "qr": 0.55,
}
# Minimum ratio req/s with 100,000 events ÷ req/s with 1,000; None: reported only.
SCALE_TARGETS = {"list-events": 0.80, "get-event": None}

LISTENING = re.compile(r"listening on http://([0-9.]+):(\d+)")
SERVER_START_TIMEOUT = 60
BUSY_LOAD = 0.5  # a 1-minute load average above this means something else is running
STOP_TIMEOUT = 15


class BenchmarkError(Exception):
    """The benchmark cannot go on; the message says why."""


# ============================================================================================
# Setup: tools, cores, config
# ============================================================================================

def check_tools():
    """Exit with install instructions when wrk or taskset is missing."""
    missing = [tool for tool in ("wrk", "taskset") if shutil.which(tool) is None]
    if not missing:
        return
    print(f"error: {' and '.join(missing)} not found on PATH.", file=sys.stderr)
    if "wrk" in missing:
        print("Install wrk with:  sudo apt-get update && sudo apt-get install -y wrk",
              file=sys.stderr)
    if "taskset" in missing:
        print("taskset comes with util-linux:  sudo apt-get install -y util-linux",
              file=sys.stderr)
    sys.exit(2)


def pick_cores():
    """(server core, client core): the first two CPUs this process may run on."""
    allowed = sorted(os.sched_getaffinity(0))
    if len(allowed) < 2:
        raise BenchmarkError(f"needs 2 CPUs (servers on one, wrk on the other); "
                             f"this process may use only {allowed}")
    return allowed[0], allowed[1]


def hash_password(password):
    """A [users] hash made by the service's own CLI, so the format is always current."""
    result = subprocess.run(
        [sys.executable, "-m", "museum", "hash-password"], input=password + "\n",
        capture_output=True, text=True, cwd=REPO, timeout=60)
    if result.returncode != 0:
        raise BenchmarkError(f"museum hash-password failed: {result.stderr.strip()}")
    return result.stdout.strip()


def write_config(path, threads):
    """The service's config; the database is given per server with --db."""
    path.write_text(
        "[server]\n"
        f"host = {HOST}\n"
        "port = 0\n"
        f"threads = {threads}\n"
        "[museum]\n"
        "timezone = UTC\n"
        "[users]\n"
        f"{USER} = visitor:{hash_password(PASSWORD)}\n",
        encoding="utf-8")
    return path


def request_headers(body):
    """Every request's headers, the baseline's too: Basic auth as a real client sends it,
    and a JSON content type when there is a body."""
    token = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
    headers = {"Authorization": f"Basic {token}"}
    if body:
        headers["Content-Type"] = "application/json"
    return headers


# ============================================================================================
# Seeding
# ============================================================================================

def window_events(start):
    """The WINDOW_EVENTS events dated on or after `start`: what list-events pages through."""
    return [
        {
            "eventId": str(uuid.uuid4()),
            "name": f"Special exhibition {number:03d}",
            "location": f"Gallery {number % 12 + 1}",
            "eventDescription": "A guided tour through the collection, with a curator "
                                "answering questions at the end.",
            "dates": [(start + timedelta(days=number % 60 + offset)).isoformat()
                      for offset in (0, 7)],
            "price": 12.5,
        }
        for number in range(WINDOW_EVENTS)
    ]


def seed_events(path, window, history, start):
    """A database with `window` plus `history` past events, all before `start`."""
    store = open_store(str(path))
    try:
        for event in window:
            store.create_event(event)
    finally:
        store.close()
    insert_history(path, history, start)


def insert_history(path, count, start):
    """Insert `count` past events straight into the store's tables in one transaction.

    Through the store API every event is its own fsynced transaction: 100,000 of them take
    about a minute here and far longer on a slower disk.
    """
    events, dates = [], []
    for number in range(count):
        event_id = str(uuid.uuid4())
        first = start - timedelta(days=number % 3650 + 8)
        days = [first.isoformat(), (first + timedelta(days=7)).isoformat()]
        events.append((event_id, f"Past exhibition {number:06d}", f"Gallery {number % 12 + 1}",
                       "An exhibition that has closed.", json.dumps(days), 10.0))
        dates += [(day, event_id) for day in days]
    with closing(sqlite3.connect(path)) as conn, conn:  # the inner `conn`: one transaction
        conn.executemany("INSERT INTO events (id, name, location, description, dates, price) "
                         "VALUES (?, ?, ?, ?, ?, ?)", events)
        conn.executemany("INSERT INTO event_dates (date, event_id) VALUES (?, ?)", dates)


def next_open_day(today):
    """Next Tuesday after `today`: open in the default hours, never in the past."""
    return today + timedelta(days=(1 - today.weekday()) % 7 or 7)


# ============================================================================================
# Servers
# ============================================================================================

class Server:
    """A server process this script started, pinned to one core, stopped by its PID."""

    def __init__(self, name, argv, core, log_path):
        self.name = name
        self.log_path = log_path
        with open(log_path, "wb") as log:
            # taskset execs the server, so the PID is the server's own (for /proc reads).
            self.process = subprocess.Popen(
                ["taskset", "-c", str(core), *argv], cwd=REPO, stdin=subprocess.DEVNULL,
                stdout=log, stderr=subprocess.STDOUT)
        self.port = self._wait_until_listening()

    def _wait_until_listening(self):
        deadline = time.monotonic() + SERVER_START_TIMEOUT
        while time.monotonic() < deadline:
            match = LISTENING.search(self.log_path.read_text(errors="replace"))
            if match:
                return int(match.group(2))
            self.check_running()
            time.sleep(0.1)
        raise BenchmarkError(f"{self.name} did not log 'listening on' within "
                             f"{SERVER_START_TIMEOUT} s:\n{self.log_tail()}")

    def check_running(self):
        if self.process.poll() is not None:
            raise BenchmarkError(f"{self.name} exited with {self.process.returncode}:\n"
                                 f"{self.log_tail()}")

    def log_tail(self, lines=20):
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def cpu_seconds(self):
        """User plus system CPU time the server has used so far."""
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def peak_rss_mb(self):
        """VmHWM, the peak resident set size, in MB (10^6 bytes)."""
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        kib = int(re.search(r"^VmHWM:\s+(\d+) kB", status, re.MULTILINE).group(1))
        return kib * 1024 / 1e6

    def stop(self):
        """SIGTERM and wait; SIGKILL only if it does not stop in time."""
        if self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            print(f"warning: {self.name} ignored SIGTERM for {STOP_TIMEOUT} s; killing it",
                  file=sys.stderr)
            self.process.kill()
            self.process.wait()


def start_baseline(workdir, core, threads):
    argv = [sys.executable, str(BENCH_DIR / "baseline.py"), "--host", HOST, "--port", "0",
            "--threads", str(threads)]
    return Server("baseline", argv, core, workdir / "baseline.log")


def start_service(name, workdir, core, config, db_path):
    argv = [sys.executable, "-m", "museum", "serve", "--config", str(config), "--host", HOST,
            "--port", "0", "--db", str(db_path)]
    return Server(name, argv, core, workdir / f"{name}.log")


# ============================================================================================
# HTTP from this script (seeding tickets, probes, image fetches)
# ============================================================================================

def http_request(conn, method, path, body=None):
    """(response, body bytes) over an open keep-alive connection."""
    conn.request(method, path, body=body, headers=request_headers(body))
    response = conn.getresponse()
    return response, response.read()


def buy_tickets(port, body, count):
    """The ids of `count` tickets bought through the API (what the qr scenario fetches)."""
    conn = http.client.HTTPConnection(HOST, port, timeout=30)
    ticket_ids = []
    try:
        for _ in range(count):
            response, answer = http_request(conn, "POST", "/v1.1/tickets", body)
            if response.status != 201:
                raise BenchmarkError(f"POST /v1.1/tickets answered {response.status}: "
                                     f"{answer[:300]!r}")
            ticket_ids.append(json.loads(answer)["ticketId"])
    finally:
        conn.close()
    return ticket_ids


def fetch_images(port, paths, count, workers=4):
    """Fetch `count` ticket images over `workers` connections; return the failures."""
    def fetch_share(share):
        conn = http.client.HTTPConnection(HOST, port, timeout=30)
        failures = 0
        try:
            for index in range(share):
                response, _ = http_request(conn, "GET", paths[index % len(paths)])
                failures += response.status != 200
        finally:
            conn.close()
        return failures

    shares = [count // workers + (index < count % workers) for index in range(workers)]
    with ThreadPoolExecutor(workers) as pool:
        return sum(pool.map(fetch_share, shares))


# ============================================================================================
# Scenarios and wrk
# ============================================================================================

@dataclass(frozen=True)
class Scenario:
    name: str
    paths: tuple  # requests cycle over these
    method: str = "GET"
    body: str = ""


@dataclass(frozen=True)
class Measurement:
    requests: int
    seconds: float
    p50_ms: float
    p99_ms: float
    errors: int  # non-2xx/3xx answers plus socket errors
    # The server's CPU time per request: unlike req/s, barely moved by other programs.
    cpu_us: float = 0.0

    @property
    def rps(self):
        return self.requests / self.seconds


def build_scenarios(window, start, ticket_body, ticket_ids):
    return [
        Scenario("healthz", ("/healthz",)),
        Scenario("get-event", tuple(f"/v1.1/special-events/{event['eventId']}"
                                    for event in window)),
        Scenario("list-events", (f"/v1.1/special-events?startDate={start.isoformat()}&limit=10",)),
        Scenario("hours", ("/v1.1/museum-hours",)),
        Scenario("buy-ticket", ("/v1.1/tickets",), "POST", ticket_body),
        Scenario("qr", tuple(f"/v1.1/tickets/{ticket_id}/qr" for ticket_id in ticket_ids)),
    ]


def probe(port, scenarios, expected_window):
    """Request every distinct path once before measuring.

    A 401 or 404 answered at 5,000 req/s is no result, so any failure stops the run. And
    the qr scenario then measures the image cache's steady state, whatever the warm-up
    length, rather than however many first renders fit in it.
    """
    conn = http.client.HTTPConnection(HOST, port, timeout=30)
    try:
        for scenario in scenarios:
            for path in scenario.paths:
                response, answer = http_request(conn, scenario.method, path,
                                                scenario.body or None)
                if not 200 <= response.status < 400:
                    raise BenchmarkError(f"{scenario.name}: {scenario.method} {path} answered "
                                         f"{response.status}: {answer[:300]!r}")
                total = response.getheader("X-Total-Count")
                if scenario.name == "list-events" and total != str(expected_window):
                    raise BenchmarkError(f"list-events: X-Total-Count is {total}, expected "
                                         f"{expected_window} events in the window")
    finally:
        conn.close()


def run_wrk(port, scenario, seconds, core, workdir):
    """Drive `scenario` at the server on `port` for `seconds`; wrk pinned to `core`."""
    paths_file = workdir / f"paths-{scenario.name}.txt"
    if not paths_file.exists():
        paths_file.write_text("\n".join(scenario.paths) + "\n")
    header_flags = [flag for name, value in request_headers(scenario.body).items()
                    for flag in ("-H", f"{name}: {value}")]
    argv = ["taskset", "-c", str(core), "wrk", "-t", "1", "-c", str(CONNECTIONS),
            "-d", f"{seconds}s", "--timeout", "10s", *header_flags, "-s", str(LUA_SCRIPT),
            f"http://{HOST}:{port}", "--", scenario.method, str(paths_file), scenario.body]
    try:
        result = subprocess.run(argv, capture_output=True, text=True, timeout=seconds + 60)
    except subprocess.TimeoutExpired:
        raise BenchmarkError(f"wrk did not finish {scenario.name} within {seconds + 60} s") \
            from None
    line = next((line for line in result.stdout.splitlines()
                 if line.startswith("wrk-result ")), None)
    if result.returncode != 0 or line is None:
        raise BenchmarkError(f"wrk failed ({result.returncode}):\n{result.stdout}{result.stderr}")
    report = json.loads(line.removeprefix("wrk-result "))
    return Measurement(
        requests=report["requests"], seconds=report["duration_us"] / 1e6,
        p50_ms=report["p50_us"] / 1000, p99_ms=report["p99_us"] / 1000,
        errors=report["status_errors"] + report["socket_errors"])


# ============================================================================================
# The runs
# ============================================================================================

@dataclass(frozen=True)
class Settings:
    rounds: int
    duration: int
    warmup: int
    threads: int
    scale: int
    server_core: int
    client_core: int


@dataclass
class Results:
    ceiling: dict  # scenario -> [(baseline, service) per round]
    scale: dict = field(default_factory=dict)  # scenario -> [(1,000 events, big) per round]
    peak_rss_mb: float = None
    image_fetches: int = 0
    image_failures: int = 0


class Benchmark:
    """One run: the fixtures every phase shares, and the servers it started."""

    def __init__(self, settings, workdir, servers):
        self.settings = settings
        self.workdir = workdir
        self.servers = servers  # an ExitStack that stops every server on the way out
        self.config = write_config(workdir / "museum.ini", settings.threads)
        self.start = datetime.now(timezone.utc).date()
        self.window = window_events(self.start)
        self.ticket_body = json.dumps({"ticketType": "general",
                                       "ticketDate": next_open_day(self.start).isoformat(),
                                       "email": "visitor@example.org"})

    def run(self):
        small = self.service_with("service", SMALL_EVENTS)
        baseline = self.started(lambda: start_baseline(
            self.workdir, self.settings.server_core, self.settings.threads))
        tickets = buy_tickets(small.port, self.ticket_body, TICKETS)
        scenarios = build_scenarios(self.window, self.start, self.ticket_body, tickets)
        probe(small.port, scenarios, WINDOW_EVENTS)
        print(f"Service vs ceiling: {self.settings.rounds} round(s) x "
              f"{self.settings.duration} s", flush=True)
        results = Results(self.compare("ceiling", baseline, "service", small, scenarios))
        if self.settings.scale:
            self.run_scale(small, scenarios, results)
        return results

    def run_scale(self, small, scenarios, results):
        """list-events and get-event at 1,000 vs `scale` events; then the peak RSS."""
        big = self.service_with("service-big", self.settings.scale)
        scale_scenarios = [scenario for scenario in scenarios if scenario.name in SCALE_TARGETS]
        probe(big.port, scale_scenarios, WINDOW_EVENTS)
        print(f"Scale: {SMALL_EVENTS:,} vs {self.settings.scale:,} events", flush=True)
        results.scale = self.compare(f"{SMALL_EVENTS:,}", small, "big", big, scale_scenarios)
        print(f"Fetching {IMAGE_FETCHES:,} ticket images from the "
              f"{self.settings.scale:,}-event service ...", flush=True)
        tickets = buy_tickets(big.port, self.ticket_body, TICKETS)
        paths = [f"/v1.1/tickets/{ticket_id}/qr" for ticket_id in tickets]
        results.image_failures = fetch_images(big.port, paths, IMAGE_FETCHES)
        results.image_fetches = IMAGE_FETCHES
        results.peak_rss_mb = big.peak_rss_mb()

    def service_with(self, name, events):
        """`museum serve` on a fresh database of `events` events, the window's among them."""
        print(f"Seeding {events:,} events for {name} ...", flush=True)
        db_path = self.workdir / f"{name}.sqlite3"
        seed_events(db_path, self.window, events - WINDOW_EVENTS, self.start)
        return self.started(lambda: start_service(
            name, self.workdir, self.settings.server_core, self.config, db_path))

    def started(self, start_server):
        server = start_server()
        self.servers.callback(server.stop)
        return server

    def compare(self, label_a, server_a, label_b, server_b, scenarios):
        """Alternate the two servers on every scenario, round after round.

        Returns {scenario name: [(measurement a, measurement b), one per round]}. A warm-up
        pass first fills caches and opens each worker thread's database connection.
        """
        settings = self.settings
        for scenario in scenarios:
            for server in (server_a, server_b):
                self.wrk(server, scenario, settings.warmup)
        pairs = {scenario.name: [] for scenario in scenarios}
        for round_number in range(1, settings.rounds + 1):
            for scenario in scenarios:
                a = self.wrk(server_a, scenario, settings.duration)
                b = self.wrk(server_b, scenario, settings.duration)
                pairs[scenario.name].append((a, b))
                print(f"  round {round_number}/{settings.rounds}  {scenario.name:<12} "
                      f"{label_a} {a.rps:8.0f} req/s  {label_b} {b.rps:8.0f} req/s  "
                      f"ratio {b.rps / a.rps:.2f}  errors {a.errors}/{b.errors}", flush=True)
        return pairs

    def wrk(self, server, scenario, seconds):
        """One wrk run against `server`, with the server's CPU time per request."""
        server.check_running()
        cpu_before = server.cpu_seconds()
        measurement = run_wrk(server.port, scenario, seconds, self.settings.client_core,
                              self.workdir)
        server.check_running()
        if not measurement.requests:
            raise BenchmarkError(f"{server.name} answered no {scenario.name} request in "
                                 f"{seconds} s:\n{server.log_tail()}")
        cpu_us = (server.cpu_seconds() - cpu_before) * 1e6 / measurement.requests
        return replace(measurement, cpu_us=cpu_us)


# ============================================================================================
# Report
# ============================================================================================

def side(measurements):
    """One server's figures over the rounds: medians, and the errors summed."""
    return {
        "rps": statistics.median(m.rps for m in measurements),
        "p50": statistics.median(m.p50_ms for m in measurements),
        "p99": statistics.median(m.p99_ms for m in measurements),
        "cpu": statistics.median(m.cpu_us for m in measurements),
        "errors": sum(m.errors for m in measurements),
    }


def summarize(pairs):
    """(first server, second server, median ratio second ÷ first, per-round ratios)."""
    ratios = [b.rps / a.rps for a, b in pairs]
    return (side([a for a, _ in pairs]), side([b for _, b in pairs]),
            statistics.median(ratios), ratios)


def verdict(first, second, ratio, target):
    """Met when the median ratio reaches the target and neither server answered an error."""
    if target is None:
        return "reported only"
    if first["errors"] or second["errors"]:
        return "not met (errors)"
    return "met" if ratio >= target else "not met"


def ratio_cells(ratio, ratios, target):
    return (f"**{ratio:.2f}** | {', '.join(f'{r:.2f}' for r in ratios)} "
            f"| {'-' if target is None else f'>= {target:.2f}'}")


def ceiling_table(results):
    rows = ["| Scenario | Service req/s | p50 ms | p99 ms | Errors | Ceiling req/s "
            "| Ceiling errors | CPU µs/req (service / ceiling) | Ratio (median) "
            "| Ratio per round | Target | Result |",
            "|---|--:|--:|--:|--:|--:|--:|--:|--:|---|--:|---|"]
    for name, pairs in results.ceiling.items():
        ceiling, service, ratio, ratios = summarize(pairs)
        rows.append(
            f"| {name} | {service['rps']:,.0f} | {service['p50']:.2f} | {service['p99']:.2f} "
            f"| {service['errors']} | {ceiling['rps']:,.0f} | {ceiling['errors']} "
            f"| {service['cpu']:,.0f} / {ceiling['cpu']:,.0f} "
            f"| {ratio_cells(ratio, ratios, TARGETS[name])} "
            f"| {verdict(ceiling, service, ratio, TARGETS[name])} |")
    return rows


def scale_table(results, settings):
    small, big = f"{SMALL_EVENTS:,}", f"{settings.scale:,}"
    rows = [f"| Scenario | req/s at {small} | req/s at {big} | p50 / p99 ms at {small} "
            f"| p50 / p99 ms at {big} | CPU µs/req ({small} / {big}) | Errors ({small} / {big}) "
            f"| Ratio (median) | Ratio per round | Target | Result |",
            "|---|--:|--:|--:|--:|--:|--:|--:|---|--:|---|"]
    for name, pairs in results.scale.items():
        few, many, ratio, ratios = summarize(pairs)
        target = SCALE_TARGETS[name]
        rows.append(
            f"| {name} | {few['rps']:,.0f} | {many['rps']:,.0f} "
            f"| {few['p50']:.2f} / {few['p99']:.2f} | {many['p50']:.2f} / {many['p99']:.2f} "
            f"| {few['cpu']:,.0f} / {many['cpu']:,.0f} | {few['errors']} / {many['errors']} "
            f"| {ratio_cells(ratio, ratios, target)} | {verdict(few, many, ratio, target)} |")
    return rows


def target_summary(results, settings):
    """One line: how many targets were met, and which were not."""
    verdicts = {name: verdict(*summarize(pairs)[:3], TARGETS[name])
                for name, pairs in results.ceiling.items()}
    verdicts.update({f"{name} at {settings.scale:,} events":
                     verdict(*summarize(pairs)[:3], SCALE_TARGETS[name])
                     for name, pairs in results.scale.items() if SCALE_TARGETS[name]})
    if results.peak_rss_mb is not None:
        verdicts["peak RSS"] = "met" if memory_met(results) else "not met"
    missed = [name for name, outcome in verdicts.items() if outcome != "met"]
    return (f"**Targets met: {len(verdicts) - len(missed)} of {len(verdicts)}**"
            + (f" (not met: {', '.join(missed)}; where the time goes and what would close "
               f"the gap: [PROFILE.md](PROFILE.md))." if missed else "."))


def memory_met(results):
    return results.peak_rss_mb <= RSS_LIMIT_MB and not results.image_failures


def memory_line(results, settings):
    if results.peak_rss_mb is None:
        return "Not measured (the scale run was skipped with --scale 0)."
    return (f"Peak RSS (VmHWM) of the {settings.scale:,}-event service after its scale run and "
            f"{results.image_fetches:,} ticket image fetches ({results.image_failures} failed): "
            f"**{results.peak_rss_mb:.1f} MB** (target <= {RSS_LIMIT_MB} MB): "
            f"**{'met' if memory_met(results) else 'not met'}**.")


def machine_facts(workdir, load_at_start):
    cpu_model = next((line.split(":", 1)[1].strip()
                      for line in Path("/proc/cpuinfo").read_text().splitlines()
                      if line.startswith("model name")), "unknown")
    wrk = subprocess.run(["wrk", "-v"], capture_output=True, text=True).stdout.splitlines()
    return [
        ("nproc", str(os.cpu_count())),
        ("CPU", cpu_model),
        ("Kernel", platform.release()),
        ("Python", platform.python_version()),
        ("Falcon", importlib.metadata.version("falcon")),
        ("waitress", importlib.metadata.version("waitress")),
        ("wrk", wrk[0].split(" Copyright")[0].removeprefix("wrk ") if wrk else "unknown"),
        ("SQLite", sqlite3.sqlite_version),
        ("Database filesystem", filesystem_type(workdir)),
        # Other programs running meanwhile make req/s noisy (see README.md).
        ("Load average (1 min) at start / end",
         f"{load_at_start:.2f} / {os.getloadavg()[0]:.2f}"),
    ]


def filesystem_type(path):
    """The type of the filesystem holding `path` (tmpfs makes fsync, so buy-ticket, free)."""
    mounts = [line.split() for line in Path("/proc/mounts").read_text().splitlines()]
    best = max((m for m in mounts if str(path).startswith(m[1].rstrip("/") + "/")),
               key=lambda m: len(m[1]), default=None)
    return best[2] if best else "unknown"


def render_report(results, settings, facts, elapsed, command):
    lines = [
        "# Benchmark results",
        "",
        f"Written by `benchmarks/run.py` on {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC "
        f"in {elapsed / 60:.1f} minutes. Do not edit: run it again.",
        "",
        f"Command: `{command}`",
        "",
        f"Each scenario: {settings.rounds} round(s) of {settings.duration} s per server after a "
        f"{settings.warmup} s warm-up; wrk with {CONNECTIONS} connections and 1 thread on CPU "
        f"{settings.client_core}; both servers on CPU {settings.server_core} with "
        f"{settings.threads} waitress threads. Ratios are service ÷ ceiling req/s in the same "
        f"round (median over rounds); latencies are the service's medians over rounds. "
        f"A target counts as met only when no request failed. CPU µs/req is the server "
        f"process's CPU time per answered request: other programs on the machine move it far "
        f"less than req/s.",
        "",
        target_summary(results, settings),
        "",
        "## Machine",
        "",
        "| | |",
        "|---|---|",
        *(f"| {name} | {value} |" for name, value in facts),
        "",
        "## Service vs ceiling (bare Falcon app on waitress)",
        "",
        *ceiling_table(results),
    ]
    if results.scale:
        lines += ["", f"## Scale: {SMALL_EVENTS:,} vs {settings.scale:,} events "
                  f"(the same {WINDOW_EVENTS} in the listing window)", "",
                  *scale_table(results, settings)]
    lines += ["", "## Memory", "", memory_line(results, settings), ""]
    return "\n".join(lines)


# ============================================================================================
# Command line
# ============================================================================================

def parse_args(argv):
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog="Full run: about 10 minutes. See benchmarks/README.md.")
    parser.add_argument("--quick", action="store_true",
                        help="smoke check: 1 round of 3 s, 1 s warm-up, no RESULTS.md unless "
                             "--output is given")
    parser.add_argument("--rounds", type=int, help="rounds per scenario (default 3)")
    parser.add_argument("--duration", type=int, help="seconds per measurement (default 10)")
    parser.add_argument("--warmup", type=int, help="warm-up seconds per scenario and server "
                                                   "(default 2)")
    parser.add_argument("--threads", type=int, default=4,
                        help="waitress threads of both servers (default 4)")
    parser.add_argument("--scale", type=int, default=100_000,
                        help="events in the scale run's big database (default 100000; "
                             "0 skips the scale run and the memory check)")
    parser.add_argument("--output", type=Path,
                        help=f"report file (default {DEFAULT_OUTPUT.relative_to(REPO)})")
    args = parser.parse_args(argv)
    for name, (full, quick) in {"rounds": (3, 1), "duration": (10, 3), "warmup": (2, 1)}.items():
        if getattr(args, name) is None:
            setattr(args, name, quick if args.quick else full)
    if args.output is None and not args.quick:
        args.output = DEFAULT_OUTPUT
    if min(args.rounds, args.duration, args.warmup, args.threads) < 1:
        parser.error("--rounds, --duration, --warmup and --threads must be at least 1")
    if args.scale and args.scale <= SMALL_EVENTS:
        parser.error(f"--scale must be 0 or more than {SMALL_EVENTS}")
    return args


def main(argv=None):
    args = parse_args(argv)
    check_tools()
    command = shlex.join(["python", "benchmarks/run.py", *(sys.argv[1:] if argv is None
                                                           else argv)])
    began = time.monotonic()
    load_at_start = os.getloadavg()[0]
    if load_at_start > BUSY_LOAD:
        print(f"warning: load average {load_at_start:.2f}: other programs are running, "
              f"req/s will be noisy", file=sys.stderr)
    try:
        server_core, client_core = pick_cores()
        # This script seeds and fetches too: keep it off the servers' core.
        os.sched_setaffinity(0, {client_core})
        settings = Settings(args.rounds, args.duration, args.warmup, args.threads, args.scale,
                            server_core, client_core)
        with tempfile.TemporaryDirectory(prefix="museum-bench-") as tmp, ExitStack() as servers:
            workdir = Path(tmp)
            results = Benchmark(settings, workdir, servers).run()
            facts = machine_facts(workdir, load_at_start)
    except BenchmarkError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    report = render_report(results, settings, facts, time.monotonic() - began, command)
    print("\n" + report)
    if args.output:
        args.output.write_text(report, encoding="utf-8")
        print(f"Written to {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
