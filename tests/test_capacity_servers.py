"""Capacity held by real `museum serve` processes: sixteen buyers at once for the last five
places (of a day, an event date or an entry slot) get exactly five tickets, on one sqlite
instance and on two instances sharing one PostgreSQL database; a service killed with
SIGKILL in the middle of sales leaves counts (places and the sales report's) that still
equal its tickets."""

import http.client
import json
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import date, datetime, timedelta, timezone

import pytest

import museum
from conftest import ADMIN, VISITOR
from serving import running_instances, running_server, start_server, wait_until
from ticketing import TICKETS, open_days, query

pytestmark = pytest.mark.slow

BUYERS = 16
LEFT = 5  # places left when the buyers arrive


def buy_at_once(servers, payload):
    """POST `payload` from BUYERS threads released together, spread over `servers`;
    returns the statuses and answers."""
    for server in servers:  # logged in beforehand: no scrypt spreads the buyers out
        assert server.request("GET", "/v1.1/museum-hours", headers=VISITOR)[0] == 200
    start = threading.Barrier(BUYERS)

    def purchase(number):
        start.wait(timeout=30)
        status, _, data = servers[number % len(servers)].request(
            "POST", TICKETS, {**payload, "email": f"buyer.{number}@example.org"}, VISITOR)
        return status, json.loads(data)

    with ThreadPoolExecutor(BUYERS) as pool:
        return list(pool.map(purchase, range(BUYERS)))


def assert_exactly_the_places_left_were_sold(results):
    statuses = sorted(status for status, _ in results)
    assert statuses == [201] * LEFT + [409] * (BUYERS - LEFT), results
    refused = [answer for status, answer in results if status == 409]
    assert {answer["reason"] for answer in refused} == {"sold-out"}


def test_the_last_places_of_a_day_go_to_five_of_sixteen_buyers(tmp_path, config_text):
    capacity = 8
    config_text += f"[server]\nthreads = {BUYERS}\n[capacity]\ngeneral_per_day = {capacity}\n"
    day = open_days(config_text, 1)[0]
    payload = {"ticketType": "general", "ticketDate": day}
    with running_server(tmp_path, config_text) as server:
        for number in range(capacity - LEFT):
            assert server.request("POST", TICKETS, {**payload, "email": f"early.{number}@"
                                  "example.org"}, VISITOR)[0] == 201
        results = buy_at_once([server], payload)
        log = server.log()
    assert_exactly_the_places_left_were_sold(results)
    db_path = str(tmp_path / "museum.sqlite3")
    assert query(db_path, "SELECT count(*) FROM tickets") == [(capacity,)]
    assert query(db_path, "SELECT taken FROM general_places WHERE date = ?", day) == [
        (capacity,)]
    assert "Traceback" not in log


def test_the_last_places_of_an_event_go_to_five_across_two_instances(
        tmp_path, config_text, postgres_url):
    import psycopg

    config_text += f"[server]\nthreads = {BUYERS}\n"
    day = (datetime.now(timezone.utc).date() + timedelta(days=30)).isoformat()
    with running_instances(tmp_path, config_text, postgres_url, 2) as servers:
        status, _, answer = servers[0].request("POST", "/v1.1/special-events", {
            "name": "Small tour", "location": "Crypt", "eventDescription": "Twelve at most.",
            "dates": [day], "price": 10, "capacity": 12}, ADMIN)
        assert status == 201
        event_id = json.loads(answer)["eventId"]
        payload = {"ticketType": "event", "eventId": event_id, "ticketDate": day}
        for number in range(12 - LEFT):
            assert servers[number % 2].request("POST", TICKETS, {
                **payload, "email": f"early.{number}@example.org"}, VISITOR)[0] == 201
        results = buy_at_once(servers, payload)
        logs = [server.log() for server in servers]
    assert_exactly_the_places_left_were_sold(results)
    assert {answer["eventId"] for status, answer in results if status == 409} == {event_id}
    with psycopg.connect(postgres_url) as conn:
        assert conn.execute("SELECT count(*) FROM tickets WHERE event_id = %s",
                            (event_id,)).fetchone()[0] == 12
        assert conn.execute("SELECT taken FROM event_places WHERE event_id = %s",
                            (event_id,)).fetchone()[0] == 12
    assert not [log for log in logs if "Traceback" in log]


