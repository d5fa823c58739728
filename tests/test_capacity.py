"""Capacity: no day and no event date is sold past its places, on every backend.

First the storage contract, over sqlite and PostgreSQL (the `backend` fixture
of test_storage), with a property test that the kept counts (general_places, event_places,
slot_places, daily_sales), and the places as the availability reads them, always equal the
tickets counted one by one; then the same rules read as HTTP exchanges under WebTest.
"""

import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import museum
import storage
from conftest import ADMIN, VISITOR, assert_problem
from test_storage import at_once, backend, event, event_ticket, ticket  # noqa: F401
from ticketing import EVENTS, OPEN_DAY, body, buy, create_event, query, ticket_count

# -- the store -----------------------------------------------------------------------------

@pytest.fixture
def seller(backend):
    """A store on the backend (`store` is the WebTest tests' sqlite store)."""
    return backend.open()



def kept_counts(backend):
    """{(event_id or None, date): places taken} as the store keeps them, and {("slot HH:MM",
    date): places taken} for the entry slots, zeros left out."""
    general = backend.rows("SELECT date, taken FROM general_places WHERE taken > 0")
    events = backend.rows("SELECT event_id, date, taken FROM event_places WHERE taken > 0")
    slots = backend.rows("SELECT entry_time, date, taken FROM slot_places WHERE taken > 0")
    return {**{(None, str(day)): taken for day, taken in general},
            **{(str(event_id), str(day)): taken for event_id, day, taken in events},
            **{(f"slot {entry_time}", str(day)): taken for entry_time, day, taken in slots}}


def available_counts(store):
    """The same counts as the availability reads them (`places_taken`), zeros left out: an
    event's only while it is listed."""
    taken = store.places_taken("2026-01-01", "2026-12-31")
    counts = {(None, day): count for day, count in taken["general"].items() if count}
    counts.update({(f"slot {entry_time}", day): count
                   for day, slots in taken["slots"].items()
                   for entry_time, count in slots.items() if count})
    counts.update({(place["eventId"], place["date"]): place["sold"]
                   for place in taken["events"] if place["sold"]})
    return counts


def counted_tickets(backend, listed_only=False):
    """The same counts, brute force: every ticket that holds a place (not void), one by one;
    with `listed_only`, those of cancelled events left out (the availability lists them no
    more)."""
    counts = {}
    for event_id, day, entry_time in backend.rows(
            "SELECT t.event_id, t.date, t.entry_time FROM tickets t "
            "LEFT JOIN events e ON e.id = t.event_id WHERE t.voided_at IS NULL"
            + (" AND e.cancelled IS NOT TRUE" if listed_only else "")):
        keys = [(event_id and str(event_id), str(day))]
        if entry_time is not None:
            keys.append((f"slot {entry_time}", str(day)))
        for key in keys:
            counts[key] = counts.get(key, 0) + 1
    return counts


# The sales report counted ticket by ticket.
SALES_BY_TICKET = """
    SELECT t.date, t.event_id, t.currency, count(*), count(t.voided_at), count(a.ticket_id),
           coalesce(sum(CASE WHEN t.voided_at IS NULL THEN t.price_minor END), 0)
    FROM tickets t LEFT JOIN admissions a ON a.ticket_id = t.id
    GROUP BY t.date, t.event_id, t.currency"""


def counted_sales(backend):
    return {(str(day), event_id and str(event_id), currency): (sold, void, admitted, revenue)
            for day, event_id, currency, sold, void, admitted, revenue
            in backend.rows(SALES_BY_TICKET)}


def kept_sales(seller):
    return {(row["date"], row["eventId"], row["currency"]):
            (row["sold"], row["void"], row["admitted"], storage.minor_units(row["revenue"]))
            for row in seller.sales("2026-01-01", "2026-12-31")}


