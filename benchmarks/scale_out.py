"""Ticket purchases per second: one and two instances on PostgreSQL, beside sqlite, in one run.

    .venv/bin/python benchmarks/scale_out.py            # 3 rounds x 8 s per setup, ~2 minutes
    .venv/bin/python benchmarks/scale_out.py --quick    # 1 round x 3 s; writes no SCALE_OUT.md

One run starts a throwaway PostgreSQL cluster on a loopback port in a temporary directory,
durable like the sqlite backend (fsync and synchronous commit on, as sqlite's
synchronous=FULL), and four `museum serve` processes on the same filesystem: one on a
sqlite file, one on a PostgreSQL database, and two sharing a second PostgreSQL database.
Each setup gets one future event, and wrk drives `POST /v1.1/tickets` for it (a new ticket
each time) with 16 connections in all, split evenly over the setup's instances: one wrk
process per instance, all at once. Rounds alternate the setups; the median round counts.
Afterwards the tickets stored in each database are counted against the purchases answered.

wrk, the servers and PostgreSQL share this machine's cores, so the two-instance figure shows
what a second process buys on one machine, not what a second machine would. The figures
are written to benchmarks/SCALE_OUT.md.

Needs wrk (Debian package `wrk`), PostgreSQL's server binaries (Debian `postgresql`) and the
project's postgres extra (pip install -e '.[postgres]'). It reuses the tests' helpers for
starting servers (tests/serving.py) and the throwaway cluster (tests/pg_cluster.py).
"""

import argparse
import base64
import importlib.metadata
import json
import os
import platform
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
sys.path[:0] = [str(REPO), str(REPO / "tests")]

import psycopg  # noqa: E402  (after the path set-up, like the helpers below)

import museum  # noqa: E402
import pg_cluster  # noqa: E402
from serving import start_server  # noqa: E402

LUA_SCRIPT = BENCH_DIR / "scenario.lua"
OUTPUT = BENCH_DIR / "SCALE_OUT.md"
CONNECTIONS = 16  # in all, split over a setup's instances
THREADS = 4  # waitress threads per instance, the service's default
WARMUP_SECONDS = 2
USER, PASSWORD = "visitor", "benchmark-visitor-password"
ADMIN, ADMIN_PASSWORD = "admin", "benchmark-admin-password"


class BenchmarkError(Exception):
    pass