SLOT_PLACES = 8
TIMED_ENTRY = (f"[server]\nthreads = {BUYERS}\n[hours]\nslot_minutes = 60\n"
               f"[capacity]\ngeneral_per_slot = {SLOT_PLACES}\n")


def first_slot(config_text):
    """The first entry slot of the first open day after today: (day, time)."""
    day = open_days(config_text, 1)[0]
    return day, museum.parse_config(config_text).schedule.slots_on(date.fromisoformat(day))[0]


def sell_the_last_places_of_a_slot(servers, day, slot):
    """Sell all but LEFT places of the slot, then let BUYERS buyers at once at the rest;
    assert five got a ticket and the others a sold-out naming the slot."""
    payload = {"ticketType": "general", "ticketDate": day, "entryTime": slot}
    for number in range(SLOT_PLACES - LEFT):
        assert servers[number % len(servers)].request("POST", TICKETS, {
            **payload, "email": f"early.{number}@example.org"}, VISITOR)[0] == 201
    results = buy_at_once(servers, payload)
    assert_exactly_the_places_left_were_sold(results)
    assert {(answer["date"], answer["entryTime"]) for status, answer in results
            if status == 409} == {(day, slot)}


def test_the_last_places_of_an_entry_slot_go_to_five_of_sixteen_buyers(tmp_path,
                                                                      config_text):
    config_text += TIMED_ENTRY
    day, slot = first_slot(config_text)
    with running_server(tmp_path, config_text) as server:
        sell_the_last_places_of_a_slot([server], day, slot)
        log = server.log()
    db_path = str(tmp_path / "museum.sqlite3")
    assert query(db_path, "SELECT count(*) FROM tickets WHERE entry_time = ?", slot) == [
        (SLOT_PLACES,)]
    assert query(db_path, "SELECT taken FROM slot_places WHERE date = ? AND entry_time = ?",
                 day, slot) == [(SLOT_PLACES,)]
    assert "Traceback" not in log


def test_the_last_places_of_an_entry_slot_go_to_five_across_two_instances(
        tmp_path, config_text, postgres_url):
    import psycopg

    config_text += TIMED_ENTRY
    day, slot = first_slot(config_text)
    with running_instances(tmp_path, config_text, postgres_url, 2) as servers:
        sell_the_last_places_of_a_slot(servers, day, slot)
        logs = [server.log() for server in servers]
    with psycopg.connect(postgres_url) as conn:
        assert conn.execute("SELECT count(*) FROM tickets WHERE entry_time = %s",
                            (slot,)).fetchone()[0] == SLOT_PLACES
        assert conn.execute("SELECT taken FROM slot_places WHERE date = %s AND "
                            "entry_time = %s", (day, slot)).fetchone()[0] == SLOT_PLACES
    assert not [log for log in logs if "Traceback" in log]


def test_counts_equal_the_tickets_after_a_kill_during_sales(tmp_path, config_text):
    """Buyers keep buying while the service is killed with SIGKILL: whatever was committed,
    each day's count of places, and of sales in the report, is its tickets."""
    config_text += "[server]\nthreads = 8\n[capacity]\ngeneral_per_day = 100000\n"
    days = open_days(config_text, 3)
    server = start_server(tmp_path, config_text)
    answered = []
    stop = threading.Event()

    def buyer(number):
        sale = 0
        while not stop.is_set():
            try:
                status, _, _ = server.request("POST", TICKETS, {
                    "ticketType": "general", "ticketDate": days[sale % 3],
                    "email": f"buyer.{number}.{sale}@example.org"}, VISITOR, timeout=5)
            except (OSError, http.client.HTTPException):  # the service is gone
                return
            answered.append(status)
            sale += 1

    assert server.request("GET", "/v1.1/museum-hours", headers=VISITOR)[0] == 200
    with ThreadPoolExecutor(8) as pool:
        buyers = [pool.submit(buyer, number) for number in range(8)]
        wait_until(lambda: answered.count(201) >= 60, timeout=60, what="sixty sales")
        server.process.kill()
        server.process.wait()
        stop.set()
        for running in buyers:
            running.result()

    db_path = str(tmp_path / "museum.sqlite3")
    tickets = dict(query(db_path, "SELECT date, count(*) FROM tickets GROUP BY date"))
    counts = dict(query(db_path, "SELECT date, taken FROM general_places"))
    report = dict(query(db_path, "SELECT date, sum(sold) FROM daily_sales GROUP BY date"))
    assert sum(tickets.values()) >= 60
    assert counts == report == tickets