def test_the_report_counts_of_tickets_sold_before_are_made_by_the_migration(
        backend, monkeypatch):
    from test_storage import first_step_mentioning

    every_step = backend.store_class.MIGRATIONS
    before = first_step_mentioning(every_step, "CREATE TABLE daily_sales")
    monkeypatch.setattr(backend.store_class, "MIGRATIONS", every_step[:before])
    backend.open()
    for number, (price, voided) in enumerate([(850, None), (850, "2026-11-30T10:00:00Z"),
                                              (None, None)]):
        backend.rows(
            f"INSERT INTO tickets (id, type, date, confirmation_code, email, price_minor, "
            f"currency, voided_at) VALUES ('{uuid.uuid4()}', 'general', '2026-12-01', "
            f"'code-{number}', 'a@example.org', {'NULL' if price is None else price}, "
            f"{'NULL' if price is None else repr('EUR')}, "
            f"{'NULL' if voided is None else repr(voided)})")
    monkeypatch.setattr(backend.store_class, "MIGRATIONS", every_step)
    migrated = backend.open()
    assert kept_sales(migrated) == counted_sales(backend) == {
        ("2026-12-01", None, "EUR"): (2, 1, 0, 850), ("2026-12-01", None, None): (1, 0, 0, 0)}


def test_general_entry_is_sold_up_to_its_capacity_and_no_further(seller, backend):
    for _ in range(3):
        seller.create_ticket(ticket(), general_capacity=3)
    with pytest.raises(storage.SoldOut) as raised:
        seller.create_ticket(ticket(), general_capacity=3)
    assert (raised.value.date, raised.value.event_id) == ("2026-12-01", None)
    assert backend.rows("SELECT count(*) FROM tickets") == [(3,)]
    seller.create_ticket(ticket(ticketDate="2026-12-02"), general_capacity=3)  # another day
    seller.create_ticket(ticket(), general_capacity=4)  # a larger capacity that day
    assert kept_counts(backend) == counted_tickets(backend) == {
        (None, "2026-12-01"): 4, (None, "2026-12-02"): 1}


def test_an_entry_slot_is_sold_up_to_its_capacity_and_no_further(seller, backend):
    for _ in range(2):
        seller.create_ticket(ticket(entryTime="10:00"), slot_capacity=2)
    with pytest.raises(storage.SoldOut) as raised:
        seller.create_ticket(ticket(entryTime="10:00"), general_capacity=10, slot_capacity=2)
    assert (raised.value.date, raised.value.event_id, raised.value.entry_time) == (
        "2026-12-01", None, "10:00")
    assert backend.rows("SELECT count(*) FROM tickets") == [(2,)]
    sold, _ = seller.create_ticket(ticket(entryTime="10:30"), slot_capacity=2)  # another slot
    assert seller.get_ticket(sold["ticketId"])["entryTime"] == sold["entryTime"] == "10:30"
    seller.create_ticket(ticket(ticketDate="2026-12-02", entryTime="10:00"), slot_capacity=2)
    # The day's own capacity still holds, whatever slot is asked for.
    with pytest.raises(storage.SoldOut) as raised:
        seller.create_ticket(ticket(entryTime="11:00"), general_capacity=3, slot_capacity=2)
    assert raised.value.entry_time is None
    assert kept_counts(backend) == counted_tickets(backend) == {
        (None, "2026-12-01"): 3, ("slot 10:00", "2026-12-01"): 2,
        ("slot 10:30", "2026-12-01"): 1, (None, "2026-12-02"): 1,
        ("slot 10:00", "2026-12-02"): 1}
    assert seller.places_taken("2026-12-01", "2026-12-02")["slots"] == {
        "2026-12-01": {"10:00": 2, "10:30": 1}, "2026-12-02": {"10:00": 1}}


