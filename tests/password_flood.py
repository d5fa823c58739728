"""A password flood against a real server, and the timing of requests beside it: shared by
tests/test_password_flood.py and `benchmarks/run.py password-flood`.

The flood runs in a process of its own, at nice 10 (an attacker spends its own CPU, not the
server's, and the timed requests are not held by its threads' lock): FLOOD_THREADS threads
send wrong passwords for the given names in turn, each request from the next loopback
address (Linux routes all of 127.0.0.0/8 to lo), so no lock-out of an address or of an
(address, name) ever stops it: only the service's lanes stand in its way.
"""

import http.client
import itertools
import multiprocessing
import os
import statistics
import threading
import time
from collections import Counter
from contextlib import contextmanager

from conftest import basic

FLOOD_THREADS = 16
FLOOD_ADDRESSES = 250  # per thread: 127.0.T.1 .. 127.0.T.250 for thread T - 1
HOURS = "/v1.1/museum-hours"


@contextmanager
def password_flood(port, names, threads=FLOOD_THREADS):
    """A flood of wrong passwords for `names` on `port` while the block runs (no `names`:
    the same requests without credentials, which need no check, to compare with); yields a
    dict that holds, once the block ends, the count of each answer's status (or error)."""
    context = multiprocessing.get_context("fork")
    stop, answers, started = context.Event(), context.Queue(), context.Event()
    process = context.Process(target=_flood, args=(port, names, threads, stop, answers,
                                                   started))
    process.start()
    counts = {}
    try:
        started.wait(timeout=30)
        yield counts
    finally:
        stop.set()
        counts.update(answers.get(timeout=60))
        process.join(timeout=60)


def _flood(port, names, threads, stop, answers, started):
    os.nice(10)
    counts, lock = Counter(), threading.Lock()

    def guess(thread):
        for number in itertools.count():
            if stop.is_set():
                return
            guess = basic(names[(thread + number) % len(names)],
                          f"guess-{thread}-{number}") if names else {}
            address = f"127.0.{thread + 1}.{number % FLOOD_ADDRESSES + 1}"
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30,
                                                    source_address=(address, 0))
            try:
                connection.request("GET", HOURS, headers=guess)
                status = connection.getresponse().status
            except OSError as error:
                status = type(error).__name__
            finally:
                connection.close()
            with lock:
                counts[status] += 1
                if sum(counts.values()) == threads:
                    started.set()  # every thread has had an answer: the flood is on

    workers = [threading.Thread(target=guess, args=(thread,)) for thread in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    answers.put(dict(counts))


def timed_requests(server, headers, count, path=HOURS):
    """(statuses, milliseconds) of `count` GETs of `path` one after another, each on a
    fresh connection as a gate's or a shop's would be after a pause."""
    statuses, times = [], []
    for _ in range(count):
        started = time.perf_counter()
        statuses.append(server.request("GET", path, headers=headers, timeout=60)[0])
        times.append((time.perf_counter() - started) * 1000)
    return statuses, times


def p50_p99(times):
    """The median and the 99th percentile of `times`."""
    cuts = statistics.quantiles(times, n=100)
    return cuts[49], cuts[98]