@dataclass
class Setup:
    """One configuration under load: its servers, its event, and its measured rounds."""

    name: str
    instances: int
    database: str  # --db of its servers
    servers: list = field(default_factory=list)
    event_id: str = ""
    rounds: list = field(default_factory=list)  # one dict per measured round
    answered: int = 0  # purchases answered 201, warm-up included

    def median_round(self):
        return sorted(self.rounds, key=lambda measured: measured["rps"])[len(self.rounds) // 2]


def auth(name, password):
    return "Basic " + base64.b64encode(f"{name}:{password}".encode()).decode()


def config_text():
    return (f"[server]\nthreads = {THREADS}\n[museum]\ntimezone = UTC\n[users]\n"
            f"{USER} = visitor:{museum.hash_password(PASSWORD)}\n"
            f"{ADMIN} = admin:{museum.hash_password(ADMIN_PASSWORD)}\n")


def create_event(server, day):
    status, _, answer = server.request(
        "POST", "/v1.1/special-events",
        {"name": "Benchmark night", "location": "Great Hall", "eventDescription": "Busy.",
         "dates": [day], "price": 10},
        {"Authorization": auth(ADMIN, ADMIN_PASSWORD)})
    if status != 201:
        raise BenchmarkError(f"creating the event answered {status}: {answer[:300]!r}")
    return json.loads(answer)["eventId"]


def purchase_body(setup, day):
    return json.dumps({"ticketType": "event", "eventId": setup.event_id, "ticketDate": day,
                       "email": "visitor@example.org"})


def run_wrk(server, connections, seconds, body, paths_file):
    argv = ["wrk", "-t", "1", "-c", str(connections), "-d", f"{seconds}s", "--timeout", "10s",
            "-H", f"Authorization: {auth(USER, PASSWORD)}", "-H", "Content-Type: application/json",
            "-s", str(LUA_SCRIPT), f"http://127.0.0.1:{server.port}", "--", "POST",
            str(paths_file), body]
    result = subprocess.run(argv, capture_output=True, text=True, timeout=seconds + 60)
    line = next((line for line in result.stdout.splitlines() if line.startswith("wrk-result ")),
                None)
    if result.returncode != 0 or line is None:
        raise BenchmarkError(f"wrk failed ({result.returncode}):\n{result.stdout}{result.stderr}")
    return json.loads(line.removeprefix("wrk-result "))


def drive(setup, seconds, body, paths_file):
    """Load every instance of `setup` at once for `seconds`; the summed figures."""
    share = CONNECTIONS // setup.instances
    with ThreadPoolExecutor(setup.instances) as pool:
        reports = list(pool.map(lambda server: run_wrk(server, share, seconds, body, paths_file),
                                setup.servers))
    errors = sum(report["status_errors"] + report["socket_errors"] for report in reports)
    setup.answered += sum(report["requests"] - report["status_errors"] for report in reports)
    return {
        "rps": sum(report["requests"] / (report["duration_us"] / 1e6) for report in reports),
        "p50": max(report["p50_us"] for report in reports) / 1000,
        "p99": max(report["p99_us"] for report in reports) / 1000,
        "errors": errors,
    }


def stored_tickets(setup):
    if setup.database.startswith("postgresql://"):
        with psycopg.connect(setup.database) as conn:
            return conn.execute("SELECT count(*) FROM tickets").fetchone()[0]
    conn = sqlite3.connect(setup.database)
    try:
        return conn.execute("SELECT count(*) FROM tickets").fetchone()[0]
    finally:
        conn.close()


def machine_facts(server_url, load_at_start):
    with psycopg.connect(server_url) as conn:
        version = conn.execute("SHOW server_version").fetchone()[0]
    wrk = subprocess.run(["wrk", "-v"], capture_output=True, text=True).stdout.split(" Copyright")
    return [
        ("nproc", str(os.cpu_count())),
        ("Python", platform.python_version()),
        ("PostgreSQL", f"{version} (fsync and synchronous_commit on, as installed)"),
        ("psycopg / psycopg_pool", f"{importlib.metadata.version('psycopg')} / "
                                   f"{importlib.metadata.version('psycopg-pool')}"),
        ("SQLite", sqlite3.sqlite_version),
        ("Load generator", wrk[0].strip() if wrk[0] else "wrk"),
        # Other programs running meanwhile take CPU from the setups: compare within a run.
        ("Load average (1 min) at start / end",
         f"{load_at_start:.2f} / {os.getloadavg()[0]:.2f}"),
    ]


def render(setups, facts, rounds, seconds, elapsed):
    one, two = (next(setup for setup in setups if setup.name == "PostgreSQL"
                     and setup.instances == count) for count in (1, 2))
    gain = two.median_round()["rps"] / one.median_round()["rps"]
    lines = [
        "# Scale-out: ticket purchases per second",
        "",
        f"Measured by `benchmarks/scale_out.py` in one run of {elapsed:.0f} s: {rounds} "
        f"round(s) of {seconds} s per setup after a {WARMUP_SECONDS} s warm-up, setups "
        f"alternating; the median round is shown. Load: `POST /v1.1/tickets` (a new event "
        f"ticket each time) from wrk with {CONNECTIONS} connections in all, split evenly "
        f"over the instances; {THREADS} waitress threads per instance.",
        "",
        "| database | instances | purchases/s | p50 ms | p99 ms | errors | per round | "
        "tickets stored / answered 201 |",
        "|---|--:|--:|--:|--:|--:|---|---|",
    ]
    for setup in setups:
        best = setup.median_round()
        per_round = ", ".join(f"{measured['rps']:,.0f}" for measured in setup.rounds)
        lines.append(
            f"| {setup.name} | {setup.instances} | **{best['rps']:,.0f}** | {best['p50']:.1f} "
            f"| {best['p99']:.1f} | {sum(m['errors'] for m in setup.rounds)} | {per_round} "
            f"| {stored_tickets(setup):,} / {setup.answered:,} |")
    lines += [
        "",
        f"Two PostgreSQL instances against one: **× {gain:.2f}**.",
        "",
        "All processes (wrk, every instance, PostgreSQL) share this machine's "
        f"{os.cpu_count()} cores, so a second instance here competes with the first and with "
        "the database for the same CPUs: the gain above is a floor for instances on separate "
        "machines. More tickets stored than answered are the purchases still in flight when "
        "wrk stopped; fewer would be a lost sale.",
        "",
        "| machine | |",
        "|---|---|",
        *[f"| {name} | {value} |" for name, value in facts],
        "",
    ]
    return "\n".join(lines)


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=8)
    parser.add_argument("--quick", action="store_true",
                        help="1 round of 3 s: a smoke check that writes no SCALE_OUT.md")
    args = parser.parse_args(argv)
    if args.quick:
        args.rounds, args.seconds = 1, 3
    return args