def test_a_voided_timed_ticket_gives_its_slot_place_back(seller, backend):
    sold, _ = seller.create_ticket(ticket(entryTime="10:00"), slot_capacity=1)
    with pytest.raises(storage.SoldOut):
        seller.create_ticket(ticket(entryTime="10:00"), slot_capacity=1)
    assert seller.void_ticket(sold["ticketId"], "2026-11-30T10:00:00Z") is True
    assert seller.void_ticket(sold["ticketId"], "2026-11-30T10:01:00Z") is False
    seller.create_ticket(ticket(entryTime="10:00"), slot_capacity=1)
    assert kept_counts(backend) == counted_tickets(backend) == available_counts(seller) == {
        (None, "2026-12-01"): 1, ("slot 10:00", "2026-12-01"): 1}


def test_an_event_is_sold_up_to_its_capacity_on_each_date(seller, backend):
    created = seller.create_event(event(capacity=2))
    assert seller.get_event(created["eventId"])["capacity"] == 2
    for _ in range(2):
        seller.create_ticket(event_ticket(created["eventId"]))
    with pytest.raises(storage.SoldOut) as raised:
        seller.create_ticket(event_ticket(created["eventId"]))
    assert (raised.value.date, raised.value.event_id) == ("2026-12-01", created["eventId"])
    seller.create_ticket(event_ticket(created["eventId"], ticketDate="2026-12-05"))
    # General entry has its own places: a full event leaves the day's general entry free.
    seller.create_ticket(ticket(), general_capacity=1)
    assert kept_counts(backend) == counted_tickets(backend)


def test_an_event_without_capacity_is_unlimited_and_shows_none(seller):
    created = seller.create_event(event())
    assert "capacity" not in seller.get_event(created["eventId"])
    for _ in range(5):
        seller.create_ticket(event_ticket(created["eventId"]))


def test_a_sold_out_sale_writes_nothing_and_frees_its_key(seller, backend):
    seller.create_ticket(ticket(), general_capacity=1)
    with pytest.raises(storage.SoldOut):
        seller.create_ticket(ticket(), ("visitor", "key-1", "body-a"), general_capacity=1)
    assert backend.rows("SELECT count(*) FROM idempotency_keys") == [(0,)]
    assert kept_counts(backend) == {(None, "2026-12-01"): 1}


def test_a_ticket_sold_under_a_key_is_replayed_after_the_day_sells_out(seller):
    sold, _ = seller.create_ticket(ticket(), ("visitor", "key-1", "body-a"), general_capacity=1)
    replayed, created = seller.create_ticket(ticket(), ("visitor", "key-1", "body-a"),
                                            general_capacity=1)
    assert (replayed, created) == (sold, False)


def test_a_capacity_below_the_tickets_sold_is_refused_naming_each_date(seller):
    created = seller.create_event(event(capacity=10))
    for day in ("2026-12-01", "2026-12-01", "2026-12-01", "2026-12-05", "2026-12-05"):
        seller.create_ticket(event_ticket(created["eventId"], ticketDate=day))
    with pytest.raises(storage.CapacityBelowSold) as raised:
        seller.update_event(created["eventId"], {"capacity": 1, "name": "Renamed"})
    assert raised.value.sold == {"2026-12-01": 3, "2026-12-05": 2}
    assert seller.get_event(created["eventId"]) == created
    assert seller.update_event(created["eventId"], {"capacity": 3})["capacity"] == 3
    with pytest.raises(storage.SoldOut):
        seller.create_ticket(event_ticket(created["eventId"]))


def test_a_capacity_removed_makes_the_event_unlimited_again(seller):
    created = seller.create_event(event(capacity=1))
    seller.create_ticket(event_ticket(created["eventId"]))
    assert "capacity" not in seller.update_event(created["eventId"], {"capacity": None})
    assert "capacity" not in seller.get_event(created["eventId"])
    seller.create_ticket(event_ticket(created["eventId"]))


