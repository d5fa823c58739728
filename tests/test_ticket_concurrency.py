"""Buying tickets at the same moment from many threads against a real `museum serve`.

Sixteen purchases leave together (a barrier releases them): eight carry one Idempotency-Key
with one body, as a client retrying on a flaky network would, and eight carry none. The key
must give exactly one ticket however the requests interleave, every other purchase its own,
and no request may fail on the server's side.
"""

import json
import re
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from conftest import VISITOR
from serving import running_server
from ticketing import TICKETS, open_days, query

PURCHASES = 16
SAME_KEY = 8
KEY = "retry-7d1f0c2e"
EMAIL, PHONE = "concurrent.visitor@example.org", "+49 30 901820"
POST_LINE = re.compile(r"museum\.access: \S+ POST (\S+) (\d{3}) ")  # path, status

pytestmark = pytest.mark.slow


def buy_together(server, payload, keys):
    """POST `payload` once per entry of `keys` (None: no key), all released at once;
    returns (status, receipt or problem) per purchase, in order."""
    start = threading.Barrier(len(keys))
    # Logged in once beforehand, the purchases skip the password hash (scrypt, tens of
    # milliseconds each) that would otherwise spread them out and hide any race.
    assert server.request("GET", "/v1.1/museum-hours", headers=VISITOR)[0] == 200

    def purchase(key):
        headers = {**VISITOR, **({"Idempotency-Key": key} if key else {})}
        start.wait(timeout=30)
        status, _, data = server.request("POST", TICKETS, payload, headers)
        return status, json.loads(data)

    with ThreadPoolExecutor(len(keys)) as pool:
        return list(pool.map(purchase, keys))


def test_one_key_gives_one_ticket_under_concurrent_purchases(tmp_path, config_text):
    config_text += f"[server]\nthreads = {PURCHASES}\n"
    payload = {"ticketType": "general", "ticketDate": open_days(config_text, 1)[0],
               "email": EMAIL, "phone": PHONE}
    keys = [KEY] * SAME_KEY + [None] * (PURCHASES - SAME_KEY)

    with running_server(tmp_path, config_text) as server:
        results = buy_together(server, payload, keys)
        log = server.log()

    assert [status for status, _ in results] == [201] * PURCHASES, results
    keyed = {receipt["ticketId"] for _, receipt in results[:SAME_KEY]}
    assert len(keyed) == 1, "every retry under the key got the one ticket"
    assert len({json.dumps(receipt) for _, receipt in results[:SAME_KEY]}) == 1
    others = [receipt["ticketId"] for _, receipt in results[SAME_KEY:]]
    assert len(set(others)) == len(others) and keyed.isdisjoint(others)

    db_path = str(tmp_path / "museum.sqlite3")
    [ticket_id] = keyed
    assert query(db_path, "SELECT count(*) FROM tickets WHERE id = ?", ticket_id) == [(1,)]
    assert query(db_path, "SELECT ticket_id FROM idempotency_keys WHERE key = ?", KEY) == [
        (ticket_id,)]
    assert query(db_path, "SELECT count(*) FROM tickets") == [(1 + PURCHASES - SAME_KEY,)]
    assert POST_LINE.findall(log) == [(TICKETS, "201")] * PURCHASES, log
    assert " ERROR " not in log and "Traceback" not in log, log
    assert EMAIL not in log and PHONE not in log