def run(args, workdir, cluster_dir):
    load_at_start = os.getloadavg()[0]
    server_url = pg_cluster.start(cluster_dir, durable=True)
    setups = [Setup("sqlite", 1, str(workdir / "museum.sqlite3"))]
    for instances in (1, 2):
        database = f"museum_{instances}"
        with psycopg.connect(server_url, autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {database}")
        setups.append(Setup("PostgreSQL", instances, server_url.rsplit("/", 1)[0]
                            + f"/{database}"))
    config = config_text()
    day = (datetime.now(timezone.utc).date() + timedelta(days=30)).isoformat()
    paths_file = workdir / "paths.txt"
    paths_file.write_text("/v1.1/tickets\n")
    try:
        for number, setup in enumerate(setups):
            for instance in range(setup.instances):
                directory = workdir / f"setup-{number}-{instance}"
                directory.mkdir()
                setup.servers.append(start_server(directory, config, db=setup.database))
            setup.event_id = create_event(setup.servers[0], day)
            drive(setup, WARMUP_SECONDS, purchase_body(setup, day), paths_file)
        started = time.monotonic()
        for round_number in range(args.rounds):
            order = setups[round_number % len(setups):] + setups[:round_number % len(setups)]
            for setup in order:
                measured = drive(setup, args.seconds, purchase_body(setup, day), paths_file)
                setup.rounds.append(measured)
                print(f"round {round_number + 1}: {setup.name} x{setup.instances}: "
                      f"{measured['rps']:,.0f} purchases/s", flush=True)
        return render(setups, machine_facts(server_url, load_at_start), args.rounds, args.seconds,
                      time.monotonic() - started)
    finally:
        for setup in setups:
            for server in setup.servers:
                server.stop()


def main(argv=None):
    args = parse_args(argv)
    if shutil.which("wrk") is None:
        print("Install wrk with:  apt-get update && apt-get install -y wrk", file=sys.stderr)
        return 2
    workdir = Path(tempfile.mkdtemp(prefix="museum-scale-"))
    cluster_dir = tempfile.mkdtemp(prefix="museum-pg-")
    try:
        report = run(args, workdir, cluster_dir)
    except (BenchmarkError, pg_cluster.ClusterError) as error:
        print(f"scale_out: {error}", file=sys.stderr)
        return 1
    finally:
        pg_cluster.stop(cluster_dir)
        shutil.rmtree(workdir, ignore_errors=True)
    print(report)
    if not args.quick:
        OUTPUT.write_text(report, encoding="utf-8")
        print(f"written to {OUTPUT.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