def test_the_last_places_are_sold_once_across_instances(backend):
    """Sixteen sales at once on two instances for the last five places of a day and of an
    event date: exactly five of each."""
    instances = [backend.open(), backend.open()]
    created = instances[0].create_event(event(capacity=10))
    for _ in range(5):
        instances[0].create_ticket(ticket(), general_capacity=10)
        instances[0].create_ticket(event_ticket(created["eventId"]))

    def sell(sale):
        try:
            return instances[sale % 2].create_ticket(sale_of(sale), general_capacity=10)[1]
        except storage.SoldOut:
            return False

    for sale_of in (lambda _: ticket(), lambda _: event_ticket(created["eventId"])):
        assert sum(at_once(16, sell)) == 5
    assert kept_counts(backend) == counted_tickets(backend) == available_counts(
        instances[1]) == {(None, "2026-12-01"): 10, (created["eventId"], "2026-12-01"): 10}


def test_a_voided_ticket_gives_its_place_back_once(seller, backend):
    created = seller.create_event(event(capacity=1))
    general, _ = seller.create_ticket(ticket(), general_capacity=1)
    entry, _ = seller.create_ticket(event_ticket(created["eventId"]))
    with pytest.raises(storage.SoldOut):
        seller.create_ticket(ticket(), general_capacity=1)
    assert seller.void_ticket(general["ticketId"], "2026-11-30T10:00:00Z") is True
    assert seller.void_ticket(general["ticketId"], "2026-11-30T10:05:00Z") is False
    assert seller.get_ticket(general["ticketId"])["voidedAt"] == "2026-11-30T10:00:00Z"
    seller.void_ticket(entry["ticketId"], "2026-11-30T10:00:00Z")
    seller.create_ticket(ticket(), general_capacity=1)
    seller.create_ticket(event_ticket(created["eventId"]))
    assert kept_counts(backend) == counted_tickets(backend) == available_counts(seller) == {
        (None, "2026-12-01"): 1, (created["eventId"], "2026-12-01"): 1}
    assert backend.rows("SELECT count(*) FROM tickets") == [(4,)]  # the void ones stay
    with pytest.raises(storage.NotFound):
        seller.void_ticket(str(uuid.uuid4()), "2026-11-30T10:00:00Z")


def test_the_door_summary_leaves_out_void_tickets(seller):
    sold = [seller.create_ticket(ticket())[0] for _ in range(3)]
    seller.admit(sold[0]["ticketId"], "gate", "2026-12-01T09:00:00Z")
    seller.admit(sold[1]["ticketId"], "gate", "2026-12-01T09:01:00Z")
    seller.void_ticket(sold[1]["ticketId"], "2026-12-01T09:02:00Z")
    seller.void_ticket(sold[2]["ticketId"], "2026-12-01T09:03:00Z")
    summary = seller.door_summary("2026-12-01")
    assert (summary["sold"]["general"], summary["admitted"]["general"]) == (1, 1)


def test_two_voids_at_once_across_instances_give_one_place_back(backend):
    instances = [backend.open(), backend.open()]
    sold = [instances[0].create_ticket(ticket())[0] for _ in range(2)]
    voided = at_once(8, lambda n: instances[n % 2].void_ticket(sold[0]["ticketId"],
                                                               "2026-11-30T10:00:00Z"))
    assert voided.count(True) == 1
    assert kept_counts(backend) == counted_tickets(backend) == {(None, "2026-12-01"): 1}


def test_places_taken_are_read_from_the_counts_of_a_window(seller):
    limited = seller.create_event(event(name="Limited", capacity=2))
    gone = seller.create_event(event(name="Gone"))
    for _ in range(2):
        seller.create_ticket(ticket())
    seller.create_ticket(ticket(ticketDate="2026-12-09"))
    seller.create_ticket(event_ticket(limited["eventId"], ticketDate="2026-12-05"))
    seller.create_ticket(event_ticket(gone["eventId"]))
    seller.cancel_event(gone["eventId"])
    assert seller.places_taken("2026-12-01", "2026-12-05") == {
        "general": {"2026-12-01": 2}, "slots": {},
        "events": [
            {"date": "2026-12-01", "eventId": limited["eventId"], "name": "Limited",
             "capacity": 2, "sold": 0},
            {"date": "2026-12-05", "eventId": limited["eventId"], "name": "Limited",
             "capacity": 2, "sold": 1}]}


