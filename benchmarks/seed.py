"""Seed a benchmark's database through the store of whichever code is first on `sys.path`.

run.py calls `seed` in its own process for this checkout; for the code of another checkout
(the `before-after` case's "before") it runs this file with that checkout first on
PYTHONPATH, the records in a JSON file:

    PYTHONPATH=OTHER_CHECKOUT python benchmarks/seed.py DATABASE RECORDS.json
"""

import json
import sys
from pathlib import Path

import storage
from storage.sqlite import SQLiteStore


def seed(url, events, tickets, general_capacity=None):
    """Store `events` in one transaction (one fsynced transaction each would take minutes
    for 100,000), then `tickets`, each its own sale; on sqlite without waiting for the disk
    at each sale (a seed is made again if the machine fails)."""
    store = storage.open_store(url)
    try:
        store.create_events(list(events))
        if tickets and isinstance(store, SQLiteStore):
            with store._connection() as conn:
                conn.execute("PRAGMA synchronous = OFF")
        for ticket in tickets:
            store.create_ticket(ticket, general_capacity=general_capacity)
    finally:
        store.close()


if __name__ == "__main__":
    records = json.loads(Path(sys.argv[2]).read_text(encoding="utf-8"))
    seed(sys.argv[1], records["events"], records["tickets"], records["general_capacity"])
