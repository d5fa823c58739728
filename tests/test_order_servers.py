"""Orders on real `museum serve` processes: sixteen orders of 2 to 4 tickets at once for
the last seven places of an event date never sell more than seven, each order whole or
absent, on one sqlite instance and on two instances sharing one PostgreSQL database; a
service killed with SIGKILL in the middle of orders leaves no order with part of its
tickets."""

import http.client
import json
import re
import signal
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta, timezone

import pytest

from conftest import ADMIN, VISITOR
from serving import running_instances, running_server, start_server
from ticketing import TICKETS, query

pytestmark = pytest.mark.slow

ORDERS = "/v1.1/orders"
BUYERS = 16
CAPACITY, LEFT = 12, 7
SIZE = re.compile(r"size(\d)@")  # each order's email says how many tickets it asked for


def event_day():
    return (datetime.now(timezone.utc).date() + timedelta(days=30)).isoformat()


def create_event(server, day, capacity):
    status, _, answer = server.request("POST", "/v1.1/special-events", {
        "name": "Small tour", "location": "Crypt", "eventDescription": "A few at most.",
        "dates": [day], "price": 10, "capacity": capacity}, ADMIN)
    assert status == 201, answer
    return json.loads(answer)["eventId"]


def order_body(event_id, day, number):
    """Order `number`: 2 to 4 tickets of the event, its size in its email."""
    size = 2 + number % 3
    return {"items": [{"ticketType": "event", "eventId": event_id, "ticketDate": day,
                       "category": "adult", "quantity": size}],
            "email": f"buyer.{number}.size{size}@example.org"}


def order_at_once(servers, event_id, day):
    """BUYERS orders released together, spread over `servers`: [(size, status, answer)]."""
    for server in servers:  # logged in beforehand: no scrypt spreads the buyers out
        assert server.request("GET", "/v1.1/museum-hours", headers=VISITOR)[0] == 200
    start = threading.Barrier(BUYERS)

    def buy(number):
        body = order_body(event_id, day, number)
        start.wait(timeout=30)
        status, _, data = servers[number % len(servers)].request("POST", ORDERS, body, VISITOR)
        return body["items"][0]["quantity"], status, json.loads(data)

    with ThreadPoolExecutor(BUYERS) as pool:
        return list(pool.map(buy, range(BUYERS)))


def presell(server, event_id, day, count):
    for number in range(count):
        assert server.request("POST", TICKETS, {
            "ticketType": "event", "eventId": event_id, "ticketDate": day,
            "email": f"early.{number}@example.org"}, VISITOR)[0] == 201


def assert_whole_orders_within_the_places(results):
    made = [(size, answer) for size, status, answer in results if status == 201]
    assert all(len(answer["tickets"]) == size for size, answer in made), made
    assert {answer["reason"] for _, status, answer in results if status != 201} == {
        "sold-out"}, results
    sold = sum(size for size, _ in made)
    assert LEFT - 1 <= sold <= LEFT  # some order of 2 fits while a place or more is left
    return sold


def test_the_last_places_of_an_event_go_to_whole_orders(tmp_path, config_text):
    config_text += f"[server]\nthreads = {BUYERS}\n"
    day = event_day()
    with running_server(tmp_path, config_text) as server:
        event_id = create_event(server, day, CAPACITY)
        presell(server, event_id, day, CAPACITY - LEFT)
        results = order_at_once([server], event_id, day)
        log = server.log()
    sold = assert_whole_orders_within_the_places(results)
    db_path = str(tmp_path / "museum.sqlite3")
    assert query(db_path, "SELECT count(*) FROM tickets") == [(CAPACITY - LEFT + sold,)]
    assert query(db_path, "SELECT taken FROM event_places") == [(CAPACITY - LEFT + sold,)]
    assert_orders_whole(query(db_path, ORDER_SIZES))
    assert "Traceback" not in log


def test_the_last_places_go_to_whole_orders_across_two_instances(
        tmp_path, config_text, postgres_url):
    import psycopg

    config_text += f"[server]\nthreads = {BUYERS}\n"
    day = event_day()
    with running_instances(tmp_path, config_text, postgres_url, 2) as servers:
        event_id = create_event(servers[0], day, CAPACITY)
        presell(servers[1], event_id, day, CAPACITY - LEFT)
        results = order_at_once(servers, event_id, day)
        logs = [server.log() for server in servers]
    sold = assert_whole_orders_within_the_places(results)
    with psycopg.connect(postgres_url) as conn:
        assert conn.execute("SELECT count(*) FROM tickets").fetchone()[0] == \
            CAPACITY - LEFT + sold
        assert conn.execute("SELECT taken FROM event_places").fetchone()[0] == \
            CAPACITY - LEFT + sold
        assert_orders_whole(conn.execute(ORDER_SIZES.replace("?", "%s")).fetchall())
    assert not [log for log in logs if "Traceback" in log]


# Each order's email (its asked size) and the tickets stored with it.
ORDER_SIZES = """
    SELECT o.email, count(t.id) FROM orders o LEFT JOIN tickets t ON t.order_id = o.id
    GROUP BY o.id, o.email"""


def assert_orders_whole(rows):
    assert rows, "no order was made"
    assert [(email, count) for email, count in rows
            if int(SIZE.search(email).group(1)) != count] == []


def test_a_kill_during_orders_leaves_no_order_in_part(tmp_path, config_text):
    config_text += "[server]\nthreads = 8\n"
    day = event_day()
    server = start_server(tmp_path, config_text)
    try:
        event_id = create_event(server, day, 100_000)
        assert server.request("GET", "/v1.1/museum-hours", headers=VISITOR)[0] == 200
        acknowledged, killed = [], threading.Event()

        def keep_ordering(client):
            number = client
            while not killed.is_set():
                try:
                    status, _, data = server.request(
                        "POST", ORDERS, order_body(event_id, day, number), VISITOR, timeout=5)
                except (OSError, http.client.HTTPException):  # killed under this request
                    return
                if status == 201:
                    acknowledged.append(json.loads(data)["orderId"])
                    if len(acknowledged) >= 40:
                        server.process.send_signal(signal.SIGKILL)
                        killed.set()
                number += 8

        with ThreadPoolExecutor(8) as pool:
            list(pool.map(keep_ordering, range(8)))
        server.process.wait(timeout=15)
    finally:
        if server.process.poll() is None:
            server.process.kill()
            server.process.wait()
    db_path = str(tmp_path / "museum.sqlite3")
    rows = query(db_path, ORDER_SIZES)
    assert_orders_whole(rows)
    stored = {row[0] for row in query(db_path, "SELECT id FROM orders")}
    assert set(acknowledged) <= stored
    assert query(db_path, "SELECT count(*) FROM tickets WHERE order_id IS NULL") == [(0,)]
    (taken,) = query(db_path, "SELECT taken FROM event_places")
    assert taken == (sum(count for _, count in rows),)