def test_an_events_tickets_are_listed_in_pages_with_their_total(seller):
    created = seller.create_event(event())
    sold = [seller.create_ticket(event_ticket(created["eventId"], ticketDate=day))[0]
            for day in ("2026-12-05", "2026-12-01", "2026-12-05")]
    seller.create_ticket(ticket())
    seller.cancel_event(created["eventId"])
    page, total = seller.list_tickets(created["eventId"], None, 1, 2)
    assert total == 3
    # After the one of 1 December, both of the 5th (within a millisecond, in either order).
    assert {each["ticketId"] for each in page} == {sold[0]["ticketId"], sold[2]["ticketId"]}
    assert page[0]["cancelled"] and page[0]["email"] == "visitor@example.org"
    assert seller.list_tickets(created["eventId"], "2026-12-01", 0, 10)[1] == 1
    with pytest.raises(storage.NotFound):
        seller.list_tickets(str(uuid.uuid4()), None, 0, 10)


def test_the_sales_report_counts_sold_void_admitted_and_revenue(seller):
    later = seller.create_event(event(name="Zoo night", price=10))
    early = seller.create_event(event(name="Art night", price=2.5))
    general = [seller.create_ticket(ticket(price=8.5))[0] for _ in range(2)]
    seller.void_ticket(general[0]["ticketId"], "2026-11-30T10:00:00Z")
    seller.admit(general[1]["ticketId"], "gate", "2026-12-01T09:00:00Z")
    for each in (later, early, early):
        seller.create_ticket(event_ticket(each["eventId"]))
    seller.update_event(early["eventId"], {"price": 99})  # sold tickets keep their price
    assert seller.sales("2026-12-01", "2026-12-01") == [
        {"date": "2026-12-01", "eventId": None, "eventName": None, "currency": "EUR",
         "sold": 2, "void": 1, "admitted": 1, "revenue": 8.5, "doubleEntries": 0},
        {"date": "2026-12-01", "eventId": early["eventId"], "eventName": "Art night",
         "currency": "EUR", "sold": 2, "void": 0, "admitted": 0, "revenue": 5,
         "doubleEntries": 0},
        {"date": "2026-12-01", "eventId": later["eventId"], "eventName": "Zoo night",
         "currency": "EUR", "sold": 1, "void": 0, "admitted": 0, "revenue": 10,
         "doubleEntries": 0}]
    assert seller.sales("2026-12-02", "2026-12-31") == []


DAYS = ["2026-12-01", "2026-12-05", "2026-12-06"]
SLOTS = ["10:00", "10:30"]
operations = st.lists(st.one_of(
    st.tuples(st.just("general"), st.sampled_from(DAYS), st.integers(1, 4)),
    st.tuples(st.just("timed"), st.sampled_from(DAYS), st.sampled_from(SLOTS),
              st.integers(1, 4), st.integers(1, 2)),
    st.tuples(st.just("event"), st.integers(0, 2), st.sampled_from(DAYS)),
    st.tuples(st.just("cancel"), st.integers(0, 2)),
    st.tuples(st.just("void"), st.integers(0, 30)),
    st.tuples(st.just("admit"), st.integers(0, 30)),
    st.tuples(st.just("undo"), st.integers(0, 30)),
    st.tuples(st.just("patch"), st.integers(0, 2), st.lists(st.sampled_from(DAYS), min_size=1,
                                                            unique=True), st.integers(1, 4)),
), max_size=25)


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=operations)
def test_the_kept_counts_equal_the_tickets_after_any_mix_of_changes(backend, steps):
    """Sales (timed ones, with their entry slots, too), sold-out sales, voids, admissions
    and their undoing, cancellations and changes of dates and capacity, refused or not, in
    any order: the places (of days, slots and event dates) and the sales report kept with
    each change are the tickets counted one by one.
    The database grows over the examples, so each one starts from the others' state."""
    opened = backend.open()
    events = [opened.create_event(event(dates=DAYS, capacity=3)) for _ in range(3)]
    sold = []
    for step in steps:
        try:
            if step[0] == "general":
                sold.append(opened.create_ticket(ticket(ticketDate=step[1]),
                                                 general_capacity=step[2])[0])
            elif step[0] == "timed":
                sold.append(opened.create_ticket(ticket(ticketDate=step[1], entryTime=step[2]),
                                                 general_capacity=step[3],
                                                 slot_capacity=step[4])[0])
            elif step[0] == "event":
                sold.append(opened.create_ticket(event_ticket(events[step[1]]["eventId"],
                                                              ticketDate=step[2]))[0])
            elif step[0] in ("void", "admit", "undo"):
                if not sold:
                    continue
                # Any ticket sold, whatever happened to it before.
                ticket_id = sold[step[1] % len(sold)]["ticketId"]
                if step[0] == "void":
                    opened.void_ticket(ticket_id, "2026-11-30T10:00:00Z")
                elif step[0] == "admit":
                    opened.admit(ticket_id, "gate", "2026-12-01T09:00:00Z")
                else:
                    opened.undo_admission(ticket_id, "admin", "2026-12-01T09:30:00Z")
            elif step[0] == "cancel":
                opened.cancel_event(events[step[1]]["eventId"])
            else:
                opened.update_event(events[step[1]]["eventId"],
                                    {"dates": sorted(step[2]), "capacity": step[3]})
        except (storage.SoldOut, storage.NotFound, storage.DateNotOffered, storage.DatesSold,
                storage.CapacityBelowSold):
            pass
    assert kept_counts(backend) == counted_tickets(backend)
    assert available_counts(opened) == counted_tickets(backend, listed_only=True)
    assert kept_sales(opened) == counted_sales(backend)
    for each in events:
        capacity = backend.rows(f"SELECT capacity FROM events WHERE id = '{each['eventId']}'")
        taken = [count for (event_id, _), count in kept_counts(backend).items()
                 if event_id == each["eventId"]]
        assert all(count <= capacity[0][0] for count in taken)


# -- over HTTP -------------------------------------------------------------------------------

@pytest.fixture
def limited(make_client, config_text):
    """A client of a museum selling 2 general entries a day, and 1 on 2026-11-25."""
    return make_client(museum.parse_config(
        config_text + "[capacity]\ngeneral_per_day = 2\n[capacity_dates]\n2026-11-25 = 1\n"))


def test_general_entry_sells_out_with_a_problem_naming_the_day(limited, db_path):
    for _ in range(2):
        buy(limited, body(), headers=VISITOR)
    problem = assert_problem(buy(limited, body(), status=409, headers=VISITOR), 409)
    assert (problem["reason"], problem["date"]) == ("sold-out", OPEN_DAY)
    assert "eventId" not in problem and "general entry" in problem["detail"]
    assert ticket_count(db_path) == 2
    buy(limited, body(ticketDate="2026-11-25"))
    assert_problem(buy(limited, body(ticketDate="2026-11-25"), status=409), 409)


def test_a_replay_after_the_day_sold_out_is_still_answered_201(limited):
    first = buy(limited, body(), key="order-1").json
    buy(limited, body())
    assert_problem(buy(limited, body(), status=409), 409)
    assert buy(limited, body(), key="order-1", status=201).json == first


def test_an_event_sells_out_naming_the_event_and_date(client, db_path):
    event_id = client.post_json(EVENTS, {**event_fields(), "capacity": 1}, headers=ADMIN,
                                status=201).json["eventId"]
    buy(client, body("event", eventId=event_id))
    problem = assert_problem(buy(client, body("event", eventId=event_id), status=409), 409)
    assert problem["reason"] == "sold-out"
    assert (problem["date"], problem["eventId"]) == ("2026-12-05", event_id)
    assert ticket_count(db_path) == 1


def event_fields(**changes):
    return {"name": "Tour", "location": "Hall", "eventDescription": "Small groups.",
            "dates": ["2026-12-05", "2026-12-06"], "price": 10, **changes}


def test_capacity_is_returned_when_set_and_absent_otherwise(client):
    unlimited = create_event(client)
    assert "capacity" not in unlimited
    limited = client.post_json(EVENTS, event_fields(capacity=20), headers=ADMIN,
                               status=201).json
    assert limited["capacity"] == 20
    path = f"{EVENTS}/{limited['eventId']}"
    assert client.get(path, headers=VISITOR, status=200).json["capacity"] == 20
    assert client.patch_json(path, {"capacity": 1_000_000}, headers=ADMIN,
                             status=200).json["capacity"] == 1_000_000
    patched = client.patch_json(f"{EVENTS}/{unlimited['eventId']}", {"capacity": 5},
                                headers=ADMIN, status=200).json
    assert patched["capacity"] == 5


BAD_CAPACITIES = [0, -1, 1_000_001, "5", True, 2.5, [5], None, 10**400]


# A PATCH with null removes the capacity instead (test_timed_entry).
@pytest.mark.parametrize("method, value", [("post", value) for value in BAD_CAPACITIES] + [
    ("patch", value) for value in BAD_CAPACITIES if value is not None])
def test_a_capacity_out_of_range_is_refused_naming_it(client, db_path, method, value):
    if method == "post":
        res = client.post_json(EVENTS, event_fields(capacity=value), headers=ADMIN, status=400)
    else:
        path = f"{EVENTS}/{create_event(client)['eventId']}"
        res = client.patch_json(path, {"capacity": value}, headers=ADMIN, status=400)
    assert_problem(res, 400, "capacity")
    assert query(db_path, "SELECT count(*) FROM events WHERE capacity IS NOT NULL") == [(0,)]


def test_lowering_capacity_below_the_tickets_sold_is_a_409_naming_each_date(client):
    created = client.post_json(EVENTS, event_fields(capacity=5), headers=ADMIN,
                               status=201).json
    for day in ("2026-12-05", "2026-12-05", "2026-12-06", "2026-12-06", "2026-12-06"):
        buy(client, body("event", eventId=created["eventId"], ticketDate=day))
    path = f"{EVENTS}/{created['eventId']}"
    problem = assert_problem(client.patch_json(path, {"capacity": 1, "price": 99},
                                               headers=ADMIN, status=409), 409, "capacity")
    assert [error["message"] for error in problem["errors"]] == [
        "must be at least 2: 2 ticket(s) sold for 2026-12-05",
        "must be at least 3: 3 ticket(s) sold for 2026-12-06"]
    assert client.get(path, headers=ADMIN, status=200).json == created
    assert client.patch_json(path, {"capacity": 3}, headers=ADMIN, status=200)


def test_concurrent_purchases_in_one_process_never_oversell(limited, db_path):
    """The app shared by eight threads: the day's last place goes to one of them."""
    buy(limited, body())
    # Signed in once first: eight first logins of one name at once are turned away (429).
    limited.get("/v1.1/museum-hours", headers=VISITOR, status=200)
    statuses = at_once(8, lambda _: limited.post_json(
        "/v1.1/tickets", body(), headers=VISITOR, expect_errors=True).status_int)
    assert sorted(statuses) == [201] + [409] * 7
    assert ticket_count(db_path) == 2
